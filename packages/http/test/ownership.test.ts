/**
 * Every organization keeps an active owner (DECISIONS §20), on every path that can take one away: a binding's
 * delete by anyone who may delete bindings, the owner's own, an identity's delete, a binding's role changed, over
 * REST and over gRPC (an independent client on the reference protos). Each refusal is FAILED_PRECONDITION naming the
 * rule, and changes nothing.
 */
import { Identities, Principal, Role, RoleBindings, Roles } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { clientProtos, connect } from "./grpcSupport.js"
import { freePort } from "./processes.js"
import { startServer } from "./signInSupport.js"
import { call, member, type Reply, stores, testServerOn, tokenFor } from "./support.js"

const owner = Role.builtInByName("owner")!.uid

/** The refusal every path gives. */
const refusedAsLastOwner = (reply: Reply) => {
  assert.strictEqual(reply.status, 400, reply.text)
  assert.strictEqual(reply.body.code, 9)
  assert.strictEqual(reply.body.message, "Precondition failed: an organization keeps at least one active owner")
  assert.deepInclude(reply.body.details[0], { reason: "LAST_OWNER" })
  assert.strictEqual(reply.body.details[1].violations[0].type, "LAST_OWNER")
}

describe.each(stores)("on %s", (store) => {
  it.scopedLive("one who may only delete bindings cannot delete the last owner's; nor can the owner; nothing changes", () =>
    Effect.gen(function*() {
      const { identity, org, token } = yield* member("acme")
      // A second owner, and an identity whose role holds only role_bindings.delete and .list at the organization.
      const { deleter, second } = yield* Effect.gen(function*() {
        const identities = yield* Identities.Identities
        const bindings = yield* RoleBindings.RoleBindings
        const make = (name: string) =>
          identities.create(Principal.system, org, {
            name,
            claimMatch: { issuer: "https://issuer.example.com", subject: name }
          })
        const role = yield* (yield* Roles.Roles).create(Principal.system, org, {
          name: "unbinder",
          capabilities: ["role_bindings.delete", "role_bindings.list"]
        })
        const unbinder = yield* make("unbinder")
        yield* bindings.create(Principal.system, org, { identityUid: unbinder.uid, roleUid: role.uid })
        const second = yield* make("second")
        yield* bindings.create(Principal.system, org, { identityUid: second.uid, roleUid: owner })
        return { deleter: yield* tokenFor(unbinder.uid), second: second.uid }
      }).pipe(Effect.orDie)
      const owners = () =>
        Effect.map(
          call("GET", `/iam/v2beta1/roleBindings?uidp.children_of=${org}&role=${owner}`, { token: deleter }),
          (reply) => reply.body.roleBindings as ReadonlyArray<{ uid: string; identity: { uid: string } }>
        )
      const listed = yield* owners()
      const first = listed.find((b) => b.identity.uid === second)!
      const last = listed.find((b) => b.identity.uid === identity)!
      assert.strictEqual(
        (yield* call("DELETE", `/iam/v2beta1/roleBindings/${first.uid}`, { token: deleter })).status,
        200
      )
      refusedAsLastOwner(yield* call("DELETE", `/iam/v2beta1/roleBindings/${last.uid}`, { token: deleter }))
      // The owner themself, the identity's delete, and the binding's role changed: the same.
      refusedAsLastOwner(yield* call("DELETE", `/iam/v2beta1/roleBindings/${last.uid}`, { token }))
      refusedAsLastOwner(yield* call("DELETE", `/iam/v2beta1/identities/${identity}`, { token }))
      refusedAsLastOwner(
        yield* call("PATCH", `/iam/v2beta1/roleBindings/${last.uid}`, {
          token,
          body: { roleUid: Role.builtInByName("viewer")!.uid }
        })
      )
      assert.deepStrictEqual((yield* owners()).map((b) => b.uid), [last.uid])
      // With another owner bound first, the same delete goes through.
      const another = yield* call("POST", `/iam/v2beta1/roleBindings/${org}`, {
        token,
        body: { identityUid: second, roleUid: owner }
      })
      assert.strictEqual(another.status, 200, another.text)
      assert.strictEqual((yield* call("DELETE", `/iam/v2beta1/roleBindings/${last.uid}`, { token })).status, 200)
    }).pipe(Effect.provide(testServerOn(store))))
})

describe("over gRPC", () => {
  it("the last owner's binding is neither deleted nor given another role, nor its identity deleted", async () => {
    const port = await freePort()
    const server = await startServer(port, {})
    const clients = connect(clientProtos, `127.0.0.1:${port}`)
    try {
      const { identity, org, token } = await server.runtime.runPromise(member("acme"))
      const iam = "chainguard.platform.iam.v2beta1"
      const bindings = clients.service(`${iam}.RoleBindingsService`)
      const identities = clients.service(`${iam}.IdentitiesService`)
      const [last] = (await bindings.ListRoleBindings({ group: org, role: owner }, token)).roleBindings
      const refusals = await Promise.all([
        bindings.DeleteRoleBinding({ uid: last.uid }, token),
        bindings.UpdateRoleBinding(
          { roleBinding: { uid: last.uid, roleUid: Role.builtInByName("editor")!.uid } },
          token
        ),
        identities.DeleteIdentity({ uid: identity }, token)
      ].map((call) => call.then(() => undefined, (failure: { code: number; message: string }) => failure)))
      for (const refused of refusals) {
        assert.strictEqual(refused?.code, 9, String(refused))
        assert.include(refused.message, "an organization keeps at least one active owner")
      }
      assert.lengthOf((await bindings.ListRoleBindings({ group: org, role: owner }, token)).roleBindings, 1)
    } finally {
      clients.close()
      await server.close()
    }
  })
})
