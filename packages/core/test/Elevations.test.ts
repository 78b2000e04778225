/**
 * Just-in-time elevation (DECISIONS §21): an eligibility, an elevation asked with a reason, approved by another
 * identity holding the approver role, an expiring binding that ends with the elevation's eligibility or its approver's
 * authority, and every step in the change log.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import {
  Access,
  Arbor,
  Elevations,
  Events,
  Identities,
  Principal,
  Repository,
  Role,
  RoleBinding,
  RoleBindings,
  Roles,
  type Store
} from "../src/index.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services | Store.Store>) =>
  Effect.provide(effect, Arbor.layerMemory)

const roleOf = (name: string) => Role.builtInByName(name)!.uid

const uidOf = (principal: Principal.Principal) => principal._tag === "Identity" ? principal.uid : ""

/** The refusal of `effect`: its tag and reason, or a failure saying it succeeded. */
const refusalOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.isRight(result)
      ? Effect.dieMessage(`expected a refusal, got ${JSON.stringify(result.right)}`)
      : Effect.succeed({ tag: result.left._tag, reason: (result.left as { readonly reason?: string }).reason }))

/**
 * An organization with a `prod` folder; an owner, a deployer eligible for `editor` at prod for at most 2 h with an
 * approval by an `owner` there, and a second owner to approve.
 */
const setUp = (approval: boolean) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse("2026-11-29T09:00:00Z"))
    const org = yield* organization("acme")
    const prod = yield* folder(org.uid, "prod")
    const owner = yield* principalWith(org.uid, "owner", "owner")
    const approver = yield* principalWith(org.uid, "approver", "owner")
    const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
      name: "deployer",
      claimMatch: claimMatch("deployer")
    })
    const deployer = Principal.identity(identity.uid)
    const elevations = yield* Elevations.Elevations
    const eligibility = yield* elevations.createEligibility(owner, prod.uid, {
      identityUid: identity.uid,
      roleUid: roleOf("editor"),
      maxDuration: "7200s",
      ...(approval ? { approverRoleUid: roleOf("owner") } : {})
    })
    const access = yield* Access.Access
    return {
      org,
      prod,
      owner,
      approver,
      deployer,
      eligibility,
      elevations,
      holds: access.can(deployer, "repo.create", prod.uid)
    }
  })

