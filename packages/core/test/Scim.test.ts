import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import {
  Access,
  Arbor,
  AuditTrail,
  Authorization,
  ExternalGroupRoleMappings,
  GroupInvites,
  IdentityProviders,
  Principal,
  Role,
  RoleBindings,
  Roles,
  ScimCredentials,
  ScimGroups,
  ScimUsers
} from "../src/index.js"
import * as ScimGroup from "../src/provisioning/ScimGroup.js"
import * as Refusal from "../src/testing/Refusal.js"
import * as Person from "../src/tokens/internal/signIn/person.js"
import { connectionLost, engineOver, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const viewer = Role.builtInByName("viewer")!.uid
const issuer = "https://login.example.com"

/** An organization with an identity provider, one owner, and a viewer. */
const setUp = Effect.gen(function*() {
  const org = yield* organization("acme")
  const provider = yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
    name: "okta",
    defaultRole: viewer,
    oidc: { issuer, clientId: "arbor", clientSecret: "s" }
  })
  return {
    org,
    provider,
    owner: yield* principalWith(org.uid, "owner", "owner"),
    viewing: yield* principalWith(org.uid, "viewing", "viewer")
  }
})

const tagOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Refusal.of(effect), (e) => e._tag)

describe("ScimCredentials", () => {
  it.effect("generate once, enable with two owners, regenerate with an overlap, revoke; every step logged", () =>
    withArbor(Effect.gen(function*() {
      const scim = yield* ScimCredentials.ScimCredentials
      const providers = yield* IdentityProviders.IdentityProviders
      const { org, owner, provider, viewing } = yield* setUp
      const before = (yield* providers.get(owner, provider.uid)).scim!
      assert.deepInclude(before, { enabled: false, credentialState: "NOT_ISSUED", etag: "0" })
      assert.isTrue(before.endpointUrl.endsWith(`/scim/v2/${provider.uid}`))

      assert.strictEqual(yield* tagOf(scim.generateToken(viewing, provider.uid, {})), "PermissionDenied")
      const first = yield* scim.generateToken(owner, provider.uid, {})
      assert.match(first.token, /^cgscim_[0-9a-f]{64}$/)
      assert.strictEqual(yield* tagOf(scim.generateToken(owner, provider.uid, {})), "FailedPrecondition")
      const generated = (yield* providers.get(owner, provider.uid)).scim!
      assert.deepInclude(generated, { enabled: false, credentialState: "LIVE", etag: first.etag })
      // Provisioning stays off until it is enabled: the token is refused as disabled, a wrong one as unknown.
      assert.strictEqual(yield* tagOf(scim.authenticate(provider.uid, first.token)), "PermissionDenied")
      assert.strictEqual(yield* tagOf(scim.authenticate(provider.uid, `cgscim_${"0".repeat(64)}`)), "Unauthenticated")

      // One owner is too few; a stale etag is refused; a second owner makes it possible.
      const enable = { enabled: true, etag: first.etag }
      assert.strictEqual(yield* tagOf(scim.setEnabled(owner, provider.uid, enable)), "FailedPrecondition")
      yield* principalWith(org.uid, "second owner", "owner")
      assert.strictEqual(yield* tagOf(scim.setEnabled(owner, provider.uid, { ...enable, etag: "0" })), "Aborted")
      const enabled = yield* scim.setEnabled(owner, provider.uid, enable)
      assert.isTrue(enabled.enabled)
      yield* scim.authenticate(provider.uid, first.token)

      // Regenerated with the default overlap (an hour): both work, then only the new one.
      assert.strictEqual(yield* tagOf(scim.regenerateToken(owner, provider.uid, { etag: first.etag })), "Aborted")
      const second = yield* scim.regenerateToken(owner, provider.uid, { etag: enabled.etag })
      assert.strictEqual((yield* providers.get(owner, provider.uid)).scim!.credentialState, "ROTATING")
      yield* scim.authenticate(provider.uid, first.token)
      yield* scim.authenticate(provider.uid, second.token)
      yield* TestClock.adjust("61 minutes")
      assert.strictEqual(yield* tagOf(scim.authenticate(provider.uid, first.token)), "Unauthenticated")
      yield* scim.authenticate(provider.uid, second.token)
      // An overlap over a day is cut to a day; zero cuts over at once.
      const third = yield* scim.regenerateToken(owner, provider.uid, { etag: second.etag, overlap: "172800s" })
      assert.strictEqual(
        third.previousTokenExpireTime!.epochMillis - (yield* TestClock.currentTimeMillis),
        24 * 3600_000
      )
      const fourth = yield* scim.regenerateToken(owner, provider.uid, { etag: third.etag, overlap: "0s" })
      assert.isUndefined(fourth.previousTokenExpireTime)
      assert.strictEqual(yield* tagOf(scim.authenticate(provider.uid, third.token)), "Unauthenticated")

      const revoked = yield* scim.revokeToken(owner, provider.uid)
      assert.isTrue(revoked.enabled)
      assert.strictEqual(yield* tagOf(scim.authenticate(provider.uid, fourth.token)), "Unauthenticated")
      assert.strictEqual((yield* providers.get(owner, provider.uid)).scim!.credentialState, "REVOKED")
      // Bad requests: both expiries, an expiry past two years, a negative overlap.
      const both = yield* Refusal.of(scim.regenerateToken(owner, provider.uid, {
        etag: revoked.etag,
        neverExpires: true,
        expireTime: "2030-01-01T00:00:00Z"
      }))
      assert.strictEqual(both._tag, "InvalidArgument")
      assert.strictEqual(
        yield* tagOf(
          scim.regenerateToken(owner, provider.uid, { etag: revoked.etag, expireTime: "2999-01-01T00:00:00Z" })
        ),
        "InvalidArgument"
      )
      assert.strictEqual(
        yield* tagOf(scim.regenerateToken(owner, provider.uid, { etag: revoked.etag, overlap: "-1s" })),
        "InvalidArgument"
      )
      const never = yield* scim.regenerateToken(owner, provider.uid, { etag: revoked.etag, neverExpires: true })
      assert.isUndefined(never.expireTime)
      yield* scim.authenticate(provider.uid, never.token)

      const entries = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, { descendantsOf: org.uid })
      const types = entries.items.filter((e) => e.subject === provider.uid).map((e) => e.type)
      assert.includeMembers(types, [
        "dev.chainguard.api.iam.identity_providers.scim_token.generated.v1",
        "dev.chainguard.api.iam.identity_providers.scim_enabled.updated.v1",
        "dev.chainguard.api.iam.identity_providers.scim_token.regenerated.v1",
        "dev.chainguard.api.iam.identity_providers.scim_token.revoked.v1"
      ])
      const logged = JSON.stringify(entries.items)
      assert.notInclude(logged, "Digest")
      assert.notInclude(logged, never.token.slice(7))
    })))

  it.effect("regenerate and revoke answer NOT_FOUND for a provider that never had a token", () =>
    withArbor(Effect.gen(function*() {
      const scim = yield* ScimCredentials.ScimCredentials
      const { owner, provider } = yield* setUp
      assert.strictEqual(yield* tagOf(scim.regenerateToken(owner, provider.uid, { etag: "0" })), "NotFound")
      assert.strictEqual(yield* tagOf(scim.revokeToken(owner, provider.uid)), "NotFound")
      const missing = yield* Refusal.of(scim.regenerateToken(owner, provider.uid, {}))
      assert.deepStrictEqual(
        (missing as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field),
        ["etag"]
      )
    })))
})

