import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  Arbor,
  AuditTrail,
  Authorization,
  ExternalGroupRoleMappings,
  IdentityProviders,
  Principal,
  Role,
  RoleBindings,
  Roles
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const viewer = Role.builtInByName("viewer")!.uid
const editor = Role.builtInByName("editor")!.uid
const owner = Role.builtInByName("owner")!.uid

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

/** An organization with a folder, an identity provider reading the `groups` claim, and its owner. */
const setUp = Effect.gen(function*() {
  const org = yield* organization("acme")
  const team = yield* folder(org.uid, "team")
  const provider = yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
    name: "okta",
    defaultRole: viewer,
    oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "s", groupsClaim: "groups" }
  })
  return { org, team, provider, orgOwner: yield* principalWith(org.uid, "owner", "owner") }
})

describe("ExternalGroupRoleMappings", () => {
  it.effect("create (no escalation, scope at or below the provider's group, once), get, list by provider, delete", () =>
    withArbor(Effect.gen(function*() {
      const mappings = yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings
      const { org, team, provider, orgOwner } = yield* setUp
      assert.strictEqual(provider.oidc.groupsClaim, "groups")
      const created = yield* mappings.create(orgOwner, provider.uid, { externalGroupId: "engineers", roleUid: editor })
      assert.deepInclude(created, {
        identityProviderUid: provider.uid,
        externalGroupId: "engineers",
        roleUid: editor,
        scope: org.uid
      })
      assert.isTrue(created.uid.startsWith(`${provider.uid}/`))
      assert.deepStrictEqual(yield* mappings.get(orgOwner, created.uid), created)
      const inTeam = yield* mappings.create(orgOwner, provider.uid, {
        externalGroupId: "engineers",
        roleUid: owner,
        scope: team.uid
      })
      const again = yield* Refusal.of(
        mappings.create(orgOwner, provider.uid, { externalGroupId: "engineers", roleUid: editor })
      )
      assert.strictEqual(again._tag, "AlreadyExists")
      // An owner of the folder only may not map at the organization, nor give a role it does not hold.
      const teamEditor = yield* principalWith(org.uid, "team editor", "editor", [team.uid])
      assert.strictEqual(
        (yield* Refusal.of(mappings.create(teamEditor, provider.uid, { externalGroupId: "x", roleUid: viewer })))._tag,
        "PermissionDenied"
      )
      const other = yield* organization("other")
      const outside = yield* Refusal.of(
        mappings.create(Principal.system, provider.uid, { externalGroupId: "x", roleUid: viewer, scope: other.uid })
      )
      assert.deepStrictEqual(fieldsOf(outside), ["scope"])
      const bad = yield* Refusal.of(
        mappings.create(Principal.system, provider.uid, { externalGroupId: "", roleUid: "nope" })
      )
      assert.sameMembers(fieldsOf(bad)!, ["externalGroupId", "roleUid"])
      const listed = yield* mappings.list(orgOwner, { identityProviderUid: provider.uid })
      assert.sameMembers(listed.items.map((m) => m.uid), [created.uid, inTeam.uid])
      assert.strictEqual((yield* mappings.list(teamEditor)).totalCount, 0)
      // A role a mapping gives cannot be deleted; a provider's mappings go with it.
      yield* mappings.delete(orgOwner, created.uid)
      yield* mappings.delete(orgOwner, created.uid)
      const types = (yield* (yield* AuditTrail.AuditTrail).list(Principal.system, { subject: created.uid })).items
        .map((e) => e.type)
      assert.deepStrictEqual(types, [
        "dev.chainguard.api.iam.external_group_role_mappings.created.v1",
        "dev.chainguard.api.iam.external_group_role_mappings.deleted.v1"
      ])
      yield* (yield* IdentityProviders.IdentityProviders).delete(Principal.system, provider.uid)
      assert.strictEqual((yield* mappings.list(Principal.system)).totalCount, 0)
    })))

  it.effect("a custom role a mapping gives cannot be deleted; batch delete is all of one provider or nothing", () =>
    withArbor(Effect.gen(function*() {
      const mappings = yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings
      const { org, provider, orgOwner } = yield* setUp
      const role = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "puller",
        capabilities: ["repo.list"]
      })
      const a = yield* mappings.create(orgOwner, provider.uid, { externalGroupId: "a", roleUid: role.uid })
      const b = yield* mappings.create(orgOwner, provider.uid, { externalGroupId: "b", roleUid: viewer })
      const inUse = yield* Refusal.of((yield* Roles.Roles).delete(Principal.system, role.uid))
      assert.strictEqual(inUse._tag, "FailedPrecondition")
      const foreign = yield* Refusal.of(
        mappings.batchDelete(orgOwner, { parent: provider.uid, names: [a.uid, `${org.uid}/0123456789abcdef`] })
      )
      assert.deepStrictEqual(fieldsOf(foreign), ["names[1]"])
      assert.strictEqual((yield* mappings.list(orgOwner)).totalCount, 2)
      const deleted = yield* mappings.batchDelete(orgOwner, {
        parent: provider.uid,
        names: [a.uid, b.uid, `${provider.uid}/0123456789abcdef`]
      })
      assert.sameMembers(deleted.externalGroupRoleMappings.map((m) => m.uid), [a.uid, b.uid])
      assert.strictEqual((yield* mappings.list(orgOwner)).totalCount, 0)
      const logged = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, {
        types: ["dev.chainguard.api.iam.external_group_role_mappings.deleted.batch.v1"]
      })
      assert.strictEqual(logged.totalCount, 2)
      yield* (yield* Roles.Roles).delete(Principal.system, role.uid)
    })))

  it.effect("forSignIn: the mappings of the person's groups whose creator could still bind the role", () =>
    withArbor(Effect.gen(function*() {
      const mappings = yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings
      const { org, provider, orgOwner } = yield* setUp
      const engineers = yield* mappings.create(orgOwner, provider.uid, {
        externalGroupId: "engineers",
        roleUid: editor
      })
      yield* mappings.create(orgOwner, provider.uid, { externalGroupId: "sales", roleUid: viewer })
      const given = yield* mappings.forSignIn(provider.uid, ["engineers", "unmapped"])
      assert.deepStrictEqual(given.map((m) => m.uid), [engineers.uid])
      assert.deepStrictEqual(yield* mappings.forSignIn(provider.uid, []), [])
      // The owner who made it loses their role (another owner keeps the organization): their mappings give nothing
      // any more.
      yield* principalWith(org.uid, "keeper", "owner")
      const bindings = yield* RoleBindings.RoleBindings
      const own = yield* bindings.list(Principal.system, { identity: orgOwner.identityUid })
      for (const binding of own.items) yield* bindings.delete(Principal.system, binding.uid)
      assert.deepStrictEqual(yield* mappings.forSignIn(provider.uid, ["engineers"]), [])
    })))

  it.effect("a token issued with a mapping holds its role only while the mapping's creator could still bind it", () =>
    withArbor(Effect.gen(function*() {
      const mappings = yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings
      const { org, provider, team } = yield* setUp
      const creator = yield* principalWith(org.uid, "creator", "owner")
      const engineers = yield* mappings.create(creator, provider.uid, {
        externalGroupId: "engineers",
        roleUid: editor,
        scope: team.uid
      })
      const person = yield* principalWith(org.uid, "person", "viewer", [])
      const signedIn = Principal.identity(person.identityUid, { mappings: [engineers.uid], provider: provider.uid })
      const authorization = yield* Authorization.Authorization
      const canCreate = Effect.map(authorization.grants(signedIn), (g) => g.holds("repo.create", team.uid))
      assert.isTrue(yield* canCreate)
      // The creator loses their binding: the token's mapping gives nothing from the next call on.
      const bindings = yield* RoleBindings.RoleBindings
      const own = yield* bindings.list(Principal.system, { identity: creator.identityUid })
      for (const binding of own.items) yield* bindings.delete(Principal.system, binding.uid)
      assert.isFalse(yield* canCreate)
    })))
})
