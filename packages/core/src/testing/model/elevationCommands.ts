/**
 * The model suite's commands on just-in-time elevation (DECISIONS §21): eligibilities made and deleted, elevations
 * asked for and approved (by whole and narrowed tokens), and the bindings they make patched and deleted, which only
 * the elevation may change.
 */
import * as Effect from "effect/Effect"
import * as Uid from "../../engine/Uid.js"
import { expect, principalOf, type Real } from "./checks.js"
import type { Actor, Cap, Entity, Model, Narrowing } from "./model.js"
import { Step, type Tick } from "./step.js"

/** A narrowing as a command carries it: capabilities, and the pick of its scope among the groups. */
export interface NarrowingPick {
  readonly caps: ReadonlyArray<Cap>
  readonly scope: number
}

/** The narrowing `pick` names, for an identity's token (the system's is never narrowed). */
const narrowingOf = (model: Model, actor: Actor, pick: NarrowingPick | null): Narrowing | undefined => {
  if (pick === null || actor === "system") return undefined
  const scope = model.pick("known-group", pick.scope)
  return scope === undefined ? undefined : { capabilities: pick.caps, scope }
}

/** The identity uid of `actor` (null: the system). */
const uidOf = (model: Model, actor: Actor): string | null => actor === "system" ? null : model.actorUid.get(actor)!

/** True when `actor`'s token (narrowed or not) holds every capability of role `roleUid` at `group` by its bindings. */
const approves = (model: Model, actor: Actor, narrowing: Narrowing | undefined, roleUid: string, group: string) => {
  if (actor === "system") return false
  const caps = model.entities.get(roleUid)?.caps
  return caps !== undefined && caps.every((c) =>
    model.holdsAs(uidOf(model, actor), c, group) &&
    (narrowing === undefined || (narrowing.capabilities.includes(c) && Uid.isAncestorOrSelf(narrowing.scope, group)))
  )
}

/** True when `actor`'s token (narrowed or not) holds `cap` at `group`. */
const holdsWith = (model: Model, actor: Actor, narrowing: Narrowing | undefined, cap: Cap, group: string) =>
  narrowing === undefined ? model.holds(actor, cap, group) : model.holdsNarrowed(actor, narrowing, cap, group)

/**
 * The binding granting `elevation` makes (replacing one an earlier elevation made there), or AlreadyExists when its
 * identity holds the role there by a binding of its own.
 */
const granted = (model: Model, elevation: Entity) =>
  model.of("binding").some((b) =>
      b.parent === elevation.parent && b.identityUid === elevation.identityUid && b.roleUid === elevation.roleUid &&
      b.elevationUid === undefined
    )
    ? "AlreadyExists"
    : "ok"

const bindFor = (model: Model, elevation: Entity, bindingUid: string, expireTime: number) => {
  for (const b of model.of("binding")) {
    if (
      b.parent === elevation.parent && b.identityUid === elevation.identityUid && b.roleUid === elevation.roleUid &&
      b.elevationUid !== undefined
    ) model.remove(b.uid)
  }
  model.add({
    kind: "binding",
    uid: bindingUid,
    parent: elevation.parent,
    name: "",
    createTime: model.now,
    updateTime: model.now,
    identityUid: elevation.identityUid!,
    roleUid: elevation.roleUid!,
    expireTime,
    elevationUid: elevation.uid
  })
}