describe("ScimUsers", () => {
  /** The set-up with provisioning enabled and its client authenticated. */
  const provisioned = Effect.gen(function*() {
    const scim = yield* ScimCredentials.ScimCredentials
    const context = yield* setUp
    yield* principalWith(context.org.uid, "second owner", "owner")
    const { etag, token } = yield* scim.generateToken(context.owner, context.provider.uid, {})
    yield* scim.setEnabled(context.owner, context.provider.uid, { enabled: true, etag })
    return { ...context, client: yield* scim.authenticate(context.provider.uid, token) }
  })

  it.effect("a created user is its provider's person, known before sign-in, with the default role", () =>
    withArbor(Effect.gen(function*() {
      const scim = yield* ScimUsers.ScimUsers
      const { client, org } = yield* provisioned
      const user = yield* scim.createUser(client, {
        userName: "Ada@Acme.example",
        externalId: "00u1",
        name: { givenName: "Ada", familyName: "Lovelace" },
        emails: [{ value: "ada@acme.example", primary: true }],
        password: "never kept"
      })
      assert.strictEqual(user.identityUid, Person.uidFor(issuer, "00u1"))
      assert.isTrue(user.active)
      assert.notProperty(user.attributes, "password")
      const bindings = yield* (yield* RoleBindings.RoleBindings).list(Principal.system, { identity: user.identityUid })
      assert.deepStrictEqual(bindings.items.map((b) => [b.group.uid, b.role.name]), [[org.uid, "viewer"]])
      // userName is unique regardless of case; externalId is unique.
      assert.strictEqual(
        yield* tagOf(scim.createUser(client, { userName: "ada@acme.example", externalId: "00u2" })),
        "AlreadyExists"
      )
      assert.strictEqual(
        yield* tagOf(scim.createUser(client, { userName: "other", externalId: "00u1" })),
        "AlreadyExists"
      )
      const missing = yield* Refusal.of(scim.createUser(client, { userName: "x" }))
      assert.deepStrictEqual(
        (missing as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field),
        ["externalId"]
      )
      const found = yield* scim.listUsers(client, { attribute: "userName", value: "ADA@acme.EXAMPLE" }, {
        startIndex: 1,
        count: 10
      })
      assert.deepStrictEqual([found.total, found.users.map((u) => u.externalId)], [1, ["00u1"]])
      assert.strictEqual((yield* scim.getUser(client, user.identityUid)).userName, "Ada@Acme.example")
      assert.strictEqual(
        yield* tagOf(scim.replaceUser(client, user.identityUid, { userName: "ada", externalId: "00u9" })),
        "InvalidArgument"
      )
    })))

  it.effect("an owner binds a provisioned person before they sign in; deprovisioned, their bindings there give nothing", () =>
    withArbor(Effect.gen(function*() {
      const scim = yield* ScimUsers.ScimUsers
      const bindings = yield* RoleBindings.RoleBindings
      const authorization = yield* Authorization.Authorization
      const { client, org, owner, viewing } = yield* provisioned
      const team = yield* folder(org.uid, "team")
      const user = yield* scim.createUser(client, { userName: "ada", externalId: "00u1" })
      const editor = Role.builtInByName("editor")!.uid
      const bound = yield* bindings.create(owner, team.uid, { identityUid: user.identityUid, roleUid: editor })
      assert.strictEqual(bound.group.uid, team.uid)
      // Not by someone who may not create bindings there.
      assert.strictEqual(
        yield* tagOf(bindings.create(viewing, team.uid, { identityUid: user.identityUid, roleUid: viewer })),
        "PermissionDenied"
      )
      const holds = Effect.map(
        authorization.grants(Principal.identity(user.identityUid)),
        (grants) => grants.holds("repo.create", team.uid)
      )
      assert.isTrue(yield* holds)
      // Deleted by the client: what binds them in the provider's organization gives nothing, a new binding neither.
      yield* scim.deleteUser(client, user.identityUid)
      assert.isFalse(yield* holds)
      yield* bindings.create(owner, org.uid, { identityUid: user.identityUid, roleUid: editor })
      assert.isFalse(yield* holds)
    })))

  it.effect("deactivated or deleted: nothing held in the organization, its provider's tokens refused; back when active", () =>
    withArbor(Effect.gen(function*() {
      const scim = yield* ScimUsers.ScimUsers
      const authorization = yield* Authorization.Authorization
      const { client, org, provider } = yield* provisioned
      const elsewhere = yield* organization("elsewhere")
      const team = yield* folder(org.uid, "team")
      const user = yield* scim.createUser(client, { userName: "ada", externalId: "00u1" })
      const invites = yield* GroupInvites.GroupInvites
      const invite = yield* invites.create(Principal.system, elsewhere.uid, { roleUid: viewer })
      yield* invites.redeem(Principal.system, invite.code!, { identityUid: user.identityUid })
      const signedIn = Principal.identity(user.identityUid, { provider: provider.uid })
      const holds = (group: string) => Effect.map(authorization.grants(signedIn), (g) => g.holds("groups.list", group))
      assert.isTrue(yield* holds(team.uid))
      assert.isFalse(yield* scim.refuses(provider.uid, "00u1"))

      yield* scim.patchUser(
        client,
        user.identityUid,
        (current) =>
          Effect.succeed({
            ...current.attributes,
            userName: current.userName,
            externalId: current.externalId,
            active: "False"
          })
      )
      assert.isTrue(yield* scim.refuses(provider.uid, "00u1"))
      assert.isFalse(yield* holds(team.uid))
      // What another organization granted is its own.
      assert.isTrue(yield* holds(elsewhere.uid))
      assert.strictEqual(yield* tagOf(authorization.admit(signedIn)), "Unauthenticated")
      yield* authorization.admit(Principal.identity(user.identityUid))

      yield* scim.replaceUser(client, user.identityUid, { userName: "ada", externalId: "00u1", active: true })
      assert.isTrue(yield* holds(team.uid))
      yield* authorization.admit(signedIn)

      yield* scim.deleteUser(client, user.identityUid)
      assert.strictEqual(yield* tagOf(scim.getUser(client, user.identityUid)), "NotFound")
      assert.isTrue(yield* scim.refuses(provider.uid, "00u1"))
      assert.isFalse(yield* holds(team.uid))
      assert.strictEqual((yield* scim.listUsers(client, undefined, { startIndex: 1, count: 10 })).total, 0)
      // Created again: the same person, active.
      const again = yield* scim.createUser(client, { userName: "ada", externalId: "00u1" })
      assert.strictEqual(again.identityUid, user.identityUid)
      assert.isTrue(yield* holds(team.uid))
    })))
})

