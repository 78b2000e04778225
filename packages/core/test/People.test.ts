import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import {
  Arbor,
  Authorization,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  Principal,
  RefreshTokens,
  Role,
  RoleBindings,
  SignIn,
  SignIns,
  Store,
  TokenIssuer
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import * as People from "../src/tokens/internal/signIn/people.js"
import { organization, principalWith } from "./fixtures.js"

/** An identity of `org` with `role` there. */
const principalWithin = (org: string, role = "owner") => principalWith(org, `${role} ${role.length}`, role)

const issuer = "https://login.example.com"
const ada = { issuer, subject: "ada-1", email: "Ada.Lovelace@example.com", emailVerified: true, name: "Ada" }
const viewer = Role.builtInByName("viewer")!.uid

const people = Effect.flatMap(People.People, (p) => Effect.succeed(p))

describe("People", () => {
  it.effect("a first sign-in makes a root-level identity named from the email; later ones find it again", () =>
    Effect.gen(function*() {
      const first = yield* (yield* people).signIn(ada)
      assert.isTrue(/^[0-9a-f]{40}$/.test(first.uid))
      assert.strictEqual(first.name, "ada.lovelace")
      assert.deepStrictEqual(first.claimMatch, { issuer, subject: "ada-1" })
      assert.strictEqual(first.email, "Ada.Lovelace@example.com")
      yield* TestClock.adjust("1 hour")
      const again = yield* (yield* people).signIn({ ...ada, email: "ada@new.example.com", emailVerified: false })
      assert.strictEqual(again.uid, first.uid)
      assert.strictEqual(again.emailUnverified, "ada@new.example.com")
      assert.isUndefined(again.email)
      assert.isTrue(again.lastSeenTime.epochMillis > first.lastSeenTime.epochMillis)
      // Another person with the same local part gets a name of their own.
      const other = yield* (yield* people).signIn({ ...ada, subject: "someone-else" })
      assert.notStrictEqual(other.uid, first.uid)
      assert.match(other.name, /^ada\.lovelace-[0-9a-f]{6}$/)
      // Nothing left of the claims: `user`.
      assert.strictEqual(
        (yield* (yield* people).signIn({ issuer, subject: "x", emailVerified: false, name: "李" })).name,
        "user"
      )
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("a person is bound before their first sign-in by the uid LookupIdentity gives, and holds it from then", () =>
    Effect.gen(function*() {
      const org = yield* organization("acme")
      const owner = yield* principalWithin(org.uid)
      const { uid } = yield* (yield* Identities.Identities).lookup({ issuer, subject: "ada-1" })
      const bindings = yield* RoleBindings.RoleBindings
      // Bound now: nothing is told of the person (there is nobody yet), the binding waits for them.
      const bound = yield* bindings.create(owner, org.uid, { identityUid: uid, roleUid: viewer })
      assert.deepInclude(bound.identity, { uid, name: "" })
      // A person who has signed in is bound alike: a binding does not tell whether someone has.
      const bob = yield* (yield* people).signIn({ issuer, subject: "bob-1", emailVerified: false })
      yield* bindings.create(owner, org.uid, { identityUid: bob.uid, roleUid: viewer })
      // Not by someone who may not bind there.
      const viewing = yield* principalWithin(org.uid, "viewer")
      const refused = yield* Refusal.of(bindings.create(viewing, org.uid, { identityUid: uid, roleUid: viewer }))
      assert.strictEqual(refused._tag, "PermissionDenied")
      // At their first sign-in, the person holds it.
      const ada = yield* (yield* people).signIn({ issuer, subject: "ada-1", emailVerified: false })
      assert.strictEqual(ada.uid, uid)
      const grants = yield* (yield* Authorization.Authorization).grants(Principal.identity(uid))
      assert.isTrue(grants.holds("groups.list", org.uid))
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("a person's uid is known before their first sign-in (LookupIdentity), and stays theirs", () =>
    Effect.gen(function*() {
      const identities = yield* Identities.Identities
      const before = yield* identities.lookup({ issuer, subject: "ada-1" })
      assert.match(before.uid, /^[0-9a-f]{40}$/)
      assert.notStrictEqual((yield* identities.lookup({ issuer, subject: "ada-2" })).uid, before.uid)
      assert.notStrictEqual((yield* identities.lookup({ issuer: `${issuer}/other`, subject: "ada-1" })).uid, before.uid)
      const signedIn = yield* (yield* people).signIn(ada)
      assert.strictEqual(signedIn.uid, before.uid)
      // A narrowed token of the person does not act on their identity with the authority the person's own has.
      const narrowedMe = Principal.identity(signedIn.uid, { narrowed: { capabilities: ["groups.list"] } })
      assert.strictEqual((yield* Refusal.of(identities.delete(narrowedMe, signedIn.uid)))._tag, "PermissionDenied")
      assert.deepStrictEqual(yield* identities.lookup({ issuer, subject: "ada-1" }), before)
      const refused = yield* Refusal.of(identities.lookup({ issuer: "", subject: "" }))
      assert.deepStrictEqual(
        refused._tag === "InvalidArgument" ? refused.violations.map((v) => v.field) : [],
        ["issuer", "subject"]
      )
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("a new person holds nothing; a person reads, renames and deletes their own identity, nothing else of it", () =>
    Effect.gen(function*() {
      const identities = yield* Identities.Identities
      const person = yield* (yield* people).signIn(ada)
      const me = Principal.identity(person.uid)
      const org = yield* organization("acme")
      assert.strictEqual(
        yield* Refusal.of(identities.list(me, {}).pipe(Effect.flatMap(() => Effect.fail("none")))),
        "none"
      )
      assert.strictEqual((yield* identities.get(me, person.uid)).uid, person.uid)
      const renamed = yield* identities.update(me, person.uid, { name: "ada", description: "mathematician" })
      assert.strictEqual(renamed.name, "ada")
      assert.strictEqual(renamed.email, "Ada.Lovelace@example.com")
      const escalation = yield* Refusal.of(
        identities.update(me, person.uid, { claimMatch: { issuer, subject: "someone-else" } })
      )
      assert.strictEqual(escalation._tag, "PermissionDenied")
      // Another person's identity stays out of reach.
      const other = yield* (yield* people).signIn({ ...ada, subject: "bob" })
      assert.strictEqual((yield* Refusal.of(identities.get(me, other.uid)))._tag, "PermissionDenied")
      assert.strictEqual((yield* Refusal.of(identities.get(me, org.uid)))._tag, "PermissionDenied")
      yield* identities.delete(me, person.uid)
      assert.strictEqual((yield* Refusal.of(identities.get(Principal.system, person.uid)))._tag, "NotFound")
      // Signing in again makes the identity anew: the same uid (LookupIdentity's), nothing of the deleted one.
      const again = yield* (yield* people).signIn(ada)
      assert.deepStrictEqual([again.uid, again.description], [person.uid, ""])
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("an organization's provider binds its default role at the first sign-in only; invites need the email", () =>
    Effect.gen(function*() {
      const org = yield* organization("acme")
      const provider = yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
        name: "okta",
        defaultRole: viewer,
        oidc: { issuer, clientId: "arbor", clientSecret: "s" }
      })
      const record = { ...provider, oidc: { ...provider.oidc, clientSecret: "s" }, grantedBy: null }
      const person = yield* (yield* people).signIn(ada, { provider: record })
      const bindings = yield* RoleBindings.RoleBindings
      const held = yield* bindings.list(Principal.system, { descendantsOf: org.uid })
      assert.deepStrictEqual(held.items.map((b) => [b.identity.uid, b.role.uid]), [[person.uid, viewer]])
      yield* bindings.delete(Principal.system, held.items[0]!.uid)
      yield* (yield* people).signIn(ada, { provider: record })
      assert.strictEqual((yield* bindings.list(Principal.system, { descendantsOf: org.uid })).items.length, 0)

      const invites = yield* GroupInvites.GroupInvites
      const forBob = yield* invites.create(Principal.system, org.uid, {
        roleUid: viewer,
        email: "bob@example.com",
        singleUse: true
      })
      const refused = yield* Refusal.of((yield* people).signIn(ada, { invite: forBob.code! }))
      assert.strictEqual(refused._tag, "FailedPrecondition")
      const unverified = yield* Refusal.of(
        (yield* people).signIn({ issuer, subject: "bob", email: "bob@example.com", emailVerified: false }, {
          invite: forBob.code!
        })
      )
      assert.strictEqual(unverified._tag, "FailedPrecondition")
      const bob = yield* (yield* people).signIn({
        issuer,
        subject: "bob",
        email: "bob@example.com",
        emailVerified: true
      }, {
        invite: forBob.code!
      })
      const bound = yield* bindings.list(Principal.system, { descendantsOf: org.uid })
      assert.deepStrictEqual(bound.items.map((b) => b.identity.uid), [bob.uid])
      const twice = yield* Refusal.of(
        (yield* people).signIn({ ...ada, email: "bob@example.com" }, { invite: forBob.code! })
      )
      assert.strictEqual(twice._tag, "FailedPrecondition")
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("an organization's provider vouches for an email only at its own group and below, never in a token", () =>
    Effect.gen(function*() {
      const victimOrg = yield* organization("corp")
      const attackerOrg = yield* organization("attacker")
      const provider = yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, attackerOrg.uid, {
        name: "mine",
        defaultRole: viewer,
        oidc: { issuer: "https://attacker.example.com", clientId: "arbor", clientSecret: "s" }
      })
      const record = { ...provider, oidc: { ...provider.oidc, clientSecret: "s" }, grantedBy: null }
      const invites = yield* GroupInvites.GroupInvites
      const claims = {
        issuer: "https://attacker.example.com",
        subject: "mallory",
        email: "victim@corp.example",
        emailVerified: true
      }
      const elsewhere = yield* invites.create(Principal.system, victimOrg.uid, {
        roleUid: viewer,
        email: "VICTIM@corp.example"
      })
      const refused = yield* Refusal.of((yield* people).signIn(claims, { provider: record, invite: elsewhere.code! }))
      assert.strictEqual(refused._tag, "FailedPrecondition")
      // What it says of the email is kept as unverified: API tokens carry only verified emails.
      const person = yield* (yield* people).signIn(claims, { provider: record })
      assert.isUndefined(person.email)
      assert.strictEqual(person.emailUnverified, "victim@corp.example")
      // Within its own organization, its word on the email counts for invites.
      const team = yield* (yield* Groups.Groups).create(Principal.system, attackerOrg.uid, { name: "team" })
      const own = yield* invites.create(Principal.system, team.uid, { roleUid: viewer, email: "victim@corp.example" })
      yield* (yield* people).signIn(claims, { provider: record, invite: own.code! })
      const bound = yield* (yield* RoleBindings.RoleBindings).list(Principal.system, { childrenOf: team.uid })
      assert.deepStrictEqual(bound.items.map((b) => b.identity.uid), [person.uid])
      // The server's own provider is trusted everywhere.
      const viaServer = yield* (yield* people).signIn({ ...claims, issuer }, { invite: elsewhere.code! })
      assert.strictEqual(viaServer.email, "victim@corp.example")
    }).pipe(Effect.provide(Arbor.layerMemory)))
})

const audience = "https://api.arbor.invalid"
const signIns = SignIns.SignIns.Default.pipe(
  Layer.provideMerge(RefreshTokens.RefreshTokens.Default),
  Layer.provideMerge(
    TokenIssuer.TokenIssuer.Default.pipe(
      Layer.provide(TokenIssuer.SigningKeys.layerMemory),
      Layer.provide(Layer.succeed(TokenIssuer.TokenSettings, { issuer: "https://auth.arbor.invalid", audience }))
    )
  ),
  Layer.provideMerge(Arbor.layerMemory),
  Layer.provide(Layer.succeed(SignIn.LoginSettings, {
    provider: { issuer, clientId: "arbor", clientSecret: Redacted.make("s"), scopes: [] }
  }))
)

describe("SignIns", () => {
  it.effect("a device's client waits: pending, slow_down when it polls too fast (the interval grows), expired", () =>
    Effect.gen(function*() {
      const signIns = yield* SignIns.SignIns
      const device = yield* signIns.authorizeDevice({})
      assert.match(device.userCode, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
      assert.deepStrictEqual([device.expiresIn, device.interval], [600, 5])
      const poll = Effect.map(
        Refusal.of(signIns.poll(device.deviceCode)),
        (e) => e._tag === "DeviceGrantError" ? e.error : e._tag
      )
      assert.strictEqual(yield* poll, "authorization_pending")
      assert.strictEqual(yield* poll, "slow_down")
      yield* TestClock.adjust("6 seconds")
      // The interval is now 10 seconds.
      assert.strictEqual(yield* poll, "slow_down")
      yield* TestClock.adjust("16 seconds")
      assert.strictEqual(yield* poll, "authorization_pending")
      assert.strictEqual(yield* signIns.pendingDevice(device.userCode.toLowerCase()), device.userCode)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* poll, "expired_token")
      assert.strictEqual(yield* poll, "invalid_grant")
      assert.strictEqual((yield* Refusal.of(signIns.pendingDevice(device.userCode)))._tag, "NotFound")
    }).pipe(Effect.provide(signIns)))

  it.effect("a person who refuses a device's sign-in denies its client", () =>
    Effect.gen(function*() {
      const signIns = yield* SignIns.SignIns
      const device = yield* signIns.authorizeDevice({})
      yield* signIns.denyDevice(device.userCode)
      const refused = yield* Refusal.of(signIns.poll(device.deviceCode))
      assert.strictEqual(refused._tag === "DeviceGrantError" && refused.error, "access_denied")
    }).pipe(Effect.provide(signIns)))

  it.effect("an expired sign-in is refused at its callback, reported to its callback address, and used up", () =>
    Effect.gen(function*() {
      const signIns = yield* SignIns.SignIns
      const store = yield* Store.Store
      const transaction = "ab".repeat(20)
      yield* store.insert(SignIn.transactionsTable, {
        uid: transaction,
        parent: null,
        state: "the-state",
        nonce: "n",
        verifier: "v",
        provider: "",
        callback: "http://127.0.0.1:5000/cb",
        audience,
        invite: null,
        refresh: false,
        device: null,
        expireTime: 10 * 60 * 1000,
        createTime: 0
      })
      yield* TestClock.adjust("10 minutes")
      const complete = signIns.complete({ transaction, state: "the-state", code: "c" })
      const expired = yield* Refusal.of(complete)
      assert.strictEqual(expired.callback, "http://127.0.0.1:5000/cb")
      assert.match((expired.cause as Error).message, /longer than 10 minutes/)
      const replayed = yield* Refusal.of(complete)
      assert.isUndefined(replayed.callback)
    }).pipe(Effect.provide(signIns)))

  it.effect("only loopback callbacks are accepted", () =>
    Effect.gen(function*() {
      const signIns = yield* SignIns.SignIns
      for (
        const callback of [
          "https://evil.example/cb",
          "http://localhost.evil.example:8000/cb",
          "javascript:alert(1)",
          "http://localhost/cb",
          "http://user@localhost:8000/cb",
          "http://127.0.0.1:8000/cb#x",
          "http://10.0.0.1:8000/cb"
        ]
      ) {
        const refused = yield* Refusal.of(signIns.begin({ callback }))
        assert.strictEqual(refused._tag, "InvalidArgument", callback)
      }
      for (const callback of ["http://localhost:8000/cb", "http://127.0.0.1:1/x?y=1", "http://[::1]:65535/"]) {
        assert.isTrue(SignIn.isLoopbackCallback(callback), callback)
      }
    }).pipe(Effect.provide(signIns)))
})
