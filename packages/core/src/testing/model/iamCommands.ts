/** The model suite's commands on the hierarchy: groups, identities, roles and bindings. */
import * as Effect from "effect/Effect"
import * as Uid from "../../engine/Uid.js"
import { Capability } from "../../index.js"
import { expect, principalOf, type Real } from "./checks.js"
import { type Actor, type Cap, claimMatch, type Condition, type Entity, expressionOf, type Model } from "./model.js"

import { Step, type Tick } from "./step.js"

export class CreateGroup extends Step {
  constructor(
    readonly actor: Actor,
    readonly parent: number,
    readonly root: boolean,
    readonly name: string,
    tick: Tick
  ) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const principal = principalOf(model, this.actor)
    const add = (parent: string | null) => (g: { readonly uid: string; readonly name: string }) =>
      model.add({ kind: "group", uid: g.uid, parent, name: g.name, createTime: model.now, updateTime: model.now })
    if (this.root) {
      const predicted = this.actor !== "system"
        ? "PermissionDenied"
        : model.siblingNamed("group", null, this.name)
        ? "AlreadyExists"
        : "ok"
      return expect(label, predicted, real.groups.createRoot(principal, { name: this.name }), add(null))
    }
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const predicted = !model.holds(this.actor, "groups.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : model.siblingNamed("group", parent, this.name)
      ? "AlreadyExists"
      : "ok"
    return expect(label, predicted, real.groups.create(principal, parent, { name: this.name }), add(parent))
  }
}

export class RenameGroup extends Step {
  constructor(readonly actor: Actor, readonly target: number, readonly name: string, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("known-group", this.target) ?? real.missing
    const e = model.entities.get(uid)
    // A rename needs what binding there needs, of every binding whose condition reads names at, above or below it.
    const renames = (e: Entity) =>
      e.name !== this.name &&
      model.of("binding").some((b) =>
        b.condition?.kind === "name" && (Uid.isAncestorOrSelf(b.parent!, uid) || Uid.isAncestor(uid, b.parent!)) &&
        !(model.entities.get(b.roleUid!)?.caps ?? []).every((c) => model.holdsUnconditionally(this.actor, c, uid))
      )
    const predicted = !model.holds(this.actor, "groups.update", uid)
      ? "PermissionDenied"
      : e === undefined
      ? "NotFound"
      : renames(e)
      ? "PermissionDenied"
      : model.siblingNamed("group", e.parent, this.name, uid)
      ? "AlreadyExists"
      : "ok"
    return expect(
      label,
      predicted,
      real.groups.update(principalOf(model, this.actor), uid, { name: this.name }),
      () => {
        e!.name = this.name
        model.nextUpdate(e!)
      }
    )
  }
}

export class DeleteGroup extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("known-group", this.target) ?? real.missing
    const predicted = !model.holds(this.actor, "groups.delete", uid)
      ? "PermissionDenied"
      : !model.entities.has(uid)
      ? "NotFound"
      : model.hasChildren(uid)
      ? "FailedPrecondition"
      : "ok"
    return expect(label, predicted, real.groups.delete(principalOf(model, this.actor), uid), () => model.remove(uid))
  }
}

// ---- Identities ----

