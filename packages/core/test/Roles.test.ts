import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Arbor, Capability, Principal, Role, RoleBindings, Roles } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

describe("Roles", () => {
  it.effect("built-in roles have fixed uids and are readable by every caller", () =>
    withArbor(Effect.gen(function*() {
      const roles = yield* Roles.Roles
      const org = yield* organization("acme")
      const nobody = yield* principalWith(org.uid, "nobody", "viewer", [])
      const page = yield* roles.list(nobody)
      assert.deepStrictEqual(page.items.map((r) => r.name).sort(), [
        "editor",
        "owner",
        "registry.pull",
        "registry.pull_token_creator",
        "registry.push",
        "viewer"
      ])
      const viewer = yield* roles.get(nobody, "cbface5d58f52d0ef8b668e8a94f5da62ed3a21b")
      assert.strictEqual(viewer.description, "Viewer Role (built-in)")
      assert.deepStrictEqual(viewer.capabilities, Capability.all.filter((c) => c.endsWith(".list")))
      const owner = page.items.find((r) => r.name === "owner")!
      assert.deepStrictEqual(owner.capabilities, Capability.all)
      assert.isTrue(owner.builtIn)
      const push = page.items.find((r) => r.name === "registry.push")!
      assert.deepStrictEqual(push.capabilities, [
        "groups.list",
        "repo.create",
        "repo.update",
        "repo.list",
        "repo.delete",
        "tag.create",
        "tag.update",
        "tag.list",
        "tag.delete"
      ])
    })))

  it.effect("accepts both capability spellings and stores the dotted one", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const role = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "mixed",
        capabilities: ["CAP_TAG_LIST", "repo.list", "CAP_IAM_ROLE_BINDINGS_CREATE", "CAP_IAM_GROUPS_LIST", "repo.list"]
      })
      assert.deepStrictEqual(role.capabilities, ["groups.list", "role_bindings.create", "repo.list", "tag.list"])
      assert.strictEqual(Capability.toEnumName("identity_providers.update"), "CAP_IAM_IDENTITY_PROVIDERS_UPDATE")
      assert.strictEqual(Capability.toEnumName("advisories.list"), "CAP_ADVISORIES_LIST")
      assert.strictEqual(Capability.toEnumName("subscriptions.list"), "CAP_EVENTS_SUBSCRIPTION_LIST")
    })))

  it.effect("capabilities must be known and at least one", () =>
    withArbor(Effect.gen(function*() {
      const roles = yield* Roles.Roles
      const org = yield* organization("acme")
      const unknown = yield* Refusal.of(roles.create(Principal.system, org.uid, {
        name: "r",
        capabilities: ["groups.list", "groups.fly"]
      }))
      assert.deepStrictEqual(fieldsOf(unknown), ["capabilities[1]"])
      const none = yield* Refusal.of(roles.create(Principal.system, org.uid, { name: "r", capabilities: [] }))
      assert.deepStrictEqual(fieldsOf(none), ["capabilities"])
    })))

  it.effect("no escalation: a role may list only capabilities its creator holds there", () =>
    withArbor(Effect.gen(function*() {
      const roles = yield* Roles.Roles
      const org = yield* organization("acme")
      const roleAdmin = yield* roles.create(Principal.system, org.uid, {
        name: "role admin",
        capabilities: ["roles.create", "roles.update", "roles.list", "groups.list"]
      })
      const admin = yield* principalWith(org.uid, "admin", "viewer", [])
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: admin.identityUid,
        roleUid: roleAdmin.uid
      })
      const denied = yield* Refusal.of(
        roles.create(admin, org.uid, { name: "x", capabilities: ["groups.list", "groups.delete"] })
      )
      assert.strictEqual(
        denied.message,
        `Permission 'groups.delete' denied on resource '${org.uid}' (or it might not exist)`
      )
      const ok = yield* roles.create(admin, org.uid, { name: "x", capabilities: ["groups.list"] })
      const raise = yield* Refusal.of(
        roles.update(admin, ok.uid, { capabilities: ["groups.list", "identity.delete"] })
      )
      assert.strictEqual(raise._tag, "PermissionDenied")
      assert.deepStrictEqual((yield* roles.get(Principal.system, ok.uid)).capabilities, ["groups.list"])
    })))

  it.effect("built-in roles cannot be updated or deleted; bound roles cannot be deleted", () =>
    withArbor(Effect.gen(function*() {
      const roles = yield* Roles.Roles
      const org = yield* organization("acme")
      const viewer = Role.builtInByName("viewer")!.uid
      const update = yield* Refusal.of(roles.update(Principal.system, viewer, { name: "seer" }))
      assert.strictEqual(update.message, "Precondition failed: built-in roles cannot be updated")
      const del = yield* Refusal.of(roles.delete(Principal.system, viewer))
      assert.strictEqual(del.message, "Precondition failed: built-in roles cannot be deleted")

      const custom = yield* roles.create(Principal.system, org.uid, { name: "custom", capabilities: ["groups.list"] })
      const user = yield* principalWith(org.uid, "user", "viewer", [])
      const binding = yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: user.identityUid,
        roleUid: custom.uid
      })
      const bound = yield* Refusal.of(roles.delete(Principal.system, custom.uid))
      assert.strictEqual(bound._tag, "FailedPrecondition")
      assert.deepStrictEqual(bound._tag === "FailedPrecondition" && bound.violations[0].type, "RESOURCE_IN_USE")
      yield* (yield* RoleBindings.RoleBindings).delete(Principal.system, binding.uid)
      yield* roles.delete(Principal.system, custom.uid)
      assert.strictEqual((yield* Refusal.of(roles.get(Principal.system, custom.uid)))._tag, "NotFound")
    })))
})
