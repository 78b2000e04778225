/**
 * One rule for reading a request, on every method (DECISIONS §18, §20; AIP-203): a query parameter the method does
 * not take, or a body field the resource does not have, is 400 INVALID_ARGUMENT naming it, and nothing is done;
 * output-only fields in a body are ignored.
 */
import { Role } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, member, type Reply, testServerOn } from "./support.js"

const viewer = Role.builtInByName("viewer")!.uid

/** The refusal naming `field`, in `where` (a parameter or a body field). */
const refusedNaming = (reply: Reply, field: string, description: string) => {
  assert.strictEqual(reply.status, 400, reply.text)
  assert.strictEqual(reply.body.code, 3)
  assert.deepStrictEqual(reply.body.details[1].fieldViolations, [{ field, description }])
}

describe("reading a request", () => {
  it.scopedLive("a DELETE with a parameter it does not take (validate_only) is refused, and deletes nothing", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const folder = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, body: { name: "kept" } })
      for (
        const path of [
          `/iam/v2beta1/groups/${folder.body.uid}?validate_only=true`,
          `/iam/v2beta1/groups/${folder.body.uid}?validateOnly=true`,
          `/iam/v1/groups/${folder.body.uid}?force=1`
        ]
      ) {
        const refused = yield* call("DELETE", path, { token })
        refusedNaming(refused, path.split("?")[1]!.split("=")[0]!, "is not a parameter of this method")
      }
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${folder.body.uid}`, { token })).status, 200)
      // Each method alike: a get, a create, an update.
      refusedNaming(
        yield* call("GET", `/iam/v2beta1/groups/${folder.body.uid}?view=full`, { token }),
        "view",
        "is not a parameter of this method"
      )
      refusedNaming(
        yield* call("POST", `/iam/v2beta1/groups/${org}?dry_run=1`, { token, body: { name: "new" } }),
        "dry_run",
        "is not a parameter of this method"
      )
      refusedNaming(
        yield* call("PATCH", `/iam/v2beta1/groups/${folder.body.uid}?fields=description`, {
          token,
          body: { description: "d" }
        }),
        "fields",
        "is not a parameter of this method"
      )
      const unchanged = yield* call("GET", `/iam/v2beta1/groups?uidp.children_of=${org}`, { token })
      assert.deepStrictEqual(
        unchanged.body.groups.map((g: { name: string; description: string }) => [g.name, g.description]),
        [
          ["kept", ""]
        ]
      )
    }).pipe(Effect.provide(testServerOn("memory"))))

  it.scopedLive("a binding with a misspelt expiry or condition field is refused: never a permanent grant", () =>
    Effect.gen(function*() {
      const { identity, org, token } = yield* member("acme")
      for (
        const [field, value, named] of [
          ["expiresAt", "2030-01-01T00:00:00Z", "expiresAt"],
          [
            "condition",
            { expression: "request.time < timestamp('2030-01-01T00:00:00Z')", titel: "2029" },
            "condition.titel"
          ]
        ] as const
      ) {
        const refused = yield* call("POST", `/iam/v2beta1/roleBindings/${org}`, {
          token,
          body: { identityUid: identity, roleUid: viewer, [field]: value }
        })
        refusedNaming(refused, named, "is not a field of this request")
      }
      const listed = yield* call("GET", `/iam/v2beta1/roleBindings?uidp.children_of=${org}&role=${viewer}`, { token })
      assert.deepStrictEqual(listed.body.roleBindings, [])
      // Nested, and on an update: the same.
      const nested = yield* call("POST", `/iam/v2beta1/identities/${org}`, {
        token,
        body: { name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "ci", subjekt: "x" } }
      })
      refusedNaming(nested, "claimMatch.subjekt", "is not a field of this request")
      const made = yield* call("POST", `/iam/v2beta1/roleBindings/${org}`, {
        token,
        body: { identityUid: identity, roleUid: viewer }
      })
      refusedNaming(
        yield* call("PATCH", `/iam/v2beta1/roleBindings/${made.body.uid}`, {
          token,
          body: { roleUid: viewer, condition: { expression: "true", titel: "always" } }
        }),
        "condition.titel",
        "is not a field of this request"
      )
      // Output-only fields, as a client that read the resource sends it back, are ignored (AIP-203).
      const { uid: _, ...readBack } = made.body
      const again = yield* call("PATCH", `/iam/v2beta1/roleBindings/${made.body.uid}`, {
        token,
        body: { ...readBack, uid: "0000", createTime: "1999-01-01T00:00:00.000Z" }
      })
      assert.strictEqual(again.status, 200, again.text)
      assert.strictEqual(again.body.createTime, made.body.createTime)
    }).pipe(Effect.provide(testServerOn("memory"))))
})
