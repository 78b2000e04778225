/**
 * The specification's own examples, over a real listening server.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, member, type Reply, stores, testServerOn } from "./support.js"

/** What every name must be, as the violation states it (DECISIONS §2: a missing name is reported the same way). */
const nameRule =
  "must match the pattern ^[a-z0-9 ._-]{1,}$ and be at most 63 characters, with no space at either end and not only dots"

const rfc3339ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe.each(stores)("on %s", (store) => {
  describe("the specification's examples", () => {
    it.scopedLive("create group without name, or with a name off the pattern: code 3 with one violation per field", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        const missing = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { description: "no name" } })
        assert.strictEqual(missing.status, 400)
        assert.deepStrictEqual(missing.body, {
          code: 3,
          message: `Invalid argument: name: ${nameRule}`,
          details: [
            {
              "@type": "type.googleapis.com/google.rpc.ErrorInfo",
              reason: "INVALID_ARGUMENT",
              domain: "iam.arbor.dev",
              metadata: {}
            },
            {
              "@type": "type.googleapis.com/google.rpc.BadRequest",
              fieldViolations: [{ field: "name", description: nameRule }]
            }
          ]
        })
        const badName = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { name: "Not Valid!" } })
        assert.strictEqual(badName.status, 400)
        assert.strictEqual(badName.body.code, 3)
        assert.strictEqual(badName.body.message, `Invalid argument: name: ${nameRule}`)
        assert.deepStrictEqual(badName.body.details[1].fieldViolations, [{ field: "name", description: nameRule }])
        for (const name of ["", null, " team", "team ", ".", ".."]) {
          const refused = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { name } })
          assert.deepStrictEqual(refused.body.details[1].fieldViolations, [{ field: "name", description: nameRule }])
        }
      }).pipe(Effect.provide(testServerOn(store))))

    it.scopedLive("a body of the wrong shape is refused in the API's words, naming the field", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        const messages = (reply: Reply) => [reply.status, reply.body.message]
        for (const raw of ["[1,2]", "\"text\"", "null"]) {
          const refused = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, raw })
          assert.deepStrictEqual(messages(refused), [400, "Invalid argument: request: must be a JSON object"])
        }
        const description = yield* call("PATCH", `/iam/v2beta1/groups/${org}`, { token, body: { description: 5 } })
        assert.deepStrictEqual(messages(description), [400, "Invalid argument: description: must be a string"])
        const claimMatch = yield* call("POST", `/iam/v2beta1/identities/${org}`, {
          token,
          body: { name: "ci", claimMatch: { issuer: 5, subject: "x" } }
        })
        assert.deepStrictEqual(messages(claimMatch), [400, "Invalid argument: claimMatch.issuer: must be a string"])
      }).pipe(Effect.provide(testServerOn(store))))

    it.scopedLive("delete of a group with child repos: code 9, RESOURCE_NOT_EMPTY", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        const team = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { name: "team" } })
        const repo = yield* call("POST", `/registry/v1/repos/${team.body.uid}`, { token, body: { name: "nginx" } })
        assert.strictEqual(repo.status, 200, repo.text)
        const refused = yield* call("DELETE", `/iam/v2beta1/groups/${team.body.uid}`, { token })
        assert.strictEqual(refused.status, 400)
        assert.deepStrictEqual(refused.body, {
          code: 9,
          message: "Precondition failed: cannot delete group with child repos",
          details: [
            {
              "@type": "type.googleapis.com/google.rpc.ErrorInfo",
              reason: "FAILED_PRECONDITION",
              domain: "iam.arbor.dev",
              metadata: {}
            },
            {
              "@type": "type.googleapis.com/google.rpc.PreconditionFailure",
              violations: [{
                type: "RESOURCE_NOT_EMPTY",
                subject: team.body.uid,
                description: "the group still has repos"
              }]
            }
          ]
        })
      }).pipe(Effect.provide(testServerOn(store))))

    it.scopedLive("14 matches, page_size=5, skip=10: the last 4, skipped 10; pages keep order_by; the envelope", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        const names: Array<string> = []
        for (let i = 0; i < 14; i++) {
          const created = yield* call("POST", `/iam/v2beta1/groups/${org}`, {
            token,
            body: { name: `team ${String(i).padStart(2, "0")}` }
          })
          names.push(created.body.name)
        }
        const skip = yield* call(
          "GET",
          `/iam/v2beta1/groups?uidp.descendants_of=${org}&page_size=5&skip=10&order_by=name`,
          { token }
        )
        assert.strictEqual(skip.status, 200)
        assert.deepStrictEqual(skip.body.groups.map((g: { name: string }) => g.name), names.slice(10))
        assert.strictEqual(skip.body.skipped, 10)
        assert.strictEqual(skip.body.totalCount, "14")
        assert.isFalse("nextPageToken" in skip.body)

        const seen: Array<string> = []
        let pageToken: string | undefined
        do {
          const query = `uidp.descendantsOf=${org}&pageSize=5&orderBy=name%20desc${
            pageToken === undefined ? "" : `&page_token=${encodeURIComponent(pageToken)}`
          }`
          const page = yield* call("GET", `/iam/v2beta1/groups?${query}`, { token })
          assert.strictEqual(page.body.totalCount, "14")
          assert.strictEqual(page.body.skipped, 0)
          seen.push(...page.body.groups.map((g: { name: string }) => g.name))
          pageToken = page.body.nextPageToken
        } while (pageToken !== undefined)
        assert.deepStrictEqual(seen, [...names].reverse())
      }).pipe(Effect.provide(testServerOn(store))))

    it.scopedLive("resources: server-assigned uids, millisecond UTC times, masks, delete with an empty body, hydrated bindings", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        // The parent is the path's: in the body it is no field of the group, refused by name; output-only ones are
        // ignored.
        const withParent = yield* call("POST", `/iam/v2beta1/groups/${org}`, {
          token,
          body: { name: "team", parent: org }
        })
        assert.deepStrictEqual(withParent.body.details[1].fieldViolations, [
          { field: "parent", description: "is not a field of this request" }
        ])
        const created = yield* call("POST", `/iam/v2beta1/groups/${org}`, {
          token,
          body: { name: "team", description: "first", uid: "ignored", createTime: "2001-01-01T00:00:00.000Z" }
        })
        const group = created.body
        assert.match(group.uid, new RegExp(`^${org}/[0-9a-f]{16}$`))
        assert.deepStrictEqual([group.verified, group.resourceLimits, group.createTime === group.updateTime], [
          false,
          {},
          true
        ])
        assert.match(group.createTime, rfc3339ms)
        assert.deepStrictEqual((yield* call("GET", `/iam/v2beta1/groups/${group.uid}`, { token })).body, group)

        const patched = yield* call("PATCH", `/iam/v2beta1/groups/${group.uid}`, {
          token,
          body: { description: "second" }
        })
        assert.deepStrictEqual([patched.body.name, patched.body.description], ["team", "second"])
        const masked = yield* call("PATCH", `/iam/v2beta1/groups/${group.uid}?updateMask=description`, {
          token,
          body: { name: "ignored", description: "third" }
        })
        assert.deepStrictEqual([masked.body.name, masked.body.description], ["team", "third"])

        const identity = yield* call("POST", `/iam/v2beta1/identities/${group.uid}`, {
          token,
          body: {
            name: "ci",
            claimMatch: {
              issuer: "https://token.actions.githubusercontent.com",
              subject: "repo:acme/app:ref:refs/heads/main"
            }
          }
        })
        assert.strictEqual(identity.status, 200, identity.text)
        assert.match(identity.body.lastSeenTime, rfc3339ms)
        const roles = yield* call("GET", "/iam/v2beta1/roles?name=viewer", { token })
        const viewer = roles.body.roles[0]
        assert.strictEqual(viewer.name, "viewer")
        assert.include(viewer.capabilities, "CAP_IAM_GROUPS_LIST")
        const binding = yield* call("POST", `/iam/v2beta1/roleBindings/${group.uid}`, {
          token,
          body: { identityUid: identity.body.uid, roleUid: viewer.uid }
        })
        assert.deepStrictEqual(Object.keys(binding.body).sort(), ["createTime", "group", "identity", "role", "uid"])
        assert.deepStrictEqual(binding.body.identity, {
          uid: identity.body.uid,
          name: "ci",
          description: "",
          subject: "repo:acme/app:ref:refs/heads/main",
          issuer: "https://token.actions.githubusercontent.com"
        })
        assert.deepStrictEqual(binding.body.group, { uid: group.uid, name: "team", description: "third" })

        const deleted = yield* call("DELETE", `/iam/v2beta1/roleBindings/${binding.body.uid}`, { token })
        assert.deepStrictEqual([deleted.status, deleted.text], [200, ""])
        assert.strictEqual(
          (yield* call("DELETE", `/iam/v2beta1/identities/${identity.body.uid}`, { token })).status,
          200
        )
        assert.strictEqual((yield* call("DELETE", `/iam/v2beta1/groups/${group.uid}`, { token })).status, 200)
        const gone = yield* call("GET", `/iam/v2beta1/groups/${group.uid}`, { token })
        assert.deepStrictEqual([gone.status, gone.body.code, gone.body.message], [
          404,
          5,
          `Not found: group ${group.uid}`
        ])
      }).pipe(Effect.provide(testServerOn(store))))

    it.scopedLive("uids with slashes travel unescaped or as %2F; malformed and truncated uids are invalid, never wildcards", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        const team = (yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { name: "team" } })).body
        const escaped = yield* call("GET", `/iam/v2beta1/groups/${team.uid.replace("/", "%2F")}`, { token })
        assert.strictEqual(escaped.body.uid, team.uid)
        const trailing = yield* call("GET", `/iam/v2beta1/groups/${team.uid}/`, { token })
        assert.strictEqual(trailing.body.uid, team.uid, "a trailing slash is the same path")
        for (
          const uid of [
            team.uid.slice(0, -1),
            `${team.uid}x`,
            team.uid.toUpperCase(),
            `${team.uid.slice(0, -2)}*`,
            "%00"
          ]
        ) {
          const reply = yield* call("GET", `/iam/v2beta1/groups/${uid}`, { token })
          assert.deepStrictEqual([reply.status, reply.body?.code], [400, 3], uid)
        }
        const list = yield* call("GET", `/iam/v2beta1/groups?uidp.descendants_of=${org.slice(0, 20)}`, { token })
        assert.deepStrictEqual([list.status, list.body.details[1].fieldViolations[0].field], [
          400,
          "uidp.descendants_of"
        ])
      }).pipe(Effect.provide(testServerOn(store))))
  })

  describe("v1", () => {
    it.scopedLive("items, id, createdAt, updatedAt; a single resource by id; PUT replaces the whole resource", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        const created = yield* call("POST", `/iam/v1/groups/${org}`, {
          token,
          body: { name: "team", description: "keep?" }
        })
        assert.deepStrictEqual(Object.keys(created.body).sort(), [
          "createdAt",
          "description",
          "id",
          "name",
          "resourceLimits",
          "updatedAt",
          "verified"
        ])
        const one = yield* call("GET", `/iam/v1/groups?id=${created.body.id}`, { token })
        assert.deepStrictEqual(one.body, { items: [created.body] })
        const replaced = yield* call("PUT", `/iam/v1/groups/${created.body.id}`, { token, body: { name: "team2" } })
        assert.deepStrictEqual([replaced.body.name, replaced.body.description], ["team2", ""], "omitted fields reset")
        // The whole resource as read, sent back changed: its output-only fields (id, createdAt, …) are ignored.
        const readBack = yield* call("PUT", `/iam/v1/groups/${created.body.id}`, {
          token,
          body: { ...replaced.body, description: "read back" }
        })
        assert.deepStrictEqual([readBack.status, readBack.body.description], [200, "read back"], readBack.text)
        const roles = yield* call("GET", "/iam/v1/roles?name=viewer", { token })
        assert.include(roles.body.items[0].capabilities, "groups.list")
        assert.strictEqual(roles.body.items[0].id, "cbface5d58f52d0ef8b668e8a94f5da62ed3a21b")
      }).pipe(Effect.provide(testServerOn(store))))

    it.scopedLive("repos and tags are created by upsert on name", () =>
      Effect.gen(function*() {
        const { org, token } = yield* member("acme")
        const repo = yield* call("POST", `/registry/v1/repos/${org}`, {
          token,
          body: { name: "nginx", catalogTier: "APPLICATION" }
        })
        const again = yield* call("POST", `/registry/v1/repos/${org}`, {
          token,
          body: { name: "nginx", catalogTier: "APPLICATION" }
        })
        assert.strictEqual(again.body.id, repo.body.id)
        const tag = yield* call("POST", `/registry/v1/tags/${repo.body.id}`, { token, body: { name: "latest" } })
        assert.match(tag.body.digest, /^sha256:[0-9a-f]{64}$/)
        const tags = yield* call("GET", `/registry/v2beta1/tags?uidp.children_of=${repo.body.id}`, { token })
        assert.deepStrictEqual(tags.body.tags.map((t: { name: string }) => t.name), ["latest"])
        const v2repo = yield* call("GET", `/registry/v2beta1/repos/${repo.body.id}`, { token })
        assert.deepStrictEqual([v2repo.body.uid, v2repo.body.catalogTier], [repo.body.id, "APPLICATION"])
      }).pipe(Effect.provide(testServerOn(store))))
  })
})