export class CreateIdentity extends Step {
  constructor(readonly actor: Actor, readonly parent: number, readonly name: string, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const predicted = !model.holds(this.actor, "identity.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : model.siblingNamed("identity", parent, this.name)
      ? "AlreadyExists"
      : "ok"
    const body = { name: this.name, claimMatch: claimMatch(this.name) }
    return expect(label, predicted, real.identities.create(principalOf(model, this.actor), parent, body), (i) => {
      model.add({ kind: "identity", uid: i.uid, parent, name: i.name, createTime: model.now, updateTime: model.now })
      model.controller.set(i.uid, this.actor)
    })
  }
}

export class UpdateIdentity extends Step {
  constructor(
    readonly actor: Actor,
    readonly target: number,
    readonly change: "name" | "assumption",
    readonly name: string,
    tick: Tick
  ) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("identity", this.target)
    if (uid === undefined) return Effect.void
    const e = model.entities.get(uid)!
    const repoint = this.change === "assumption"
    // Repointing an identity needs every capability it holds, at each group where it holds it (an ended binding
    // holds nothing).
    const takesOver = model.of("binding").every((b) =>
      b.identityUid !== uid || (b.expireTime !== undefined && model.now >= b.expireTime) ||
      (model.entities.get(b.roleUid!)?.caps ?? []).every((c) => model.holdsUnconditionally(this.actor, c, b.parent!))
    )
    const predicted = !model.holds(this.actor, "identity.update", e.parent!)
      ? "PermissionDenied"
      : repoint && !takesOver
      ? "PermissionDenied"
      : !repoint && model.siblingNamed("identity", e.parent, this.name, uid)
      ? "AlreadyExists"
      : "ok"
    const patch = repoint ? { claimMatch: claimMatch(`${this.actor} at ${model.now}`) } : { name: this.name }
    return expect(label, predicted, real.identities.update(principalOf(model, this.actor), uid, patch), () => {
      if (repoint) model.controller.set(uid, this.actor)
      else e.name = this.name
      model.nextUpdate(e)
    })
  }
}

export class DeleteIdentity extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("identity", this.target)
    if (uid === undefined || uid === real.canary) return Effect.void
    const bound = new Set(model.of("binding").filter((b) => b.identityUid === uid).map((b) => b.uid))
    const predicted = !model.holds(this.actor, "identity.delete", Uid.parentOrNull(uid as Uid.Uid)!)
      ? "PermissionDenied"
      : model.losesLastOwner(bound)
      ? "FailedPrecondition"
      : "ok"
    return expect(label, predicted, real.identities.delete(principalOf(model, this.actor), uid), () => {
      model.remove(uid)
      // Its bindings and eligibilities go with it; its open elevations are revoked.
      for (const b of model.of("binding")) if (b.identityUid === uid) model.remove(b.uid)
      for (const e of model.of("eligibility")) if (e.identityUid === uid) model.remove(e.uid)
      for (const e of model.of("elevation")) {
        if (e.identityUid === uid && (e.state === "PENDING" || e.state === "ACTIVE")) e.state = "REVOKED"
      }
    })
  }
}

// ---- Roles and bindings ----

export class CreateRole extends Step {
  constructor(
    readonly actor: Actor,
    readonly parent: number,
    readonly name: string,
    readonly caps: ReadonlyArray<Cap>,
    tick: Tick
  ) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const predicted = !model.holds(this.actor, "roles.create", parent)
      ? "PermissionDenied"
      : !this.caps.every((c) => model.holdsUnconditionally(this.actor, c, parent))
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : model.siblingNamed("role", parent, this.name)
      ? "AlreadyExists"
      : "ok"
    const body = { name: this.name, capabilities: this.caps }
    return expect(label, predicted, real.roles.create(principalOf(model, this.actor), parent, body), (r) =>
      model.add({
        kind: "role",
        uid: r.uid,
        parent,
        name: r.name,
        createTime: model.now,
        updateTime: model.now,
        caps: Capability.normalize(this.caps)
      }))
  }
}

export class UpdateRole extends Step {
  constructor(readonly actor: Actor, readonly target: number, readonly caps: ReadonlyArray<Cap>, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("role", this.target)!
    const e = model.entities.get(uid)!
    const group = e.parent ?? uid
    const predicted = e.parent === null
      ? "FailedPrecondition"
      : !model.holds(this.actor, "roles.update", group)
      ? "PermissionDenied"
      : !this.caps.every((c) => model.holdsUnconditionally(this.actor, c, group))
      ? "PermissionDenied"
      : "ok"
    const patch = { capabilities: this.caps }
    return expect(label, predicted, real.roles.update(principalOf(model, this.actor), uid, patch), () => {
      e.caps = Capability.normalize(this.caps)
      model.nextUpdate(e)
    })
  }
}