export class CreateEligibility extends Step {
  constructor(
    readonly actor: Actor,
    readonly parent: number,
    readonly identity: number,
    readonly role: number,
    readonly approval: boolean,
    readonly approverRole: number,
    tick: Tick
  ) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    // Mostly an identity some actor controls, so that it may ask for the role (less often the owner's, who approves).
    const asking = (["bob", "carol", "bob", "carol", "alice"] as const).map((a) => model.actorUid.get(a)!).filter((
      uid
    ) => model.entities.has(uid))
    const identityUid = this.identity % 4 !== 0 && asking.length > 0
      ? asking[this.identity % asking.length]!
      : model.pick("identity", this.identity)!
    if (identityUid === real.canary) return Effect.void
    const role = model.entities.get(model.pick("role", this.role)!)!
    const approver = this.approval ? model.entities.get(model.pick("role", this.approverRole)!)! : undefined
    const organization = Uid.rootOf(parent as Uid.Uid)
    const readable = (r: Entity) => r.parent === null || model.holdsUnconditionally(this.actor, "roles.list", r.parent)
    const predicted = !model.holds(this.actor, "role_bindings.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : !Uid.isAncestorOrSelf(organization, identityUid)
      ? "InvalidArgument"
      : !readable(role)
      ? "PermissionDenied"
      : role.parent !== null && !Uid.isAncestorOrSelf(role.parent, parent)
      ? "NotFound"
      : !(role.caps ?? []).every((c) => model.holdsUnconditionally(this.actor, c, parent))
      ? "PermissionDenied"
      : approver !== undefined && !readable(approver)
      ? "PermissionDenied"
      : approver !== undefined && approver.parent !== null && !Uid.isAncestorOrSelf(approver.parent, parent)
      ? "NotFound"
      : model.of("eligibility").some((e) =>
          e.parent === parent && e.identityUid === identityUid && e.roleUid === role.uid
        )
      ? "AlreadyExists"
      : "ok"
    return expect(
      label,
      predicted,
      real.elevations.createEligibility(principalOf(model, this.actor), parent, {
        identityUid,
        roleUid: role.uid,
        maxDuration: "3600s",
        ...(approver === undefined ? {} : { approverRoleUid: approver.uid })
      }),
      (e) =>
        model.add({
          kind: "eligibility",
          uid: e.uid,
          parent,
          createTime: model.now,
          updateTime: model.now,
          identityUid,
          roleUid: role.uid,
          approverRoleUid: approver?.uid,
          grantedBy: uidOf(model, this.actor),
          name: `${model.nameOf(identityUid)} may be ${role.name}`
        })
    )
  }
}

export class DeleteEligibility extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("eligibility", this.target)
    if (uid === undefined) return Effect.void
    const predicted = model.holds(this.actor, "role_bindings.delete", model.entities.get(uid)!.parent!)
      ? "ok"
      : "PermissionDenied"
    return expect(label, predicted, real.elevations.deleteEligibility(principalOf(model, this.actor), uid), () => {
      model.remove(uid)
      // Its open elevations are revoked, their bindings deleted.
      for (const elevation of model.of("elevation")) {
        if (elevation.eligibilityUid !== uid || (elevation.state !== "PENDING" && elevation.state !== "ACTIVE")) {
          continue
        }
        elevation.state = "REVOKED"
        const binding = elevation.bindingUid === undefined ? undefined : model.entities.get(elevation.bindingUid)
        if (binding?.elevationUid !== undefined) model.remove(binding.uid)
      }
    })
  }
}

/**
 * The identity of an eligibility asks to hold its role, with its whole token or a narrowed one: the actor is the one
 * who controls that identity (an elevation gives only what the model decides, so what the actor held before does not
 * bound it).
 */
export class Elevate extends Step {
  actor: Actor = "system"
  constructor(
    readonly target: number,
    readonly seconds: number,
    readonly narrowed: NarrowingPick | null,
    tick: Tick
  ) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const asking = model.of("eligibility").filter((e) => {
      const controller = model.controller.get(e.identityUid!)
      return controller !== undefined && controller !== "system" && model.actorUid.get(controller) === e.identityUid
    })
    const eligibility = asking.length === 0 ? undefined : asking[this.target % asking.length]!
    if (eligibility === undefined) return Effect.void
    this.actor = model.controller.get(eligibility.identityUid!)!
    model.picks.push(`eligibility ${model.nameOf(eligibility.roleUid!)} at ${model.nameOf(eligibility.parent!)}`)
    const narrowing = narrowingOf(model, this.actor, this.narrowed)
    const group = eligibility.parent!
    const caps = model.entities.get(eligibility.roleUid!)?.caps ?? []
    const elevation: Entity = {
      kind: "elevation",
      uid: "",
      parent: group,
      name: `${model.nameOf(eligibility.identityUid!)} as ${model.nameOf(eligibility.roleUid!)}`,
      createTime: model.now,
      updateTime: model.now,
      identityUid: eligibility.identityUid!,
      roleUid: eligibility.roleUid!,
      eligibilityUid: eligibility.uid,
      approverRoleUid: eligibility.approverRoleUid,
      state: eligibility.approverRoleUid === undefined ? "ACTIVE" : "PENDING"
    }
    const predicted = narrowing !== undefined &&
        (!Uid.isAncestorOrSelf(narrowing.scope, group) || !caps.every((c) => narrowing.capabilities.includes(c)))
      ? "PermissionDenied"
      : !model.makerStands(eligibility)
      ? "FailedPrecondition"
      : elevation.state === "ACTIVE"
      ? granted(model, elevation)
      : "ok"
    return expect(
      label,
      predicted,
      real.elevations.elevate(principalOf(model, this.actor, narrowing), group, {
        roleUid: eligibility.roleUid,
        reason: "model",
        duration: `${this.seconds}s`
      }),
      (made) => {
        const recorded: Entity = {
          ...elevation,
          uid: made.uid,
          ...(made.expireTime === null ? {} : { expireTime: made.expireTime.epochMillis }),
          bindingUid: made.bindingUid ?? undefined,
          updateTime: model.now
        }
        model.add(recorded)
        if (made.bindingUid !== null) bindFor(model, recorded, made.bindingUid, model.now + this.seconds * 1000)
      }
    )
  }
}