describe("list parameters", () => {
  it.scopedLive("a bad count or flag is code 3 naming the parameter's documented name, whichever spelling was sent", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const count = "must be a non-negative integer"
      for (
        const [query, field, description] of [
          ["page_size=-1", "page_size", count],
          ["pageSize=ten", "page_size", count],
          ["skip=1e3", "skip", count],
          ["skip=%200", "skip", count],
          ["uidp.in_root=maybe", "uidp.in_root", "must be true or false"],
          ["uidp.inRoot=yes", "uidp.in_root", "must be true or false"]
        ]
      ) {
        const refused = yield* call("GET", `/iam/v2beta1/groups?${query}`, { token })
        assert.strictEqual(refused.status, 400, query)
        assert.deepStrictEqual(refused.body.details[1].fieldViolations, [{ field, description }], query)
      }
      const [snake, camel] = [
        yield* call("GET", `/iam/v2beta1/groups?uidp.in_root=1&page_size=1`, { token }),
        yield* call("GET", `/iam/v2beta1/groups?uidp.inRoot=true&pageSize=1`, { token })
      ]
      assert.deepStrictEqual(snake.body.groups.map((g: { uid: string }) => g.uid), [org])
      assert.deepStrictEqual(camel.body, snake.body)
    }).pipe(Effect.provide(testServerOn("memory"))))
})
