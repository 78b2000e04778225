import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Arbor, Capability, Identities, Principal, Role, RoleBindings, Roles } from "../src/index.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const viewer = Role.builtInByName("viewer")!.uid
const owner = Role.builtInByName("owner")!.uid

describe("RoleBindings", () => {
  it.effect("returns bindings hydrated with identity, group and role", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "deployer",
        description: "ships things",
        claimMatch: claimMatch("repo:acme/app")
      })
      const bindings = yield* RoleBindings.RoleBindings
      const binding = yield* bindings.create(Principal.system, team.uid, { identityUid: identity.uid, roleUid: viewer })
      assert.match(binding.uid, new RegExp(`^${team.uid}/[0-9a-f]{16}$`))
      assert.deepStrictEqual(binding.identity, {
        uid: identity.uid,
        name: "deployer",
        description: "ships things",
        subject: "repo:acme/app",
        issuer: "https://issuer.example.com"
      })
      assert.deepStrictEqual(binding.group, { uid: team.uid, name: "team", description: "" })
      assert.deepStrictEqual(binding.role, { uid: viewer, name: "viewer", description: "Viewer Role (built-in)" })
      assert.deepStrictEqual(yield* bindings.get(Principal.system, binding.uid), binding)
      const listed = yield* bindings.list(Principal.system, { childrenOf: team.uid })
      assert.deepStrictEqual(listed.items, [binding])
    })))

  it.effect("one binding per group, identity and role; delete is idempotent", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const user = yield* principalWith(org.uid, "user", "viewer")
      const bindings = yield* RoleBindings.RoleBindings
      const dup = yield* Effect.flip(
        bindings.create(Principal.system, org.uid, { identityUid: user.identityUid, roleUid: viewer })
      )
      assert.strictEqual(dup._tag, "AlreadyExists")
      const second = yield* bindings.create(Principal.system, org.uid, {
        identityUid: user.identityUid,
        roleUid: owner
      })
      yield* bindings.delete(Principal.system, second.uid)
      yield* bindings.delete(Principal.system, second.uid)
      assert.strictEqual((yield* Effect.flip(bindings.get(Principal.system, second.uid)))._tag, "NotFound")
    })))

  it.effect("no escalation: binding a role needs every capability of the role at the group", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const binderRole = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "binder",
        capabilities: [
          ...Capability.all.filter((c) => c.endsWith(".list")),
          "role_bindings.create",
          "role_bindings.update"
        ]
      })
      const binder = yield* principalWith(org.uid, "binder", "viewer", [])
      const bindings = yield* RoleBindings.RoleBindings
      yield* bindings.create(Principal.system, org.uid, { identityUid: binder.identityUid, roleUid: binderRole.uid })
      const target = yield* principalWith(org.uid, "target", "viewer", [])

      const escalate = yield* Effect.flip(
        bindings.create(binder, team.uid, { identityUid: target.identityUid, roleUid: owner })
      )
      assert.strictEqual(escalate._tag, "PermissionDenied")
      const self = yield* Effect.flip(
        bindings.create(binder, team.uid, { identityUid: binder.identityUid, roleUid: owner })
      )
      assert.strictEqual(self._tag, "PermissionDenied")
      const fine = yield* bindings.create(binder, team.uid, { identityUid: target.identityUid, roleUid: viewer })
      const raise = yield* Effect.flip(bindings.update(binder, fine.uid, { roleUid: owner }))
      assert.strictEqual(raise._tag, "PermissionDenied")
      assert.strictEqual((yield* bindings.get(Principal.system, fine.uid)).role.name, "viewer")
    })))

  it.effect("references must be visible: a role from elsewhere or a hidden identity is not found", () =>
    withArbor(Effect.gen(function*() {
      const a = yield* organization("a")
      const b = yield* organization("b")
      const foreignRole = yield* (yield* Roles.Roles).create(Principal.system, b.uid, {
        name: "b role",
        capabilities: ["groups.list"]
      })
      const ownerA = yield* principalWith(a.uid, "owner a", "owner")
      const identityB = yield* (yield* Identities.Identities).create(Principal.system, b.uid, {
        name: "b ci",
        claimMatch: claimMatch("b")
      })
      const bindings = yield* RoleBindings.RoleBindings
      const role = yield* Effect.flip(
        bindings.create(ownerA, a.uid, { identityUid: ownerA.identityUid, roleUid: foreignRole.uid })
      )
      assert.strictEqual(role.message, `Not found: role ${foreignRole.uid}`)
      const hidden = yield* Effect.flip(bindings.create(ownerA, a.uid, { identityUid: identityB.uid, roleUid: viewer }))
      const missing = yield* Effect.flip(
        bindings.create(ownerA, a.uid, { identityUid: `${b.uid}/0123456789abcdef`, roleUid: viewer })
      )
      assert.strictEqual(hidden.message, `Not found: identity ${identityB.uid}`)
      assert.strictEqual(missing._tag, "NotFound")
      const team = yield* folder(a.uid, "team")
      const teamRole = yield* (yield* Roles.Roles).create(Principal.system, team.uid, {
        name: "t",
        capabilities: ["groups.list"]
      })
      const above = yield* Effect.flip(
        bindings.create(ownerA, a.uid, { identityUid: ownerA.identityUid, roleUid: teamRole.uid })
      )
      assert.strictEqual(above._tag, "NotFound", "a role defined below the group cannot be bound at it")
      yield* bindings.create(ownerA, team.uid, { identityUid: ownerA.identityUid, roleUid: teamRole.uid })
    })))
})
