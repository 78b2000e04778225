import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  Arbor,
  Groups,
  Identities,
  MemoryStore,
  Principal,
  RoleBinding,
  RoleBindings,
  Roles,
  Secrets,
  Store
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

describe("Authorization", () => {
  it.effect("a binding reaches its group and everything below, nothing above or beside", () =>
    withArbor(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const deep = yield* folder((yield* folder(team.uid, "sub")).uid, "deep")
      const sibling = yield* folder(org.uid, "sibling")
      const member = yield* principalWith(org.uid, "member", "viewer", [team.uid])
      assert.strictEqual((yield* groups.get(member, deep.uid)).name, "deep")
      assert.strictEqual((yield* groups.get(member, team.uid)).name, "team")
      for (const uid of [org.uid, sibling.uid]) {
        assert.strictEqual((yield* Refusal.of(groups.get(member, uid)))._tag, "PermissionDenied")
      }
      const create = yield* Refusal.of(groups.create(member, team.uid, { name: "x" }))
      assert.strictEqual(
        create.message,
        `Permission 'groups.create' denied on resource '${team.uid}' (or it might not exist)`
      )
    })))

  it.effect("a narrowed principal holds only its capabilities in its groups, never more than its bindings", () =>
    withArbor(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const deep = yield* folder(team.uid, "deep")
      const sibling = yield* folder(org.uid, "sibling")
      const owner = yield* principalWith(org.uid, "owner", "owner")
      const narrowed = (narrowing: Principal.Narrowing) =>
        Principal.identity(owner.identityUid, { narrowed: narrowing })
      // A scope below the binding: the binding reaches only that far; capabilities only those named.
      const reader = narrowed({ capabilities: ["groups.list"], scopes: [team.uid] })
      assert.strictEqual((yield* groups.get(reader, deep.uid)).name, "deep")
      for (const uid of [org.uid, sibling.uid]) {
        assert.strictEqual((yield* Refusal.of(groups.get(reader, uid)))._tag, "PermissionDenied")
      }
      assert.strictEqual((yield* Refusal.of(groups.create(reader, team.uid, { name: "x" })))._tag, "PermissionDenied")
      // Capabilities alone, or scopes alone.
      assert.strictEqual((yield* groups.get(narrowed({ capabilities: ["groups.list"] }), org.uid)).name, "acme")
      assert.strictEqual((yield* groups.create(narrowed({ scopes: [team.uid] }), team.uid, { name: "y" })).name, "y")
      // A scope above what a binding reaches never widens it.
      const viewer = yield* principalWith(org.uid, "viewer", "viewer", [team.uid])
      const wide = Principal.identity(viewer.identityUid, { narrowed: { scopes: [org.uid] } })
      assert.strictEqual((yield* Refusal.of(groups.get(wide, org.uid)))._tag, "PermissionDenied")
      assert.strictEqual((yield* groups.get(wide, team.uid)).name, "team")
    })))

  it.effect("permission is checked before validation and existence (AIP-211)", () =>
    withArbor(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const identities = yield* Identities.Identities
      const a = yield* organization("a")
      const b = yield* organization("b")
      const outsider = yield* principalWith(a.uid, "outsider", "owner")
      const missingInB = `${b.uid}/0123456789abcdef`
      const existing = yield* Refusal.of(groups.get(outsider, b.uid))
      const missing = yield* Refusal.of(groups.get(outsider, missingInB))
      assert.strictEqual(existing._tag, "PermissionDenied")
      assert.strictEqual(missing._tag, "PermissionDenied")
      const invalidBody = yield* Refusal.of(groups.create(outsider, b.uid, { name: "NOT VALID" }))
      assert.strictEqual(invalidBody._tag, "PermissionDenied")
      const update = yield* Refusal.of(
        identities.update(outsider, `${b.uid}/0123456789abcdef`, { name: "x" }, "bogus")
      )
      assert.strictEqual(update._tag, "PermissionDenied")
      const insider = yield* principalWith(b.uid, "insider", "viewer")
      assert.strictEqual((yield* Refusal.of(groups.get(insider, missingInB)))._tag, "NotFound")
    })))

  it.effect("decided from current bindings: revoking takes effect on the next call", () =>
    withArbor(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const bindings = yield* RoleBindings.RoleBindings
      const org = yield* organization("acme")
      const user = yield* principalWith(org.uid, "user", "viewer")
      yield* groups.get(user, org.uid)
      const held = yield* bindings.list(Principal.system, { childrenOf: org.uid })
      yield* bindings.delete(Principal.system, held.items[0]!.uid)
      assert.strictEqual((yield* Refusal.of(groups.get(user, org.uid)))._tag, "PermissionDenied")
      assert.strictEqual((yield* groups.list(user)).totalCount, 0)
    })))

  it.effect("a deleted identity's principal holds nothing", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const user = yield* principalWith(org.uid, "user", "owner")
      yield* principalWith(org.uid, "keeper", "owner")
      yield* (yield* Identities.Identities).delete(Principal.system, user.identityUid)
      assert.strictEqual((yield* Refusal.of((yield* Groups.Groups).get(user, org.uid)))._tag, "PermissionDenied")
    })))

  it.effect("custom role capabilities are read at every call", () =>
    withArbor(Effect.gen(function*() {
      const roles = yield* Roles.Roles
      const org = yield* organization("acme")
      const role = yield* roles.create(Principal.system, org.uid, { name: "r", capabilities: ["groups.list"] })
      const user = yield* principalWith(org.uid, "user", "viewer", [])
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: user.identityUid,
        roleUid: role.uid
      })
      const identities = yield* Identities.Identities
      yield* identities.create(Principal.system, org.uid, { name: "x", claimMatch: claimMatch("x") })
      assert.strictEqual((yield* identities.list(user)).totalCount, 0)
      yield* roles.update(Principal.system, role.uid, { capabilities: ["groups.list", "identity.list"] })
      assert.strictEqual((yield* identities.list(user)).totalCount, 2)
    })))

  it.effect("reads a principal's bindings once while they and its roles are unchanged", () =>
    Effect.gen(function*() {
      const reads: Array<string> = []
      const counting = Layer.effect(
        Store.Store,
        Effect.map(MemoryStore.make, (store): Store.StoreService => ({
          ...store,
          find: (table, query) => Effect.zipRight(Effect.sync(() => reads.push(table.name)), store.find(table, query))
        }))
      )
      yield* Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const org = yield* organization("acme")
        const user = yield* principalWith(org.uid, "user", "viewer")
        const bindingReads = () => reads.filter((name) => name === RoleBinding.table.name).length
        yield* groups.get(user, org.uid)
        const before = bindingReads()
        for (let i = 0; i < 5; i++) yield* groups.get(user, org.uid)
        assert.strictEqual(bindingReads(), before)
        // Any write to bindings (here, another identity's) makes the next check read them again.
        yield* principalWith(org.uid, "other", "viewer")
        yield* groups.get(user, org.uid)
        assert.isAbove(bindingReads(), before)
      }).pipe(Effect.provide(Arbor.layer.pipe(Layer.provideMerge(counting), Layer.provide(Secrets.layerEphemeral))))
    }))
})
