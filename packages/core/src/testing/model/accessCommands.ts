/** The model suite's commands on the ways in: identity providers, invites and account associations. */
import * as Uid from "../../engine/Uid.js"
import { expect, principalOf, type Real } from "./checks.js"
import { type Actor, keyOf, type Model } from "./model.js"

import { Step, type Tick, viewerCaps, viewerUid } from "./step.js"

export class CreateProvider extends Step {
  constructor(readonly actor: Actor, readonly parent: number, readonly name: string, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const predicted = !model.holds(this.actor, "identity_providers.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : !viewerCaps.every((c) => model.holdsUnconditionally(this.actor, c, parent))
      ? "PermissionDenied"
      : model.siblingNamed("provider", parent, this.name)
      ? "AlreadyExists"
      : "ok"
    const body = {
      name: this.name,
      defaultRole: viewerUid,
      oidc: { issuer: "https://login.example.com", clientId: "arbor" }
    }
    return expect(
      label,
      predicted,
      real.providers.create(principalOf(model, this.actor), parent, body),
      (p) =>
        model.add({
          kind: "provider",
          uid: p.uid,
          parent,
          name: p.name,
          createTime: model.now,
          updateTime: model.now,
          roleUid: viewerUid
        })
    )
  }
}

export class CreateInvite extends Step {
  constructor(readonly actor: Actor, readonly parent: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const predicted = !model.holds(this.actor, "group_invites.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : !viewerCaps.every((c) => model.holdsUnconditionally(this.actor, c, parent))
      ? "PermissionDenied"
      : "ok"
    return expect(
      label,
      predicted,
      real.invites.create(principalOf(model, this.actor), parent, { roleUid: viewerUid }),
      (i) =>
        model.add({
          kind: "invite",
          uid: i.uid,
          parent,
          name: "",
          createTime: model.now,
          updateTime: model.now,
          roleUid: viewerUid
        })
    )
  }
}

export class CreateAssociation extends Step {
  constructor(readonly actor: Actor, readonly group: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const group = model.pick("known-group", this.group) ?? real.missing
    const predicted = !model.holds(this.actor, "account_associations.create", group)
      ? "PermissionDenied"
      : !model.entities.has(group)
      ? "NotFound"
      : model.entities.has(keyOf("association", group))
      ? "AlreadyExists"
      : "ok"
    return expect(
      label,
      predicted,
      real.associations.create(principalOf(model, this.actor), group, { name: "cloud" }),
      (a) =>
        model.add({
          kind: "association",
          uid: a.uid,
          parent: Uid.parentOrNull(group as Uid.Uid),
          name: a.name,
          createTime: model.now,
          updateTime: model.now
        })
    )
  }
}
