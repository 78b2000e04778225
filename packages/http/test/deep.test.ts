/**
 * Resources at any depth (docs/api.md §1, §3): every verb of every resource kind, twelve folders below an
 * organization, over v2 and v1, with the uid's slashes unescaped and as `%2F`; and the depth limit refused as
 * INVALID_ARGUMENT, never as an unknown route.
 */
import { Advisories, Group, Groups, Principal, Role } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, member, testServer } from "./support.js"

const viewer = Role.builtInByName("viewer")!.uid
const editor = Role.builtInByName("editor")!.uid

/** The two ways a uid travels in a path. */
const forms = {
  unescaped: (uid: string) => uid,
  escaped: (uid: string) => uid.replaceAll("/", "%2F")
} as const

const advisoryDocument =
  "schema-version: 2.0.2\npackage: {name: deep}\nadvisories:\n  - id: CGA-2222-3333-5555\n    events:\n      - {timestamp: 2024-01-01T00:00:00Z, type: fixed, data: {fixed-version: 1-r0}}\n"

describe("resources at any depth", () => {
  it.scopedLive("every verb of every kind, twelve folders down, on v2 and v1, in both uid forms", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      /** A call that must answer `status`; its body. */
      const expect = (status: number, method: string, path: string, body?: unknown) =>
        Effect.map(call(method, path, { token, ...(body === undefined ? {} : { body }) }), (reply) => {
          assert.strictEqual(reply.status, status, `${method} ${path}: ${reply.text}`)
          return reply.body
        })

      // Twelve folders, created over REST, the parent's uid in each form in turn.
      let deep = org
      for (let level = 1; level <= 12; level++) {
        const form = level % 2 === 0 ? forms.escaped : forms.unescaped
        deep = (yield* expect(200, "POST", `/iam/v2beta1/groups/${form(deep)}`, { name: `level ${level}` })).uid
      }
      assert.strictEqual(deep.split("/").length, 13)
      assert.isAbove(deep.length, 200)

      for (const [formName, form] of Object.entries(forms)) {
        const at = (prefix: string, plural: string, uid: string) => `${prefix}/${plural}/${form(uid)}`
        const iam = (plural: string, uid: string) => at("/iam/v2beta1", plural, uid)
        /** Create in `deep`, get, update and list: the created resource's uid. */
        const cycle = (plural: string, body: object, patch: object, check: (updated: any) => void) =>
          Effect.gen(function*() {
            const created = yield* expect(200, "POST", iam(plural, deep), body)
            assert.strictEqual(created.uid.startsWith(deep), true, plural)
            assert.strictEqual((yield* expect(200, "GET", iam(plural, created.uid))).uid, created.uid, plural)
            check(yield* expect(200, "PATCH", iam(plural, created.uid), patch))
            const listed = yield* expect(200, "GET", `/iam/v2beta1/${plural}?uidp.ids=${created.uid}`)
            assert.deepStrictEqual(listed[plural].map((item: any) => item.uid), [created.uid], plural)
            return created.uid as string
          })
        const described = (updated: any) => assert.strictEqual(updated.description, "changed")
        const change = { description: "changed" }

        const folder = yield* cycle("groups", { name: `folder ${formName}` }, change, described)
        const identity = yield* cycle(
          "identities",
          { name: `deployer ${formName}`, claimMatch: { issuer: "https://issuer.example.com", subject: formName } },
          change,
          described
        )
        const role = yield* cycle(
          "roles",
          { name: `reader ${formName}`, capabilities: ["groups.list"] },
          change,
          described
        )
        const binding = yield* cycle(
          "roleBindings",
          { identityUid: identity, roleUid: viewer },
          { roleUid: role },
          (updated) => assert.strictEqual(updated.role.uid, role)
        )
        const provider = yield* cycle(
          "identityProviders",
          {
            name: `sso ${formName}`,
            defaultRole: viewer,
            oidc: { issuer: "https://login.example.com", clientId: "c" }
          },
          change,
          described
        )
        const association = yield* cycle("accountAssociations", { name: "aws" }, change, described)
        assert.strictEqual(association, deep)
        const invite = yield* cycle(
          "groupInvites",
          { roleUid: viewer },
          { singleUse: true },
          (updated) => assert.strictEqual(updated.singleUse, true)
        )

        // The registry: written through v1, read through v2; advisories read through v2.
        const repo = (yield* expect(200, "POST", at("/registry/v1", "repos", deep), { name: `app-${formName}` })).id
        const tag = (yield* expect(200, "POST", at("/registry/v1", "tags", repo), { name: "v1" })).id
        assert.strictEqual((yield* expect(200, "GET", at("/registry/v2beta1", "repos", repo))).uid, repo)
        assert.strictEqual((yield* expect(200, "GET", at("/registry/v2beta1", "tags", tag))).uid, tag)
        yield* expect(200, "PUT", at("/registry/v1", "repos", repo), { name: `app-${formName}`, description: "d" })
        yield* expect(200, "PUT", at("/registry/v1", "tags", tag), { name: "v1", digest: `sha256:${"a".repeat(64)}` })
        yield* expect(200, "DELETE", at("/registry/v1", "tags", tag))
        yield* expect(200, "DELETE", at("/registry/v1", "repos", repo))
        yield* expect(404, "GET", at("/registry/v2beta1", "repos", repo))

        // v1's IAM surface: create, replace, list by id, delete.
        const v1 = (plural: string, uid: string) => at("/iam/v1", plural, uid)
        const v1Folder = (yield* expect(200, "POST", v1("groups", deep), { name: `v1 ${formName}` })).id
        assert.strictEqual(
          (yield* expect(200, "PUT", v1("groups", v1Folder), { name: `v1 ${formName}`, description: "d" })).description,
          "d"
        )
        assert.deepStrictEqual(
          (yield* expect(200, "GET", `/iam/v1/groups?id=${v1Folder}`)).items.map((g: any) => g.id),
          [v1Folder]
        )
        const v1Identity = (yield* expect(200, "POST", v1("identities", deep), {
          name: `v1 ${formName}`,
          claimMatch: { issuer: "https://issuer.example.com", subject: `v1 ${formName}` }
        })).id
        const v1Binding =
          (yield* expect(200, "POST", v1("rolebindings", deep), { identityUid: v1Identity, roleUid: viewer })).id
        yield* expect(200, "PUT", v1("rolebindings", v1Binding), { identityUid: v1Identity, roleUid: editor })
        yield* expect(200, "DELETE", v1("rolebindings", v1Binding))
        yield* expect(200, "PUT", v1("identities", v1Identity), {
          name: `v1 ${formName}`,
          description: "d",
          claimMatch: { issuer: "https://issuer.example.com", subject: `v1 ${formName}` }
        })
        yield* expect(200, "DELETE", v1("identities", v1Identity))
        yield* expect(200, "DELETE", v1("groups", v1Folder))

        // Every v2 delete, then each is gone.
        for (
          const [plural, uid] of [
            ["groupInvites", invite],
            ["accountAssociations", association],
            ["identityProviders", provider],
            ["roleBindings", binding],
            ["roles", role],
            ["identities", identity],
            ["groups", folder]
          ] as const
        ) {
          yield* expect(200, "DELETE", iam(plural, uid))
          const gone = yield* call("GET", iam(plural, uid), { token })
          assert.strictEqual(gone.status, 404, `${plural}: ${gone.text}`)
          assert.strictEqual(gone.body.details[0].reason, "NOT_FOUND", plural)
        }
      }

      // Advisories, imported at that depth, read over v2 in both forms.
      yield* (yield* Advisories.Advisories).importDocuments(Principal.system, deep, [{
        source: "deep.advisories.yaml",
        text: advisoryDocument
      }])
      const advisory =
        (yield* expect(200, "GET", `/vulnerabilities/v2beta1/advisories?uidp.descendants_of=${deep}`)).advisories[0]
          .uid
      for (const form of Object.values(forms)) {
        assert.strictEqual(
          (yield* expect(200, "GET", `/vulnerabilities/v2beta1/advisories/${form(advisory)}`)).uid,
          advisory
        )
      }
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a folder below the deepest level is INVALID_ARGUMENT naming the limit, not an unknown route", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const groups = yield* Groups.Groups
      let deepest = org
      for (let level = 1; level <= Group.maxDepth; level++) {
        deepest = (yield* groups.create(Principal.system, deepest, { name: "f" })).uid
      }
      const refused = yield* call("POST", `/iam/v2beta1/groups/${deepest}`, { token, body: { name: "too deep" } })
      assert.strictEqual(refused.status, 400, refused.text)
      assert.deepStrictEqual(refused.body.details[1].fieldViolations.map((v: any) => v.field), ["parent"])
      assert.include(refused.body.message, `${Group.maxDepth}`)
      // The deepest folder itself holds everything else, as any other.
      for (const form of Object.values(forms)) {
        assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${form(deepest)}`, { token })).status, 200)
      }
      const identity = yield* call("POST", `/iam/v2beta1/identities/${deepest}`, {
        token,
        body: { name: "deep", claimMatch: { issuer: "https://issuer.example.com", subject: "deep" } }
      })
      assert.strictEqual(identity.status, 200, identity.text)
      const repo = yield* call("POST", `/registry/v1/repos/${deepest}`, { token, body: { name: "app" } })
      const tag = yield* call("POST", `/registry/v1/tags/${repo.body.id}`, { token, body: { name: "v1" } })
      assert.strictEqual(
        (yield* call("GET", `/registry/v2beta1/tags/${forms.escaped(tag.body.id)}`, { token })).status,
        200
      )
    }).pipe(Effect.provide(testServer())))
})
