/**
 * Broken object-level authorization: a caller bound only in organization A gets the same 403 for every operation
 * on organization B's resources as for uids that do not exist, and lists reveal nothing of B.
 */
import { Advisories, GroupInvites, IdentityProviders, Principal, Repos, Role, Roles, Tags } from "@arbor/core"
import { AccountAssociations } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, member, testServer } from "./support.js"

const viewer = Role.builtInByName("viewer")!.uid

describe("object-level authorization", () => {
  it.scopedLive("every operation on another organization's uids, existing or not, is the same 403", () =>
    Effect.gen(function*() {
      const a = yield* member("alpha")
      const b = yield* member("bravo")
      const system = Principal.system
      // One of everything in B.
      const groupB =
        (yield* call("POST", `/iam/v2beta1/groups/${b.org}`, { token: b.token, body: { name: "team" } })).body.uid
      const identityB = b.identity
      const roleB =
        (yield* (yield* Roles.Roles).create(system, b.org, { name: "r", capabilities: ["groups.list"] })).uid
      const bindingB =
        (yield* call("GET", `/iam/v2beta1/roleBindings?uidp.children_of=${b.org}`, { token: b.token })).body
          .roleBindings[0].uid
      const providerB = (yield* (yield* IdentityProviders.IdentityProviders).create(system, b.org, {
        name: "sso",
        defaultRole: viewer,
        oidc: { issuer: "https://login.example.com", clientId: "c" }
      })).uid
      yield* (yield* AccountAssociations.AccountAssociations).create(system, groupB, { name: "aws" })
      const inviteB = (yield* (yield* GroupInvites.GroupInvites).create(system, b.org, { roleUid: viewer })).uid
      const repoB = (yield* (yield* Repos.Repos).upsert(system, b.org, { name: "app" })).uid
      const tagB = (yield* (yield* Tags.Tags).upsert(system, repoB, { name: "v1" })).uid
      yield* (yield* Advisories.Advisories).importDocuments(system, b.org, [{
        source: "x.advisories.yaml",
        text:
          "schema-version: 2.0.2\npackage: {name: x}\nadvisories:\n  - id: CGA-2222-3333-4444\n    events:\n      - {timestamp: 2024-01-01T00:00:00Z, type: fixed, data: {fixed-version: 1-r0}}\n"
      }])
      const advisoryB = (yield* (yield* Advisories.Advisories).list(system, {})).items[0]!.uid

      const missing = (parent: string) => `${parent}/0123456789abcdef`
      const bodies: Record<string, unknown> = {
        groups: { name: "x" },
        identities: { name: "x", claimMatch: { issuer: "https://i.example", subject: "s" } },
        roles: { name: "x", capabilities: ["groups.list"] },
        roleBindings: { identityUid: a.identity, roleUid: viewer },
        rolebindings: { identityUid: a.identity, roleUid: viewer },
        identityProviders: { name: "x", defaultRole: viewer, oidc: { issuer: "https://i.example", clientId: "c" } },
        accountAssociations: { name: "x" },
        groupInvites: { roleUid: viewer }
      }
      const targets: ReadonlyArray<readonly [string, string, string, ReadonlyArray<string>]> = [
        ["/iam/v2beta1", "groups", groupB, ["GET", "POST", "PATCH", "DELETE"]],
        ["/iam/v2beta1", "identities", identityB, ["GET", "POST", "PATCH", "DELETE"]],
        ["/iam/v2beta1", "roles", roleB, ["GET", "POST", "PATCH", "DELETE"]],
        ["/iam/v2beta1", "roleBindings", bindingB, ["GET", "POST", "PATCH", "DELETE"]],
        ["/iam/v2beta1", "identityProviders", providerB, ["GET", "POST", "PATCH", "DELETE"]],
        ["/iam/v2beta1", "accountAssociations", groupB, ["GET", "POST", "PATCH", "DELETE"]],
        ["/iam/v2beta1", "groupInvites", inviteB, ["GET", "POST", "PATCH", "DELETE"]],
        ["/registry/v2beta1", "repos", repoB, ["GET"]],
        ["/registry/v2beta1", "tags", tagB, ["GET"]],
        ["/vulnerabilities/v2beta1", "advisories", advisoryB, ["GET"]],
        ["/iam/v1", "groups", groupB, ["POST", "PUT", "DELETE"]],
        ["/iam/v1", "identities", identityB, ["POST", "PUT", "DELETE"]],
        ["/iam/v1", "rolebindings", bindingB, ["POST", "PUT", "DELETE"]],
        ["/registry/v1", "repos", repoB, ["POST", "PUT", "DELETE"]],
        ["/registry/v1", "tags", tagB, ["POST", "PUT", "DELETE"]]
      ]
      let checked = 0
      for (const [prefix, plural, existing, methods] of targets) {
        for (const method of methods) {
          const body = method === "GET" || method === "DELETE" ? undefined : bodies[plural] ?? { name: "x" }
          const attempt = (uid: string) =>
            call(method, `${prefix}/${plural}/${uid}`, { token: a.token, ...(body === undefined ? {} : { body }) })
          const onExisting = yield* attempt(existing)
          const onMissing = yield* attempt(missing(existing))
          const where = `${method} ${prefix}/${plural}`
          assert.strictEqual(onExisting.status, 403, `${where}: ${onExisting.text}`)
          assert.strictEqual(onMissing.status, 403, `${where} (missing): ${onMissing.text}`)
          const masked = (text: string, uid: string) => text.split(uid).join("<uid>")
          assert.strictEqual(masked(onExisting.text, existing), masked(onMissing.text, missing(existing)), where)
          checked++
        }
      }
      assert.isAtLeast(checked, 40)

      // Lists show nothing of B, and count nothing of B.
      for (
        const [prefix, plural] of [
          ["/iam/v2beta1", "groups"],
          ["/iam/v2beta1", "identities"],
          ["/iam/v2beta1", "roleBindings"],
          ["/registry/v2beta1", "tags"],
          ["/vulnerabilities/v2beta1", "advisories"]
        ]
      ) {
        const listed = yield* call("GET", `${prefix}/${plural}?uidp.descendants_of=${b.org}`, { token: a.token })
        assert.deepStrictEqual([listed.status, listed.body.totalCount, listed.body[plural!]], [200, "0", []], plural)
      }
      const v1 = yield* call("GET", `/iam/v1/groups?id=${groupB}`, { token: a.token })
      assert.deepStrictEqual(v1.body, { items: [] })
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("custom methods too, each sent a body it would refuse: permission is checked before the body is read", () =>
    Effect.gen(function*() {
      const a = yield* member("alpha")
      const b = yield* member("bravo")
      const system = Principal.system
      const providerB = (yield* (yield* IdentityProviders.IdentityProviders).create(system, b.org, {
        name: "sso",
        defaultRole: viewer,
        oidc: { issuer: "https://login.example.com", clientId: "c" }
      })).uid
      yield* (yield* AccountAssociations.AccountAssociations).create(system, b.org, { name: "aws" })
      const repoB = (yield* (yield* Repos.Repos).upsert(system, b.org, { name: "app" })).uid
      const missing = (uid: string) => `${uid}/0123456789abcdef`
      const targets: ReadonlyArray<readonly [string, (uid: string) => string, string, unknown]> = [
        ["PATCH", (uid) => `/registry/v2beta1/repos/${uid}/readme`, repoB, { content: 5 }],
        ["POST", (uid) => `/iam/v2beta1/accountAssociations/${uid}:checkAccountAssociation`, b.org, {
          providerType: 5
        }],
        ["POST", (uid) => `/iam/v2beta1/identityProviders/${uid}:generateScimToken`, providerB, { ttl: 5 }],
        ["POST", (uid) => `/iam/v2beta1/identityProviders/${uid}:setScimEnabled`, providerB, { enabled: "yes" }],
        ["POST", (uid) => `/iam/v2beta1/eligibilities/${uid}`, b.org, { roleUid: 5 }],
        ["POST", (uid) => `/iam/v2beta1/terms/${uid}`, b.org, { documentIds: 5 }],
        ["POST", (uid) => `/events/v2beta1/subscriptions/${uid}`, b.org, { sink: 5 }],
        ["POST", (uid) => `/iam/v2beta1/groups/${uid}:apply`, b.org, { document: 5 }]
      ]
      const answers: Array<string> = []
      for (const [method, path, existing, body] of targets) {
        for (const uid of [existing, missing(existing)]) {
          const reply = yield* call(method, path(uid), { token: a.token, body })
          answers.push(`${method} ${path("<uid>")}${uid === existing ? "" : " (missing)"}: ${reply.status}`)
        }
      }
      assert.deepStrictEqual(answers.filter((answer) => !answer.endsWith(": 403")), [])
      // Its own organization's owner is told what is wrong with the body.
      const own = yield* call("PATCH", `/registry/v2beta1/repos/${repoB}/readme`, {
        token: b.token,
        body: { content: 5 }
      })
      assert.deepStrictEqual([own.status, own.body.details[1].fieldViolations[0].field], [400, "content"], own.text)
    }).pipe(Effect.provide(testServer())))
})
