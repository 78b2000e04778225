import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import {
  Access,
  Arbor,
  AuditTrail,
  Capability,
  Events,
  Identities,
  Principal,
  Role,
  RoleBinding,
  RoleBindings,
  Roles
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
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

  it.effect("filters by identity, group and role; a caller sees only the bindings it may list; bad uids named", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const other = yield* folder(org.uid, "other")
      const alice = yield* principalWith(org.uid, "alice", "viewer", [team.uid, other.uid])
      const bob = yield* principalWith(org.uid, "bob", "owner", [team.uid])
      const bindings = yield* RoleBindings.RoleBindings
      yield* bindings.create(Principal.system, team.uid, { identityUid: alice.identityUid, roleUid: owner })
      const shown = (options: RoleBindings.RoleBindingListOptions, as: Principal.Principal = Principal.system) =>
        Effect.map(
          bindings.list(as, options),
          (page) => page.items.map((b) => `${b.identity.name}:${b.role.name}@${b.group.name}`).sort()
        )
      assert.deepStrictEqual(yield* shown({ identity: alice.identityUid }), [
        "alice:owner@team",
        "alice:viewer@other",
        "alice:viewer@team"
      ])
      assert.deepStrictEqual(yield* shown({ role: owner }), ["alice:owner@team", "bob:owner@team"])
      assert.deepStrictEqual(yield* shown({ group: team.uid, role: viewer }), ["alice:viewer@team"])
      assert.deepStrictEqual(yield* shown({ group: org.uid }), [])
      assert.strictEqual((yield* bindings.list(Principal.system, { identity: alice.identityUid })).totalCount, 3)
      // Bob, an owner of team only, sees alice's bindings there and not in other (her identity, in acme, by uid).
      assert.deepStrictEqual(yield* shown({ identity: alice.identityUid }, bob), [":owner@team", ":viewer@team"])
      const refused = yield* Refusal.of(bindings.list(Principal.system, { identity: "alice", role: "viewer" }))
      assert.strictEqual(refused._tag, "InvalidArgument")
      assert.deepStrictEqual(
        refused._tag === "InvalidArgument" ? refused.violations.map((v) => v.field) : [],
        ["identity", "role"]
      )
    })))

  it.effect("an identity lists its own bindings wherever it holds them, listing rights or not; never another's", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const repos = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "repo-reader",
        capabilities: ["repo.list"]
      })
      const carol = yield* principalWith(org.uid, "carol", "viewer", [])
      const alice = yield* principalWith(org.uid, "alice", "viewer", [team.uid])
      const bindings = yield* RoleBindings.RoleBindings
      yield* bindings.create(Principal.system, team.uid, { identityUid: carol.identityUid, roleUid: repos.uid })
      const own = yield* bindings.list(carol, { identity: carol.identityUid })
      assert.deepStrictEqual(own.items.map((b) => [b.group.uid, b.role.name]), [[team.uid, "repo-reader"]])
      assert.strictEqual(own.totalCount, 1)
      // Her own in full: where she holds a role, and which, though she may list neither folders nor roles there.
      assert.strictEqual(own.items[0]!.group.name, "team")
      // Through another list (bindings of her folder, as the system), hers are shown as any other's.
      const asOthersSee = yield* bindings.list(carol, { group: team.uid })
      assert.strictEqual(asOthersSee.totalCount, 0)
      // Anyone else's, or all of them, only where she may list bindings: nowhere.
      assert.strictEqual((yield* bindings.list(carol, { identity: alice.identityUid })).totalCount, 0)
      assert.strictEqual((yield* bindings.list(carol, {})).totalCount, 0)
    })))

  it.effect("a batch binds up to 25 in one group, all or none, each under the no-escalation rule", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const binderRole = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "binder",
        capabilities: [...Capability.all.filter((c) => c.endsWith(".list")), "role_bindings.create"]
      })
      const binder = yield* principalWith(org.uid, "binder", "viewer", [])
      const bindings = yield* RoleBindings.RoleBindings
      yield* bindings.create(Principal.system, org.uid, { identityUid: binder.identityUid, roleUid: binderRole.uid })
      const [a, b, c] = yield* Effect.forEach(["a", "b", "c"], (name) => principalWith(org.uid, name, "viewer", []))
      const bound = () => Effect.map(bindings.list(Principal.system, { group: team.uid }), (page) => page.totalCount)

      // The shared role, or each request's own (the same), in the order asked.
      const made = yield* bindings.batchCreate(binder, {
        parent: team.uid,
        roleUid: viewer,
        requests: [
          { roleBinding: { identityUid: a!.identityUid } },
          { parent: team.uid, roleBinding: { identityUid: b!.identityUid, roleUid: viewer } }
        ]
      })
      assert.deepStrictEqual(made.map((m) => [m.identity.uid, m.role.uid, m.group.uid]), [
        [a!.identityUid, viewer, team.uid],
        [b!.identityUid, viewer, team.uid]
      ])
      const logged = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, {
        types: [RoleBinding.batchCreatedType]
      })
      assert.sameMembers(logged.items.map((e) => e.subject), made.map((m) => m.uid))

      // One request the binder may not make (an owner binding: escalation), or one that exists: nothing is made.
      const escalating = yield* Refusal.of(bindings.batchCreate(binder, {
        parent: team.uid,
        requests: [
          { roleBinding: { identityUid: c!.identityUid, roleUid: viewer } },
          { roleBinding: { identityUid: c!.identityUid, roleUid: owner } }
        ]
      }))
      assert.strictEqual(escalating._tag, "PermissionDenied")
      const existing = yield* Refusal.of(bindings.batchCreate(binder, {
        parent: team.uid,
        roleUid: viewer,
        requests: [{ roleBinding: { identityUid: c!.identityUid } }, { roleBinding: { identityUid: a!.identityUid } }]
      }))
      assert.strictEqual(existing._tag, "AlreadyExists")
      assert.strictEqual(yield* bound(), 2)

      // Bad batches are refused before anything is read, each fault named.
      const fields = (input: unknown) =>
        Effect.map(
          Refusal.of(bindings.batchCreate(binder, input)),
          (e) => e._tag === "InvalidArgument" ? e.violations.map((v) => v.field) : [e._tag]
        )
      const one = { roleBinding: { identityUid: c!.identityUid } }
      assert.deepStrictEqual(yield* fields({ parent: team.uid, roleUid: viewer, requests: [] }), ["requests"])
      assert.deepStrictEqual(
        yield* fields({ parent: team.uid, roleUid: viewer, requests: Array.from({ length: 26 }, () => one) }),
        ["requests"]
      )
      assert.deepStrictEqual(yield* fields({ roleUid: viewer, requests: [one] }), ["parent"])
      assert.deepStrictEqual(
        yield* fields({
          parent: team.uid,
          roleUid: viewer,
          requests: [
            { parent: org.uid, ...one },
            { roleBinding: { identityUid: a!.identityUid, roleUid: owner } },
            one
          ]
        }),
        ["requests[0].parent", "requests[1].roleBinding.roleUid", "requests[2]"]
      )
      assert.deepStrictEqual(yield* fields({ parent: team.uid, requests: [one] }), ["requests[0].roleBinding.roleUid"])
      assert.strictEqual(yield* bound(), 2)
    })))

  it.effect("one binding per group, identity and role; delete is idempotent", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const user = yield* principalWith(org.uid, "user", "viewer")
      const bindings = yield* RoleBindings.RoleBindings
      const dup = yield* Refusal.of(
        bindings.create(Principal.system, org.uid, { identityUid: user.identityUid, roleUid: viewer })
      )
      assert.strictEqual(dup._tag, "AlreadyExists")
      const second = yield* bindings.create(Principal.system, org.uid, {
        identityUid: user.identityUid,
        roleUid: Role.builtInByName("editor")!.uid
      })
      yield* bindings.delete(Principal.system, second.uid)
      yield* bindings.delete(Principal.system, second.uid)
      assert.strictEqual((yield* Refusal.of(bindings.get(Principal.system, second.uid)))._tag, "NotFound")
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

      const escalate = yield* Refusal.of(
        bindings.create(binder, team.uid, { identityUid: target.identityUid, roleUid: owner })
      )
      assert.strictEqual(escalate._tag, "PermissionDenied")
      const self = yield* Refusal.of(
        bindings.create(binder, team.uid, { identityUid: binder.identityUid, roleUid: owner })
      )
      assert.strictEqual(self._tag, "PermissionDenied")
      const fine = yield* bindings.create(binder, team.uid, { identityUid: target.identityUid, roleUid: viewer })
      const raise = yield* Refusal.of(bindings.update(binder, fine.uid, { roleUid: owner }))
      assert.strictEqual(raise._tag, "PermissionDenied")
      assert.strictEqual((yield* bindings.get(Principal.system, fine.uid)).role.name, "viewer")
    })))

  it.effect("references must be readable: a role or identity the caller cannot see is denied, existing or not", () =>
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
      const role = yield* Refusal.of(
        bindings.create(ownerA, a.uid, { identityUid: ownerA.identityUid, roleUid: foreignRole.uid })
      )
      assert.strictEqual(
        role.message,
        `Permission 'roles.list' denied on resource '${foreignRole.uid}' (or it might not exist)`
      )
      const hidden = yield* Refusal.of(bindings.create(ownerA, a.uid, { identityUid: identityB.uid, roleUid: viewer }))
      const missing = yield* Refusal.of(
        bindings.create(ownerA, a.uid, { identityUid: `${b.uid}/0123456789abcdef`, roleUid: viewer })
      )
      assert.strictEqual(
        hidden.message,
        `Permission 'identity.list' denied on resource '${identityB.uid}' (or it might not exist)`
      )
      assert.strictEqual(missing._tag, "PermissionDenied")
      const absentRole = yield* Refusal.of(
        bindings.create(ownerA, a.uid, { identityUid: ownerA.identityUid, roleUid: `${b.uid}/0123456789abcdef` })
      )
      assert.strictEqual(absentRole._tag, "PermissionDenied")
      const team = yield* folder(a.uid, "team")
      const teamRole = yield* (yield* Roles.Roles).create(Principal.system, team.uid, {
        name: "t",
        capabilities: ["groups.list"]
      })
      const above = yield* Refusal.of(
        bindings.create(ownerA, a.uid, { identityUid: ownerA.identityUid, roleUid: teamRole.uid })
      )
      assert.strictEqual(above._tag, "NotFound", "a role defined below the group cannot be bound at it")
      yield* bindings.create(ownerA, team.uid, { identityUid: ownerA.identityUid, roleUid: teamRole.uid })
    })))
})

