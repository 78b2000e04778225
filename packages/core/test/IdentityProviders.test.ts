import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as IdentityProvider from "../src/iam/IdentityProvider.js"
import type { Store } from "../src/index.js"
import {
  AccountAssociations,
  Arbor,
  Groups,
  IdentityProviders,
  MemoryStore,
  Principal,
  Repository,
  Role,
  RoleBindings,
  Roles,
  Sealing,
  Secrets
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import * as People from "../src/tokens/internal/signIn/people.js"
import { folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(
  effect: Effect.Effect<A, E, Arbor.Services | Store.Store | MemoryStore.MemoryStore | Secrets.Secrets>
) => Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

const viewer = Role.builtInByName("viewer")!.uid
const owner = Role.builtInByName("owner")!.uid

const provider = (overrides: Record<string, unknown> = {}) => ({
  name: "corporate sso",
  defaultRole: viewer,
  oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "s3cret", additionalScopes: ["email"] },
  ...overrides
})

describe("IdentityProviders", () => {
  it.effect("the client secret is write-only: never returned, kept when an update omits it", () =>
    withArbor(Effect.gen(function*() {
      const providers = yield* IdentityProviders.IdentityProviders
      const store = yield* MemoryStore.MemoryStore
      const org = yield* organization("acme")
      const created = yield* providers.create(Principal.system, org.uid, provider())
      assert.deepStrictEqual(created.oidc, {
        issuer: "https://login.example.com",
        clientId: "arbor",
        additionalScopes: ["email"],
        pkceEnabled: false,
        groupsClaim: ""
      })
      // Stored sealed (`Sealing`): opened here with the engine's key.
      const { sealing } = yield* Secrets.Secrets
      const secretOf = Effect.flatMap(
        store.get(IdentityProvider.table, created.uid),
        (row) => Sealing.open(sealing, (Option.getOrThrow(row).oidc as { clientSecret: string }).clientSecret)
      )
      assert.notInclude(JSON.stringify(yield* providers.get(Principal.system, created.uid)), "s3cret")
      assert.notInclude(JSON.stringify((yield* providers.list(Principal.system)).items), "s3cret")
      yield* providers.update(Principal.system, created.uid, {
        oidc: { issuer: "https://login.example.com", clientId: "arbor2" }
      })
      assert.strictEqual(yield* secretOf, "s3cret")
      const renamed = yield* providers.update(Principal.system, created.uid, { name: "sso" }, "name")
      assert.strictEqual(renamed.oidc.clientId, "arbor2")
      assert.strictEqual(yield* secretOf, "s3cret")
      yield* providers.update(Principal.system, created.uid, {
        oidc: { issuer: "https://login.example.com", clientId: "arbor2", clientSecret: "rotated" }
      })
      assert.strictEqual(yield* secretOf, "rotated")
    })))

  it.effect("validates the issuer, client id, scopes and default role", () =>
    withArbor(Effect.gen(function*() {
      const providers = yield* IdentityProviders.IdentityProviders
      const org = yield* organization("acme")
      const attempt = (body: unknown) => Refusal.of(providers.create(Principal.system, org.uid, body as any))
      assert.deepStrictEqual(fieldsOf(yield* attempt({ name: "x" })), ["defaultRole", "oidc"])
      assert.deepStrictEqual(
        fieldsOf(yield* attempt(provider({ oidc: { issuer: "http://login.example.com", clientId: "" } }))),
        ["oidc.clientId"]
      )
      assert.deepStrictEqual(
        fieldsOf(yield* attempt(provider({ oidc: { issuer: "http://login.example.com", clientId: "a" } }))),
        [
          "oidc.issuer"
        ]
      )
      assert.deepStrictEqual(
        fieldsOf(
          yield* attempt(
            provider({ oidc: { issuer: "https://a.example", clientId: "a", additionalScopes: ["two words"] } })
          )
        ),
        ["oidc.additionalScopes[0]"]
      )
      const missing = yield* attempt(provider({ defaultRole: `${org.uid}/0123456789abcdef` }))
      assert.strictEqual(missing._tag, "NotFound")
    })))

  it.effect("no escalation: the default role must be one the caller could bind", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const adminRole = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "idp admin",
        capabilities: ["identity_providers.create", "identity_providers.list", "groups.list", "roles.list"]
      })
      const admin = yield* principalWith(org.uid, "admin", "viewer", [])
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: admin.identityUid,
        roleUid: adminRole.uid
      })
      const providers = yield* IdentityProviders.IdentityProviders
      const escalation = yield* Refusal.of(providers.create(admin, org.uid, provider({ defaultRole: owner })))
      assert.strictEqual(escalation._tag, "PermissionDenied")
      const registryPull = Role.builtInByName("registry.pull")!.uid
      const pullRole = yield* Refusal.of(providers.create(admin, org.uid, provider({ defaultRole: registryPull })))
      assert.strictEqual(pullRole._tag, "PermissionDenied", "repo.list and tag.list are not held")
      const ok = yield* providers.create(admin, org.uid, provider({ defaultRole: adminRole.uid }))
      assert.strictEqual(ok.defaultRole, adminRole.uid)
    })))

  it.effect("a provider's default role is bound only while whoever last set the provider could still bind it", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const setter = yield* principalWith(org.uid, "owner", "owner")
      const providers = yield* IdentityProviders.IdentityProviders
      const bindings = yield* RoleBindings.RoleBindings
      const ownerRole = owner
      const created = yield* providers.create(setter, org.uid, {
        name: "mine",
        defaultRole: ownerRole,
        oidc: { issuer: "https://attacker.example.com", clientId: "c", clientSecret: "s" }
      })
      const stored = yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)
      const record = () => Effect.map(stored.get(created.uid), Option.getOrThrow)
      const signIn = (subject: string) =>
        Effect.flatMap(
          People.People,
          (people) =>
            Effect.flatMap(record(), (provider) =>
              people.signIn({ issuer: "https://attacker.example.com", subject, emailVerified: false }, { provider }))
        )
      const ownersOf = (uid: string) =>
        Effect.map(
          bindings.list(Principal.system, { childrenOf: org.uid }),
          (page) => page.items.filter((b) => b.identity.uid === uid && b.role.uid === ownerRole)
        )
      // While the owner holds owner, a first sign-in gets the default role.
      const first = yield* signIn("first")
      assert.strictEqual((yield* ownersOf(first.uid)).length, 1)
      // Demoted: every later first sign-in gets nothing.
      const [held] = yield* ownersOf(setter.identityUid)
      yield* bindings.delete(Principal.system, held!.uid)
      const second = yield* signIn("second")
      assert.strictEqual((yield* ownersOf(second.uid)).length, 0)
      // An update by someone who could not bind it (here: only identity_providers.update) leaves it unbound too.
      const another = yield* principalWith(org.uid, "another owner", "owner")
      yield* providers.update(another, created.uid, { description: "re-set" })
      assert.strictEqual((yield* ownersOf((yield* signIn("third")).uid)).length, 1)
      const updater = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "provider editor",
        capabilities: ["identity_providers.update", "identity_providers.list"]
      })
      const editor = yield* principalWith(org.uid, "editor", "viewer")
      yield* bindings.create(Principal.system, org.uid, { identityUid: editor.identityUid, roleUid: updater.uid })
      yield* providers.update(editor, created.uid, { oidc: { issuer: "https://attacker.example.com", clientId: "d" } })
      assert.strictEqual((yield* ownersOf((yield* signIn("fourth")).uid)).length, 0)
    })))

  it.effect("a role cannot be deleted while a provider grants it; a group not while a provider is below", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const roles = yield* Roles.Roles
      const role = yield* roles.create(Principal.system, org.uid, { name: "r", capabilities: ["groups.list"] })
      const created = yield* (yield* IdentityProviders.IdentityProviders).create(
        Principal.system,
        team.uid,
        provider({ defaultRole: role.uid })
      )
      assert.strictEqual(
        (yield* Refusal.of(roles.delete(Principal.system, role.uid))).message,
        "Precondition failed: cannot delete a role that identity providers grant"
      )
      assert.strictEqual(
        (yield* Refusal.of((yield* Groups.Groups).delete(Principal.system, team.uid))).message,
        "Precondition failed: cannot delete group with child identity providers"
      )
      yield* (yield* IdentityProviders.IdentityProviders).delete(Principal.system, created.uid)
      yield* (yield* Groups.Groups).delete(Principal.system, team.uid)
    })))
})