/** `setUp` with provisioning enabled (two owners agree) and its SCIM client authenticated. */
const provisioning = Effect.gen(function*() {
  const scim = yield* ScimCredentials.ScimCredentials
  const set = yield* setUp
  yield* principalWith(set.org.uid, "second owner", "owner")
  const { etag, token } = yield* scim.generateToken(set.owner, set.provider.uid, {})
  yield* scim.setEnabled(set.owner, set.provider.uid, { enabled: true, etag })
  return { ...set, client: yield* scim.authenticate(set.provider.uid, token) }
})

describe("ScimGroups", () => {
  it.effect("a member holds what the provider's mappings of the group give, by its name or externalId, while a member", () =>
    withArbor(Effect.gen(function*() {
      const users = yield* ScimUsers.ScimUsers
      const groups = yield* ScimGroups.ScimGroups
      const authorization = yield* Authorization.Authorization
      const mappings = yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings
      const { client, org, owner, provider } = yield* provisioning
      const team = yield* folder(org.uid, "team")
      const ops = yield* folder(org.uid, "ops")
      const editor = Role.builtInByName("editor")!.uid
      yield* mappings.create(owner, provider.uid, { externalGroupId: "Engineering", roleUid: editor, scope: team.uid })
      yield* mappings.create(owner, provider.uid, { externalGroupId: "00g-admins", roleUid: editor, scope: ops.uid })
      const ada = yield* users.createUser(client, { userName: "ada", externalId: "00u1" })
      const holdsAt = (group: string) =>
        Effect.map(
          authorization.grants(Principal.identity(ada.identityUid)),
          (grants) => grants.holds("repo.create", group)
        )
      assert.isFalse(yield* holdsAt(team.uid))
      const engineering = yield* groups.createGroup(client, { displayName: "Engineering", members: [] })
      assert.isFalse(yield* holdsAt(team.uid))
      const joined = yield* groups.replaceGroup(client, ScimGroup.scimIdOf(engineering), {
        displayName: "Engineering",
        members: [{ value: ada.identityUid }, { value: ada.identityUid }]
      })
      assert.deepStrictEqual(joined.members, [ada.identityUid])
      assert.isTrue(yield* holdsAt(team.uid), "by its name")
      assert.isFalse(yield* holdsAt(ops.uid))
      yield* groups.createGroup(client, {
        displayName: "Admins",
        externalId: "00g-admins",
        members: [{ value: ada.identityUid }]
      })
      assert.isTrue(yield* holdsAt(ops.uid), "by its externalId")
      // Deactivated, the person holds nothing there, pushed groups included.
      yield* users.patchUser(
        client,
        ada.identityUid,
        () => Effect.succeed({ userName: "ada", externalId: "00u1", active: false })
      )
      assert.isFalse(yield* holdsAt(team.uid))
      yield* users.patchUser(
        client,
        ada.identityUid,
        () => Effect.succeed({ userName: "ada", externalId: "00u1", active: true })
      )
      assert.isTrue(yield* holdsAt(team.uid))
      yield* groups.deleteGroup(client, ScimGroup.scimIdOf(engineering))
      assert.isFalse(yield* holdsAt(team.uid))
      // Someone the provider did not provision cannot be made a member.
      const refused = yield* Refusal.of(
        groups.createGroup(client, {
          displayName: "Sneaky",
          members: [{ value: owner._tag === "Identity" ? owner.uid : "" }]
        })
      )
      assert.strictEqual(refused._tag, "InvalidArgument")
      assert.strictEqual((yield* groups.listGroups(client, undefined, { startIndex: 1, count: 10 })).total, 1)
    })))

  it.effect("a member's mapped role follows its creator's authority as it starts and ends, with no write", () =>
    withArbor(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-29T00:00:00Z"))
      const users = yield* ScimUsers.ScimUsers
      const groups = yield* ScimGroups.ScimGroups
      const access = yield* Access.Access
      const { client, org, provider } = yield* provisioning
      const team = yield* folder(org.uid, "team")
      // A team lead who maps the provider's group to editor at the team (which needs identity_providers.create at
      // the organization), with the authority to bind editors there now, then from 08:00 to 16:00 only.
      const lead = yield* principalWith(org.uid, "lead", "viewer", [])
      const bindings = yield* RoleBindings.RoleBindings
      const mapper = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "mapper",
        capabilities: ["identity_providers.create", "identity_providers.list"]
      })
      yield* bindings.create(Principal.system, org.uid, { identityUid: lead.identityUid, roleUid: mapper.uid })
      const now = yield* bindings.create(Principal.system, team.uid, {
        identityUid: lead.identityUid,
        roleUid: Role.builtInByName("owner")!.uid
      })
      const editor = Role.builtInByName("editor")!.uid
      yield* (yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings).create(lead, provider.uid, {
        externalGroupId: "Engineering",
        roleUid: editor,
        scope: team.uid
      })
      yield* bindings.delete(Principal.system, now.uid)
      yield* bindings.create(Principal.system, team.uid, {
        identityUid: lead.identityUid,
        roleUid: Role.builtInByName("owner")!.uid,
        startTime: "2026-11-29T08:00:00Z",
        expireTime: "2026-11-29T16:00:00Z"
      })
      const ada = yield* users.createUser(client, { userName: "ada", externalId: "00u1" })
      yield* groups.createGroup(client, { displayName: "Engineering", members: [{ value: ada.identityUid }] })
      const holds = access.can(Principal.identity(ada.identityUid), "repo.create", team.uid)
      assert.isFalse(yield* holds, "the mapping rests on nothing yet")
      assert.isFalse(yield* holds, "warm")
      // A start is no write: only the member's cache reading the clock at its creator's next edge sees it.
      yield* TestClock.adjust("8 hours")
      assert.isTrue(yield* holds, "its creator's authority started: so did the mapping's role")
      yield* TestClock.adjust("8 hours")
      assert.isFalse(yield* holds, "and ended with it")
    })))
})