describe("Elevations (DECISIONS §21)", () => {
  it.effect("without approval: granted at once for the time asked, an expiring binding, ended with no write", () =>
    withArbor(Effect.gen(function*() {
      const { deployer, elevations, holds, prod } = yield* setUp(false)
      assert.isFalse(yield* holds)
      const tooLong = yield* refusalOf(
        elevations.elevate(deployer, prod.uid, { roleUid: roleOf("editor"), reason: "hotfix", duration: "7201s" })
      )
      assert.strictEqual(tooLong.tag, "InvalidArgument")
      const noReason = yield* refusalOf(
        elevations.elevate(deployer, prod.uid, { roleUid: roleOf("editor"), reason: " ", duration: "3600s" })
      )
      assert.strictEqual(noReason.tag, "InvalidArgument")
      const granted = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("editor"),
        reason: "hotfix INC-7",
        duration: "3600s"
      })
      assert.strictEqual(granted.state, "ACTIVE")
      assert.strictEqual(granted.expireTime?.epochMillis, Date.parse("2026-11-29T10:00:00Z"))
      assert.isTrue(yield* holds)
      const binding = yield* (yield* RoleBindings.RoleBindings).get(Principal.system, granted.bindingUid!)
      assert.strictEqual(binding.expireTime?.epochMillis, Date.parse("2026-11-29T10:00:00Z"))
      yield* TestClock.adjust("1 hour")
      assert.isFalse(yield* holds, "ended at its time, with no write")
      assert.strictEqual((yield* elevations.get(deployer, granted.uid)).state, "ENDED")
    })))

  it.effect("only its identity elevates; the requester cannot approve its own; another identity with the role can", () =>
    withArbor(Effect.gen(function*() {
      const { approver, deployer, elevations, holds, org, owner, prod } = yield* setUp(true)
      assert.strictEqual(
        (yield* refusalOf(
          elevations.elevate(owner, prod.uid, { roleUid: roleOf("editor"), reason: "me too", duration: "600s" })
        )).tag,
        "NotFound"
      )
      const asked = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("editor"),
        reason: "deploy 1.2",
        duration: "3600s"
      })
      assert.strictEqual(asked.state, "PENDING")
      assert.isFalse(yield* holds, "pending grants nothing")
      assert.deepStrictEqual(yield* refusalOf(elevations.approve(deployer, asked.uid)), {
        tag: "PermissionDenied",
        reason: "SELF_APPROVAL"
      })
      // Someone who may list bindings there but does not hold the approver role cannot approve.
      const viewer = yield* principalWith(org.uid, "viewer", "viewer")
      assert.strictEqual((yield* refusalOf(elevations.approve(viewer, asked.uid))).tag, "PermissionDenied")
      const approved = yield* elevations.approve(approver, asked.uid)
      assert.deepInclude(approved, { state: "ACTIVE" })
      assert.strictEqual(approved.approverUid, approver._tag === "Identity" ? approver.uid : null)
      assert.isTrue(yield* holds)
      assert.strictEqual((yield* refusalOf(elevations.approve(owner, asked.uid))).reason, "NOT_PENDING")
      // The system is no identity: it approves nothing either.
      const again = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("editor"),
        reason: "again",
        duration: "600s"
      })
      assert.strictEqual(
        (yield* refusalOf(elevations.approve(Principal.system, again.uid))).reason,
        "APPROVER_NOT_AN_IDENTITY"
      )
      assert.strictEqual((yield* elevations.deny(owner, again.uid)).state, "DENIED")
    })))

  it.effect("an approver who may list no bindings finds what waits for them (approver=<own uid>), and only that", () =>
    withArbor(Effect.gen(function*() {
      const { deployer, elevations, org, owner, prod } = yield* setUp(false)
      // Release managers approve and may list nothing else.
      const role = yield* (yield* Roles.Roles).create(owner, org.uid, {
        name: "release-approver",
        capabilities: ["groups.list"]
      })
      const manager = yield* principalWith(org.uid, "release-manager", "viewer", [])
      const managerUid = manager.identityUid
      yield* (yield* RoleBindings.RoleBindings).create(owner, org.uid, { identityUid: managerUid, roleUid: role.uid })
      const deployerUid = deployer._tag === "Identity" ? deployer.uid : ""
      const eligibility = yield* elevations.createEligibility(owner, prod.uid, {
        identityUid: deployerUid,
        roleUid: roleOf("registry.pull"),
        maxDuration: "3600s",
        approverRoleUid: role.uid
      })
      const asked = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("registry.pull"),
        reason: "release 1.3",
        duration: "1800s"
      })
      assert.strictEqual(asked.eligibilityUid, eligibility.uid)
      assert.deepStrictEqual((yield* elevations.list(manager, { state: "PENDING" })).items, [], "it may list nothing")
      const waiting = yield* elevations.list(manager, { approver: managerUid })
      assert.deepStrictEqual(waiting.items.map((e) => e.uid), [asked.uid])
      assert.deepStrictEqual((yield* elevations.list(deployer, { approver: deployerUid })).items, [], "not one's own")
      assert.strictEqual((yield* refusalOf(elevations.list(manager, { approver: deployerUid }))).tag, "InvalidArgument")
      assert.strictEqual((yield* elevations.approve(manager, asked.uid)).state, "ACTIVE")
      assert.deepStrictEqual((yield* elevations.list(manager, { approver: managerUid })).items, [], "decided")
    })))

  it.effect("an identity with the role for good needs no elevation; self-approval is refused even to an owner", () =>
    withArbor(Effect.gen(function*() {
      const { elevations, owner, prod } = yield* setUp(true)
      yield* elevations.createEligibility(owner, prod.uid, {
        identityUid: owner._tag === "Identity" ? owner.uid : "",
        roleUid: roleOf("viewer"),
        maxDuration: "600s",
        approverRoleUid: roleOf("owner")
      })
      const asked = yield* elevations.elevate(owner, prod.uid, {
        roleUid: roleOf("viewer"),
        reason: "look",
        duration: "600s"
      })
      assert.strictEqual((yield* refusalOf(elevations.approve(owner, asked.uid))).reason, "SELF_APPROVAL")
    })))

  it.effect("deleting the eligibility ends pending and granted elevations at once; each step logged", () =>
    withArbor(Effect.gen(function*() {
      const { approver, deployer, eligibility, elevations, holds, owner, prod } = yield* setUp(true)
      const granted = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("editor"),
        reason: "deploy",
        duration: "3600s"
      })
      yield* elevations.approve(approver, granted.uid)
      assert.isTrue(yield* holds)
      yield* elevations.deleteEligibility(owner, eligibility.uid)
      assert.isFalse(yield* holds, "ended with its eligibility")
      assert.strictEqual((yield* elevations.get(deployer, granted.uid)).state, "REVOKED")
      const types = (yield* (yield* Events.Events).after(undefined, 1000)).map((e) => e.type)
      for (
        const type of [
          "dev.chainguard.api.iam.eligibilities.created.v1",
          "dev.chainguard.api.iam.elevations.created.v1",
          "dev.chainguard.api.iam.elevations.updated.v1",
          "dev.chainguard.api.iam.eligibilities.deleted.v1",
          "dev.chainguard.api.iam.rolebindings.deleted.v1"
        ]
      ) assert.include(types, type)
    })))

  it.effect("an approver who loses the approver role ends what they approved, even when their binding just ends", () =>
    withArbor(Effect.gen(function*() {
      const { deployer, elevations, holds, org, prod } = yield* setUp(true)
      // An approver whose owner binding ends at 09:30.
      const brief = yield* principalWith(org.uid, "brief", "viewer", [])
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: brief.identityUid,
        roleUid: roleOf("owner"),
        expireTime: "2026-11-29T09:30:00Z"
      })
      const asked = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("editor"),
        reason: "deploy",
        duration: "7200s"
      })
      yield* elevations.approve(brief, asked.uid)
      assert.isTrue(yield* holds)
      yield* TestClock.adjust("30 minutes")
      assert.isFalse(yield* holds, "the approver's authority ended: so did the elevation")
    })))

  it.effect("an eligibility needs what binding its role needs; its maker's demotion ends its elevations", () =>
    withArbor(Effect.gen(function*() {
      const { deployer, elevations, holds, org, prod } = yield* setUp(false)
      const lead = yield* principalWith(org.uid, "lead", "viewer", [])
      const bindings = yield* RoleBindings.RoleBindings
      const leadOwner = yield* bindings.create(Principal.system, prod.uid, {
        identityUid: lead.identityUid,
        roleUid: roleOf("owner")
      })
      const viewerOnly = yield* principalWith(org.uid, "viewer-only", "viewer")
      const escalation = yield* refusalOf(elevations.createEligibility(viewerOnly, prod.uid, {
        identityUid: deployer._tag === "Identity" ? deployer.uid : "",
        roleUid: roleOf("owner"),
        maxDuration: "600s"
      }))
      assert.strictEqual(escalation.tag, "PermissionDenied")
      yield* elevations.createEligibility(lead, prod.uid, {
        identityUid: deployer._tag === "Identity" ? deployer.uid : "",
        roleUid: roleOf("owner"),
        maxDuration: "3600s"
      })
      yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("owner"),
        reason: "migration",
        duration: "3600s"
      })
      assert.isTrue(yield* holds)
      yield* bindings.delete(Principal.system, leadOwner.uid)
      assert.isFalse(yield* holds, "its maker could no longer bind it: it gives nothing")
    })))

  it.effect("a narrowing bounds every act of its token: approve, deny, read, the approver's list, asking", () =>
    withArbor(Effect.gen(function*() {
      const { approver, deployer, elevations, holds, org, prod } = yield* setUp(true)
      const elsewhere = yield* folder(org.uid, "elsewhere")
      const narrowedTo = (principal: Principal.Principal, narrowed: Principal.Narrowing) =>
        principal._tag === "Identity" ? Principal.identity(principal.uid, { narrowed }) : principal
      const toElsewhere = { capabilities: ["repo.list" as const], scopes: [elsewhere.uid] }
      // The deployer's token narrowed elsewhere neither asks at prod nor reads what it asked there.
      const asking = yield* refusalOf(elevations.elevate(narrowedTo(deployer, toElsewhere), prod.uid, {
        roleUid: roleOf("editor"),
        reason: "deploy",
        duration: "600s"
      }))
      assert.deepStrictEqual(asking, { tag: "PermissionDenied", reason: "TOKEN_NARROWED" })
      const asked = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("editor"),
        reason: "deploy",
        duration: "600s"
      })
      assert.strictEqual(
        (yield* refusalOf(elevations.get(narrowedTo(deployer, toElsewhere), asked.uid))).tag,
        "NotFound"
      )
      assert.deepStrictEqual(
        (yield* elevations.listEligibilities(narrowedTo(deployer, toElsewhere), {
          identity: deployer._tag === "Identity" ? deployer.uid : ""
        })).items,
        []
      )
      // The approver's token narrowed elsewhere neither approves, denies, reads nor finds it.
      const narrowedApprover = narrowedTo(approver, toElsewhere)
      assert.deepStrictEqual(yield* refusalOf(elevations.approve(narrowedApprover, asked.uid)), {
        tag: "NotFound",
        reason: undefined
      })
      assert.strictEqual((yield* refusalOf(elevations.deny(narrowedApprover, asked.uid))).tag, "NotFound")
      const approverUid = approver._tag === "Identity" ? approver.uid : ""
      assert.deepStrictEqual((yield* elevations.list(narrowedApprover, { approver: approverUid })).items, [])
      // Narrowed to prod but to fewer capabilities than the approver role's: it reads, and still may not approve.
      const atProd = narrowedTo(approver, { capabilities: ["role_bindings.list"], scopes: [prod.uid] })
      assert.strictEqual((yield* elevations.get(atProd, asked.uid)).uid, asked.uid)
      assert.deepStrictEqual(yield* refusalOf(elevations.approve(atProd, asked.uid)), {
        tag: "PermissionDenied",
        reason: "NOT_AN_APPROVER"
      })
      assert.isFalse(yield* holds)
      // A narrowing that reaches the whole of the act lets it through.
      const whole = narrowedTo(approver, { scopes: [prod.uid] })
      assert.deepStrictEqual((yield* elevations.list(whole, { approver: approverUid })).items.map((e) => e.uid), [
        asked.uid
      ])
      assert.strictEqual((yield* elevations.approve(whole, asked.uid)).state, "ACTIVE")
      assert.isTrue(yield* holds)
    })))

  it.effect("an elevation's binding changes only through the elevation, and grants only within the elevation's time", () =>
    withArbor(Effect.gen(function*() {
      const { deployer, elevations, holds, owner, prod } = yield* setUp(false)
      const granted = yield* elevations.elevate(deployer, prod.uid, {
        roleUid: roleOf("editor"),
        reason: "deploy",
        duration: "3600s"
      })
      const bindings = yield* RoleBindings.RoleBindings
      const binding = granted.bindingUid!
      assert.strictEqual(
        (yield* refusalOf(bindings.update(deployer, binding, { expireTime: null }))).tag,
        "PermissionDenied"
      )
      for (const by of [owner, Principal.system]) {
        const made = yield* refusalOf(bindings.update(by, binding, { expireTime: null }, "expireTime"))
        assert.deepStrictEqual(made, { tag: "FailedPrecondition", reason: "ELEVATION_BINDING" })
        assert.deepStrictEqual(yield* refusalOf(bindings.delete(by, binding)), made)
      }
      // A binding row that says otherwise (written before this rule) still grants only within the elevation's time.
      const rows = yield* Repository.make(RoleBinding.table, RoleBinding.Record)
      const row = Option.getOrThrow(yield* rows.get(binding))
      yield* rows.update({ ...row, expireTime: null })
      assert.isTrue(yield* holds)
      yield* TestClock.adjust("3601 seconds")
      assert.isFalse(yield* holds, "its time is up, whatever its binding says")
      assert.strictEqual((yield* elevations.get(deployer, granted.uid)).state, "ENDED")
    })))

  it.effect("an elevated owner never keeps an organization owned: the owner rule counts no elevation's binding", () =>
    withArbor(Effect.gen(function*() {
      const { approver, deployer, elevations, org, owner } = yield* setUp(false)
      yield* elevations.createEligibility(owner, org.uid, {
        identityUid: deployer._tag === "Identity" ? deployer.uid : "",
        roleUid: roleOf("owner"),
        maxDuration: "3600s"
      })
      const granted = yield* elevations.elevate(deployer, org.uid, {
        roleUid: roleOf("owner"),
        reason: "take over",
        duration: "3600s"
      })
      // Even with its expiry gone (a row written before the rule that refuses it), the elevation's binding is no owner.
      const rows = yield* Repository.make(RoleBinding.table, RoleBinding.Record)
      yield* rows.update({ ...Option.getOrThrow(yield* rows.get(granted.bindingUid!)), expireTime: null })
      const bindings = yield* RoleBindings.RoleBindings
      // The other owner's binding first, then that of the eligibility's maker (on whose authority the elevation rests).
      const owners = (yield* bindings.list(Principal.system, { group: org.uid, role: roleOf("owner") })).items
        .filter((b) => b.uid !== granted.bindingUid)
        .sort((a, b) => (a.identity.uid === uidOf(owner) ? 1 : 0) - (b.identity.uid === uidOf(owner) ? 1 : 0))
      assert.deepStrictEqual(owners.map((b) => b.identity.uid), [approver, owner].map(uidOf))
      yield* bindings.delete(deployer, owners[0]!.uid)
      const refused = yield* refusalOf(bindings.delete(deployer, owners[1]!.uid))
      assert.deepStrictEqual(refused, { tag: "FailedPrecondition", reason: "LAST_OWNER" })
    })))
})
