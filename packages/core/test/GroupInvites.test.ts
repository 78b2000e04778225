import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as GroupInvite from "../src/iam/GroupInvite.js"
import {
  Arbor,
  AuditTrail,
  GroupInvites,
  Identities,
  MemoryStore,
  Principal,
  Role,
  RoleBindings,
  Roles,
  Uid
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services | MemoryStore.MemoryStore>) =>
  Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

const viewer = Role.builtInByName("viewer")!.uid

/** An organization, a team, and a fresh identity that will redeem invites. */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
  const org = yield* organization("acme")
  const team = yield* folder(org.uid, "team")
  const newcomer = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
    name: "newcomer",
    claimMatch: claimMatch("newcomer")
  })
  return { newcomer, org, team }
})

describe("GroupInvites", () => {
  it.effect("the code is returned once, by create, and stored only as a hash", () =>
    withArbor(Effect.gen(function*() {
      const { team } = yield* setup
      const invites = yield* GroupInvites.GroupInvites
      const invite = yield* invites.create(Principal.system, team.uid, { roleUid: viewer })
      assert.match(invite.code!, /^[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(invite.keyId, invite.code!.split(".")[0])
      assert.deepStrictEqual(invite.role, { uid: viewer, name: "viewer", description: "Viewer Role (built-in)" })
      assert.strictEqual(DateTime.formatIso(invite.expirationTime), "2026-11-29T00:00:00.000Z", "7 days by default")
      assert.isUndefined((yield* invites.get(Principal.system, invite.uid)).code)
      assert.isTrue((yield* invites.list(Principal.system)).items.every((i) => i.code === undefined))
      const row = yield* (yield* MemoryStore.MemoryStore).get(GroupInvite.table, invite.uid)
      const secret = invite.code!.split(".")[1]!
      assert.notInclude(JSON.stringify(row), secret)
    })))

  it.effect("ttl: a duration in seconds, more than zero and at most 30 days", () =>
    withArbor(Effect.gen(function*() {
      const { team } = yield* setup
      const invites = yield* GroupInvites.GroupInvites
      const day = yield* invites.create(Principal.system, team.uid, { roleUid: viewer, ttl: "86400s" })
      assert.strictEqual(DateTime.formatIso(day.expirationTime), "2026-11-23T00:00:00.000Z")
      yield* invites.create(Principal.system, team.uid, { roleUid: viewer, ttl: "2592000s" })
      for (const ttl of ["2592001s", "0s", "86400", "1d", "-5s"]) {
        assert.deepStrictEqual(
          fieldsOf(yield* Refusal.of(invites.create(Principal.system, team.uid, { roleUid: viewer, ttl }))),
          ["ttl"],
          ttl
        )
      }
      assert.deepStrictEqual(
        fieldsOf(yield* Refusal.of(invites.create(Principal.system, team.uid, { roleUid: viewer, email: "nope" }))),
        [
          "email"
        ]
      )
    })))

  it.effect("update changes email and singleUse only; lists are newest first by default", () =>
    withArbor(Effect.gen(function*() {
      const { team } = yield* setup
      const invites = yield* GroupInvites.GroupInvites
      const first = yield* invites.create(Principal.system, team.uid, { roleUid: viewer })
      yield* TestClock.adjust("1 minute")
      const second = yield* invites.create(Principal.system, team.uid, { roleUid: viewer, email: "a@example.com" })
      assert.deepStrictEqual((yield* invites.list(Principal.system)).items.map((i) => i.uid), [second.uid, first.uid])
      const updated = yield* invites.update(Principal.system, first.uid, { email: "b@example.com", singleUse: true })
      assert.deepStrictEqual([updated.email, updated.singleUse], ["b@example.com", true])
      assert.deepStrictEqual(updated.expirationTime, first.expirationTime)
      const immutable = yield* Refusal.of(invites.update(Principal.system, first.uid, {}, "roleUid"))
      assert.deepStrictEqual(fieldsOf(immutable), ["updateMask"])
      const cleared = yield* invites.update(Principal.system, first.uid, {}, "email")
      assert.isUndefined(cleared.email)
    })))

  describe("redeem", () => {
    it.effect("binds the identity to the invite's role in the invite's group", () =>
      withArbor(Effect.gen(function*() {
        const { newcomer, team } = yield* setup
        const invites = yield* GroupInvites.GroupInvites
        const invite = yield* invites.create(Principal.system, team.uid, { roleUid: viewer })
        const binding = yield* invites.redeem(Principal.identity(newcomer.uid), invite.code!, {
          identityUid: newcomer.uid
        })
        assert.deepStrictEqual([binding.group.uid, binding.identity.uid, binding.role.uid], [
          team.uid,
          newcomer.uid,
          viewer
        ])
        const again = yield* invites.redeem(Principal.identity(newcomer.uid), invite.code!, {
          identityUid: newcomer.uid
        })
        assert.strictEqual(again.uid, binding.uid, "a reusable invite redeemed twice keeps one binding")
      })))

    it.effect("the audit trail names the redeemer as the actor of the redemption, at sign-in too", () =>
      withArbor(Effect.gen(function*() {
        const { newcomer, team } = yield* setup
        const invites = yield* GroupInvites.GroupInvites
        const invite = yield* invites.create(Principal.system, team.uid, { roleUid: viewer })
        // At sign-in the server redeems for a person who has no token yet: as the system, for them.
        yield* invites.redeem(Principal.system, invite.code!, {
          identityUid: newcomer.uid,
          email: "newcomer@example.com"
        })
        const trail = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, { descendantsOf: team.uid })
        const redeemed = trail.items.filter((e) => e.kind === "role_binding" || e.type.endsWith("updated.v1"))
        assert.deepStrictEqual(redeemed.map((e) => [e.kind, e.actor]), [
          ["group_invite", { subject: newcomer.uid, email: "newcomer@example.com" }],
          ["role_binding", { subject: newcomer.uid, email: "newcomer@example.com" }]
        ])
      })))

    it.effect("no invite outlives its maker's authority: a demoted owner cannot redeem their own owner invite", () =>
      withArbor(Effect.gen(function*() {
        const { newcomer, org, team } = yield* setup
        const invites = yield* GroupInvites.GroupInvites
        const bindings = yield* RoleBindings.RoleBindings
        const owner = yield* principalWith(org.uid, "owner", "owner")
        const other = yield* principalWith(org.uid, "other owner", "owner")
        const ownerRole = Role.builtInByName("owner")!.uid
        const invite = yield* invites.create(owner, team.uid, { roleUid: ownerRole })
        const [held] = (yield* bindings.list(Principal.system, { childrenOf: org.uid })).items.filter((b) =>
          b.identity.uid === owner.identityUid
        )
        yield* bindings.delete(Principal.system, held!.uid)
        for (const redeemer of [owner.identityUid, newcomer.uid]) {
          const refused = yield* Refusal.of(
            invites.redeem(Principal.identity(redeemer), invite.code!, { identityUid: redeemer })
          )
          assert.strictEqual(refused._tag, "FailedPrecondition")
          assert.strictEqual(
            (refused as { violations: ReadonlyArray<{ type: string }> }).violations[0]!.type,
            "INVITE_NOT_GRANTABLE"
          )
        }
        assert.strictEqual((yield* bindings.list(Principal.system, { childrenOf: team.uid })).items.length, 0)
        // Whoever last changed an invite is who it rests on: an owner's change makes it redeemable again.
        yield* invites.update(other, invite.uid, { singleUse: false })
        const bound = yield* invites.redeem(Principal.identity(newcomer.uid), invite.code!, {
          identityUid: newcomer.uid
        })
        assert.strictEqual(bound.role.uid, ownerRole)
        // An invite the system made rests on nothing that can be lost.
        const bySystem = yield* invites.create(Principal.system, team.uid, { roleUid: viewer })
        yield* invites.redeem(Principal.identity(newcomer.uid), bySystem.code!, { identityUid: newcomer.uid })
      })))

    it.effect("refuses expired, used single-use and email-mismatched invites, changing nothing", () =>
      withArbor(Effect.gen(function*() {
        const { newcomer, team } = yield* setup
        const invites = yield* GroupInvites.GroupInvites
        const bindings = yield* RoleBindings.RoleBindings
        const as = Principal.identity(newcomer.uid)
        const redeem = (code: string, email?: string) =>
          Refusal.of(
            invites.redeem(as, code, { identityUid: newcomer.uid, ...(email === undefined ? {} : { email }) })
          )
        const held = Effect.map(bindings.list(Principal.system, { childrenOf: team.uid }), (p) => p.totalCount)

        const forAlice = yield* invites.create(Principal.system, team.uid, {
          roleUid: viewer,
          email: "Alice@Example.com"
        })
        const wrongEmail = yield* redeem(forAlice.code!, "mallory@example.com")
        assert.strictEqual(wrongEmail.message, "Precondition failed: the invite is for another email address")
        assert.strictEqual((yield* redeem(forAlice.code!))._tag, "FailedPrecondition")
        assert.strictEqual(yield* held, 0)
        yield* invites.redeem(as, forAlice.code!, { identityUid: newcomer.uid, email: "alice@example.COM" })

        const once = yield* invites.create(Principal.system, team.uid, {
          roleUid: Role.builtInByName("editor")!.uid,
          singleUse: true
        })
        yield* invites.redeem(as, once.code!, { identityUid: newcomer.uid })
        assert.strictEqual((yield* redeem(once.code!)).message, "Precondition failed: the invite has already been used")

        const shortLived = yield* invites.create(Principal.system, team.uid, {
          roleUid: Role.builtInByName("owner")!.uid,
          ttl: "60s"
        })
        yield* TestClock.adjust("61 seconds")
        assert.strictEqual((yield* redeem(shortLived.code!)).message, "Precondition failed: the invite has expired")
        assert.strictEqual(yield* held, 2)
      })))

    it.effect("unknown, tampered or malformed codes; redeeming for someone else", () =>
      withArbor(Effect.gen(function*() {
        const { newcomer, org, team } = yield* setup
        const invites = yield* GroupInvites.GroupInvites
        const invite = yield* invites.create(Principal.system, team.uid, { roleUid: viewer })
        const as = Principal.identity(newcomer.uid)
        const tampered = `${invite.code!.slice(0, -1)}${invite.code!.endsWith("A") ? "B" : "A"}`
        assert.strictEqual(
          (yield* Refusal.of(invites.redeem(as, tampered, { identityUid: newcomer.uid })))._tag,
          "NotFound"
        )
        assert.deepStrictEqual(
          fieldsOf(yield* Refusal.of(invites.redeem(as, "garbage", { identityUid: newcomer.uid }))),
          ["code"]
        )
        const other = yield* principalWith(org.uid, "other", "viewer", [])
        const forSomeoneElse = yield* Refusal.of(invites.redeem(other, invite.code!, { identityUid: newcomer.uid }))
        assert.strictEqual(forSomeoneElse._tag, "PermissionDenied")
      })))

    it.effect("redeeming with one's own token: never a narrowed one; the token's verified email, vouched as at sign-in", () =>
      withArbor(Effect.gen(function*() {
        const { newcomer, org, team } = yield* setup
        const invites = yield* GroupInvites.GroupInvites
        const bindings = yield* RoleBindings.RoleBindings
        const held = () => Effect.map(bindings.list(Principal.system, { identity: newcomer.uid }), (page) => page.items)
        const open = yield* invites.create(Principal.system, team.uid, { roleUid: viewer })
        // DECISIONS §8: a narrowed token of a person does not act on their own identity.
        const narrowed = Principal.identity(newcomer.uid, { narrowed: { capabilities: ["identity.list"] } })
        const refused = yield* Refusal.of(invites.redeemOwn(narrowed, { code: open.code! }))
        assert.strictEqual(refused._tag, "PermissionDenied")
        assert.lengthOf(yield* held(), 0)

        // An invite naming an email is redeemed with the email the caller's token carries (verified at sign-in).
        const named = yield* invites.create(Principal.system, team.uid, { roleUid: viewer, email: "new@example.com" })
        const withEmail = Principal.identity(newcomer.uid, { email: "New@example.com" })
        const bound = yield* invites.redeemOwn(withEmail, { code: named.code! })
        assert.strictEqual(bound.group.uid, team.uid)
        // A token without that email, or whose email only another organization's provider vouched for, is refused.
        const again = yield* invites.create(Principal.system, team.uid, { roleUid: viewer, email: "new@example.com" })
        const elsewhere = yield* organization("elsewhere")
        const vouchedElsewhere = Principal.identity(newcomer.uid, {
          email: "new@example.com",
          provider: Uid.makeChild(elsewhere.uid)
        })
        for (const as of [Principal.identity(newcomer.uid), vouchedElsewhere]) {
          const mismatch = yield* Refusal.of(invites.redeemOwn(as, { code: again.code! }))
          assert.strictEqual(mismatch.message, "Precondition failed: the invite is for another email address")
        }
        const vouchedHere = Principal.identity(newcomer.uid, {
          email: "new@example.com",
          provider: Uid.makeChild(org.uid)
        })
        assert.strictEqual((yield* invites.redeemOwn(vouchedHere, { code: again.code! })).group.uid, team.uid)
      })))
  })

  it.effect("no escalation: inviting to a role needs its capabilities; an invited role cannot be deleted", () =>
    withArbor(Effect.gen(function*() {
      const { org, team } = yield* setup
      const roles = yield* Roles.Roles
      const inviterRole = yield* roles.create(Principal.system, org.uid, {
        name: "inviter",
        capabilities: ["group_invites.create", "group_invites.list", "groups.list", "roles.list"]
      })
      const inviter = yield* principalWith(org.uid, "inviter", "viewer", [])
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: inviter.identityUid,
        roleUid: inviterRole.uid
      })
      const invites = yield* GroupInvites.GroupInvites
      assert.strictEqual(
        (yield* Refusal.of(invites.create(inviter, team.uid, { roleUid: viewer })))._tag,
        "PermissionDenied"
      )
      const custom = yield* roles.create(Principal.system, org.uid, { name: "lister", capabilities: ["groups.list"] })
      yield* invites.create(inviter, team.uid, { roleUid: custom.uid })
      assert.strictEqual(
        (yield* Refusal.of(roles.delete(Principal.system, custom.uid))).message,
        "Precondition failed: cannot delete a role that group invites grant"
      )
    })))
})