/** An approver (with its whole token or a narrowed one) approves a pending elevation. */
export class Approve extends Step {
  constructor(readonly actor: Actor, readonly target: number, readonly narrowed: NarrowingPick | null, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    // Mostly one still waiting for an approver.
    const waiting = model.of("elevation").filter((e) => e.state === "PENDING")
    const uid = waiting.length > 0 && this.target % 8 !== 0
      ? waiting[this.target % waiting.length]!.uid
      : model.pick("elevation", this.target)
    if (uid === undefined) return Effect.void
    if (waiting.some((e) => e.uid === uid)) model.picks.push(`pending elevation ${model.nameOf(uid)}`)
    const elevation = model.entities.get(uid)!
    const eligibility = model.entities.get(elevation.eligibilityUid!)
    const narrowing = narrowingOf(model, this.actor, this.narrowed)
    const group = elevation.parent!
    const self = elevation.identityUid === uidOf(model, this.actor)
    const approverRole = eligibility?.approverRoleUid
    const readable = (self && (narrowing === undefined || Uid.isAncestorOrSelf(narrowing.scope, group))) ||
      holdsWith(model, this.actor, narrowing, "role_bindings.list", group) ||
      (approverRole !== undefined && approves(model, this.actor, narrowing, approverRole, group))
    const predicted = !readable
      ? "NotFound"
      : eligibility === undefined || !model.makerStands(eligibility)
      ? "FailedPrecondition"
      : this.actor === "system" || self
      ? "PermissionDenied"
      : approverRole === undefined
      ? "FailedPrecondition"
      : !approves(model, this.actor, narrowing, approverRole, group)
      ? "PermissionDenied"
      : elevation.state !== "PENDING"
      ? "FailedPrecondition"
      : granted(model, elevation)
    return expect(
      label,
      predicted,
      real.elevations.approve(principalOf(model, this.actor, narrowing), uid),
      (made) => {
        elevation.state = "ACTIVE"
        elevation.approverUid = uidOf(model, this.actor) ?? undefined
        elevation.expireTime = made.expireTime!.epochMillis
        elevation.bindingUid = made.bindingUid!
        bindFor(model, elevation, made.bindingUid!, made.expireTime!.epochMillis)
      }
    )
  }
}

/** Someone patches (to last for good) or deletes a binding an elevation made: refused, whoever asks. */
export class ChangeElevationBinding extends Step {
  constructor(readonly actor: Actor, readonly target: number, readonly change: "patch" | "delete", tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const made = model.of("binding").filter((b) => b.elevationUid !== undefined)
    const binding = made.length === 0 ? undefined : made[this.target % made.length]!
    if (binding === undefined) return Effect.void
    model.picks.push(`binding ${model.nameOf(binding.uid)}`)
    const needs: Cap = this.change === "patch" ? "role_bindings.update" : "role_bindings.delete"
    const predicted = model.holds(this.actor, needs, binding.parent!) ? "FailedPrecondition" : "PermissionDenied"
    const principal = principalOf(model, this.actor)
    return expect(
      label,
      predicted,
      this.change === "patch"
        ? real.bindings.update(principal, binding.uid, { expireTime: null }, "expireTime")
        : real.bindings.delete(principal, binding.uid)
    )
  }
}