export class DeleteRole extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("role", this.target)!
    const e = model.entities.get(uid)!
    const predicted = e.parent === null
      ? "FailedPrecondition"
      : !model.holds(this.actor, "roles.delete", e.parent)
      ? "PermissionDenied"
      : model.roleInUse(uid)
      ? "FailedPrecondition"
      : "ok"
    return expect(label, predicted, real.roles.delete(principalOf(model, this.actor), uid), () => model.remove(uid))
  }
}

/** A condition as a command carries it: its shape, a time as an offset from the moment the binding is made. */
export type ConditionPick =
  | { readonly kind: "name"; readonly name: string }
  | { readonly kind: "before"; readonly offset: number }
  | { readonly kind: "tier"; readonly tier: string }

export class Bind extends Step {
  constructor(
    readonly actor: Actor,
    readonly parent: number,
    readonly identity: number,
    readonly role: number,
    /** How long it grants, in the clock's milliseconds; for good when undefined. */
    readonly lifetime: number | undefined,
    /** Where it grants: the picked shape of its condition (a time as an offset from now); everywhere when null. */
    readonly condition: ConditionPick | null,
    tick: Tick
  ) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const condition: Condition | undefined = this.condition === null
      ? undefined
      : this.condition.kind === "before"
      ? { kind: "before", time: model.now + this.condition.offset }
      : this.condition
    const identityUid = model.pick("identity", this.identity)!
    if (identityUid === real.canary) return Effect.void
    const roleUid = model.pick("role", this.role)!
    const role = model.entities.get(roleUid)!
    const identityGroup = Uid.parentOrNull(identityUid as Uid.Uid)!
    const predicted = !model.holds(this.actor, "role_bindings.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : !model.holdsUnconditionally(this.actor, "identity.list", identityGroup)
      ? "PermissionDenied"
      : role.parent !== null && !model.holdsUnconditionally(this.actor, "roles.list", role.parent)
      ? "PermissionDenied"
      : role.parent !== null && !Uid.isAncestorOrSelf(role.parent, parent)
      ? "NotFound"
      : !(role.caps ?? []).every((c) => model.holdsUnconditionally(this.actor, c, parent))
      ? "PermissionDenied"
      : model.of("binding").some((b) => b.parent === parent && b.identityUid === identityUid && b.roleUid === roleUid)
      ? "AlreadyExists"
      : "ok"
    const expireTime = this.lifetime === undefined ? undefined : model.now + this.lifetime
    const body = {
      identityUid,
      roleUid,
      ...(expireTime === undefined ? {} : { expireTime: new Date(expireTime).toISOString() }),
      ...(condition === undefined ? {} : { condition: { expression: expressionOf(condition), title: condition.kind } })
    }
    return expect(
      label,
      predicted,
      real.bindings.create(principalOf(model, this.actor), parent, body),
      (b) =>
        model.add({
          kind: "binding",
          uid: b.uid,
          parent,
          name: "",
          createTime: model.now,
          updateTime: model.now,
          identityUid,
          roleUid,
          ...(expireTime === undefined ? {} : { expireTime }),
          ...(condition === undefined ? {} : { condition })
        })
    )
  }
}

export class Unbind extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("binding", this.target)
    if (uid === undefined) return Effect.void
    const predicted = !model.holds(this.actor, "role_bindings.delete", Uid.parentOrNull(uid as Uid.Uid)!)
      ? "PermissionDenied"
      : model.entities.get(uid)?.elevationUid !== undefined // changed only through its elevation
      ? "FailedPrecondition"
      : model.losesLastOwner(new Set([uid]))
      ? "FailedPrecondition"
      : "ok"
    return expect(label, predicted, real.bindings.delete(principalOf(model, this.actor), uid), () => model.remove(uid))
  }
}

// ---- The registry ----