describe("a store that drops its connection in the middle of a SCIM write", () => {
  it.effect("answers Unavailable (a retry may work), never a defect, and keeps nothing of the write", () =>
    Effect.gen(function*() {
      // The memory store, failing the writes of SCIM's own tables once armed, as a connection lost mid-transaction.
      let armed = false
      const scimTables = new Set(["scim_credentials", "scim_users"])
      const engine = engineOver((store) => ({
        insert: (table, row) => armed && scimTables.has(table.name) ? connectionLost() : store.insert(table, row),
        update: (table, row) => armed && scimTables.has(table.name) ? connectionLost() : store.update(table, row)
      }))
      yield* Effect.gen(function*() {
        const credentials = yield* ScimCredentials.ScimCredentials
        const users = yield* ScimUsers.ScimUsers
        const { client, org, owner } = yield* provisioning
        const user = yield* users.createUser(client, { userName: "ada@acme.example", externalId: "00u1" })
        const second = yield* IdentityProviders.IdentityProviders.pipe(
          Effect.flatMap((providers) =>
            providers.create(Principal.system, org.uid, {
              name: "entra",
              defaultRole: viewer,
              oidc: { issuer, clientId: "arbor", clientSecret: "s" }
            })
          )
        )
        armed = true
        yield* Refusal.tagged(credentials.generateToken(owner, second.uid, {}), "Unavailable")
        yield* Refusal.tagged(users.deleteUser(client, user.identityUid), "Unavailable")
        armed = false
        assert.isTrue((yield* users.getUser(client, user.identityUid)).active)
        assert.strictEqual((yield* credentials.generateToken(owner, second.uid, {})).identityProviderUid, second.uid)
      }).pipe(Effect.provide(engine))
    }))
})