describe("RoleBindings hydration", () => {
  it.effect("embeds only what the caller may read: other references by uid alone", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const secretRole = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "secret role",
        capabilities: ["groups.list"]
      })
      const secretIdentity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "secret identity",
        claimMatch: claimMatch("secret")
      })
      const bindings = yield* RoleBindings.RoleBindings
      const binding = yield* bindings.create(Principal.system, team.uid, {
        identityUid: secretIdentity.uid,
        roleUid: secretRole.uid
      })
      // An auditor may list bindings in the team, and nothing else.
      const auditorRole = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "auditor",
        capabilities: ["role_bindings.list"]
      })
      const auditor = yield* principalWith(org.uid, "auditor", "viewer", [])
      yield* bindings.create(Principal.system, team.uid, { identityUid: auditor.identityUid, roleUid: auditorRole.uid })
      const seen = (yield* bindings.list(auditor, { childrenOf: team.uid })).items.find((b) => b.uid === binding.uid)!
      const got = yield* bindings.get(auditor, binding.uid)
      for (const b of [seen, got]) {
        assert.deepStrictEqual(b.identity, {
          uid: secretIdentity.uid,
          name: "",
          description: "",
          subject: "",
          issuer: ""
        })
        assert.deepStrictEqual(b.role, { uid: secretRole.uid, name: "", description: "" })
        assert.deepStrictEqual(b.group, { uid: team.uid, name: "", description: "" })
      }
      // The system principal sees everything.
      const full = yield* bindings.get(Principal.system, binding.uid)
      assert.strictEqual(full.identity.name, "secret identity")
      assert.strictEqual(full.identity.subject, "secret")
      assert.strictEqual(full.role.name, "secret role")
      assert.strictEqual(full.group.name, "team")
    })))
})