describe("AccountAssociations", () => {
  it.effect("one per group, its uid the group's; a second is refused; deleting a missing one succeeds", () =>
    withArbor(Effect.gen(function*() {
      const associations = yield* AccountAssociations.AccountAssociations
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const created = yield* associations.create(Principal.system, team.uid, {
        name: "clouds",
        amazon: { account: "123456789012" },
        google: { projectId: "acme-prod-1234", projectNumber: "987654321" },
        azure: {
          tenantId: "8c3dad1d-b6bc-4f8b-939b-8263372eced6",
          clientIds: { ci: "4e3c9f4d-1111-2222-3333-444455556666" }
        }
      })
      assert.strictEqual(created.uid, team.uid)
      assert.strictEqual(
        (yield* Refusal.of(associations.create(Principal.system, team.uid, { name: "again" })))._tag,
        "AlreadyExists"
      )
      assert.deepStrictEqual(yield* associations.get(Principal.system, team.uid), created)
      const updated = yield* associations.update(Principal.system, team.uid, {}, "amazon")
      assert.isUndefined(updated.amazon)
      assert.strictEqual(updated.google?.projectId, "acme-prod-1234")
      assert.strictEqual(
        (yield* Refusal.of((yield* Groups.Groups).delete(Principal.system, team.uid))).message,
        "Precondition failed: cannot delete group with child account associations"
      )
      yield* associations.delete(Principal.system, team.uid)
      yield* associations.delete(Principal.system, team.uid)
      yield* (yield* Groups.Groups).delete(Principal.system, team.uid)
    })))

  it.effect("validates each cloud's identifiers", () =>
    withArbor(Effect.gen(function*() {
      const associations = yield* AccountAssociations.AccountAssociations
      const org = yield* organization("acme")
      const error = yield* Refusal.of(associations.create(Principal.system, org.uid, {
        name: "clouds",
        amazon: { account: "1234" },
        google: { projectId: "X" },
        azure: { tenantId: "not-a-uuid" }
      }))
      assert.deepStrictEqual(fieldsOf(error), ["amazon.account", "google.projectId", "azure.tenantId"])
    })))
})