describe("RoleBindings with a window (DECISIONS §21)", () => {
  /** An organization, a folder and an identity to bind there, at 2026-11-29T00:00:00Z by the test clock. */
  const setUp = Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse("2026-11-29T00:00:00Z"))
    const org = yield* organization("acme")
    const team = yield* folder(org.uid, "team")
    const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
      name: "contractor",
      claimMatch: claimMatch("contractor")
    })
    const principal = Principal.identity(identity.uid)
    const access = yield* Access.Access
    return { org, team, identity, principal, holds: access.can(principal, "repo.create", team.uid) }
  })
  const editor = Role.builtInByName("editor")!.uid

  it.effect("an expiring binding grants until its end and nothing after, with no write and the decision warm", () =>
    withArbor(Effect.gen(function*() {
      const { holds, identity, team } = yield* setUp
      const bindings = yield* RoleBindings.RoleBindings
      const bound = yield* bindings.create(Principal.system, team.uid, {
        identityUid: identity.uid,
        roleUid: editor,
        expireTime: "2026-11-29T08:00:00Z"
      })
      assert.strictEqual(DateTime.formatIso(bound.expireTime!), "2026-11-29T08:00:00.000Z")
      assert.isTrue(yield* holds)
      assert.isTrue(yield* holds, "warm: from the cache")
      yield* TestClock.adjust(8 * 3_600_000 - 1)
      assert.isTrue(yield* holds)
      yield* TestClock.adjust("1 millis")
      assert.isFalse(yield* holds, "at its end, from the cache's own reading of the clock")
      assert.isFalse(yield* holds)
      // Its end is one change-log entry, by the system, written by the engine's sweep without anyone asking.
      const endsOf = Effect.map(
        Effect.flatMap(Events.Events, (events) => events.after(undefined, 10_000)),
        (entries) => entries.filter((e) => e.type === RoleBinding.endedType && e.subject === bound.uid)
      )
      for (let i = 0; i < 100 && (yield* endsOf).length === 0; i++) yield* TestClock.adjust("10 millis")
      const [ended, ...again] = yield* endsOf
      assert.strictEqual(ended?.actor.subject, "system")
      yield* TestClock.adjust("2 hours")
      assert.deepStrictEqual([...again, ...(yield* endsOf).slice(1)], [], "once")
      // Listed still, as ended, until deleted.
      const listed = yield* bindings.list(Principal.system, { identity: identity.uid })
      assert.deepStrictEqual(listed.items.map((b) => RoleBinding.stateAt(b, Date.parse("2026-11-29T08:00:00Z"))), [
        "ENDED"
      ])
      // Extended by an update: it grants again.
      yield* bindings.update(Principal.system, bound.uid, { expireTime: "2026-11-30T00:00:00Z" }, "expireTime")
      assert.isTrue(yield* holds)
    })))

  it.effect("a binding that starts later grants from its start; windows are checked when written", () =>
    withArbor(Effect.gen(function*() {
      const { holds, identity, team } = yield* setUp
      const bindings = yield* RoleBindings.RoleBindings
      const bad = (input: Record<string, unknown>) =>
        Effect.map(
          Refusal.of(
            bindings.create(Principal.system, team.uid, { identityUid: identity.uid, roleUid: editor, ...input })
          ),
          (e) => [e._tag, (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.[0]?.field]
        )
      assert.deepStrictEqual(yield* bad({ expireTime: "2026-11-28T23:59:59Z" }), ["InvalidArgument", "expireTime"])
      assert.deepStrictEqual(
        yield* bad({ startTime: "2026-11-29T10:00:00Z", expireTime: "2026-11-29T09:00:00Z" }),
        ["InvalidArgument", "expireTime"]
      )
      assert.deepStrictEqual(yield* bad({ expireTime: "tomorrow" }), ["InvalidArgument", "expireTime"])
      yield* bindings.create(Principal.system, team.uid, {
        identityUid: identity.uid,
        roleUid: editor,
        startTime: "2026-11-29T09:00:00Z",
        expireTime: "2026-11-29T17:00:00Z"
      })
      assert.isFalse(yield* holds)
      yield* TestClock.adjust("9 hours")
      assert.isTrue(yield* holds)
      yield* TestClock.adjust("8 hours")
      assert.isFalse(yield* holds)
    })))

  it.effect("an identity with a binding that starts later cannot be taken over by one who lacks what it will hold", () =>
    withArbor(Effect.gen(function*() {
      const { identity, org, team } = yield* setUp
      const bindings = yield* RoleBindings.RoleBindings
      yield* bindings.create(Principal.system, org.uid, {
        identityUid: identity.uid,
        roleUid: owner,
        startTime: "2026-11-29T12:00:00Z"
      })
      // Someone who may update identities in the organization, and who holds nothing else there.
      const updater = yield* Roles.Roles.pipe(
        Effect.flatMap((roles) =>
          roles.create(Principal.system, org.uid, {
            name: "updater",
            capabilities: ["identity.update", "identity.list"]
          })
        )
      )
      const mallory = yield* principalWith(org.uid, "mallory", "viewer", [team.uid])
      yield* bindings.create(Principal.system, org.uid, { identityUid: mallory.identityUid, roleUid: updater.uid })
      const repoint = (yield* Identities.Identities).update(mallory, identity.uid, {
        claimMatch: claimMatch("mallory's own")
      })
      assert.strictEqual(
        (yield* Refusal.of(repoint))._tag,
        "PermissionDenied",
        "it would be owner at noon, with no write"
      )
    })))

  it.effect("an organization's last owner cannot be one that ends: an owner binding with an expiry is not one", () =>
    withArbor(Effect.gen(function*() {
      const { identity, org } = yield* setUp
      const bindings = yield* RoleBindings.RoleBindings
      yield* principalWith(org.uid, "boss", "owner")
      const [own] = (yield* bindings.list(Principal.system, { group: org.uid, role: owner })).items
      const expiring = yield* bindings.create(Principal.system, org.uid, {
        identityUid: identity.uid,
        roleUid: owner,
        expireTime: "2026-11-29T08:00:00Z"
      })
      const refused = yield* Refusal.of(bindings.delete(Principal.system, own!.uid))
      assert.strictEqual(refused._tag, "FailedPrecondition")
      const ending = yield* Refusal.of(
        bindings.update(Principal.system, own!.uid, { expireTime: "2026-11-29T08:00:00Z" }, "expireTime")
      )
      assert.strictEqual(ending._tag, "FailedPrecondition")
      yield* bindings.delete(Principal.system, expiring.uid)
    })))
})
