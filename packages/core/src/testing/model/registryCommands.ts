/** The model suite's commands on the registry: repos and tags. */
import * as Effect from "effect/Effect"
import * as Uid from "../../engine/Uid.js"
import { expect, principalOf, type Real } from "./checks.js"
import { type Actor, type Model } from "./model.js"

import { Step, type Tick } from "./step.js"

export class UpsertRepo extends Step {
  constructor(readonly actor: Actor, readonly parent: number, readonly name: string, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const existing = model.of("repo").some((r) => r.parent === parent && r.name === this.name)
    const predicted = !model.holds(this.actor, "repo.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : "ok"
    return expect(
      label,
      predicted,
      real.repos.upsert(principalOf(model, this.actor), parent, { name: this.name }),
      (r) => {
        if (!existing) {
          model.add({ kind: "repo", uid: r.uid, parent, name: r.name, createTime: model.now, updateTime: model.now })
        }
      }
    )
  }
}

export class DeleteRepo extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("repo", this.target)
    if (uid === undefined) return Effect.void
    const predicted = model.holds(this.actor, "repo.delete", Uid.parentOrNull(uid as Uid.Uid)!)
      ? "ok"
      : "PermissionDenied"
    return expect(label, predicted, real.repos.delete(principalOf(model, this.actor), uid), () => {
      model.remove(uid)
      for (const t of model.of("tag")) if (t.parent === uid) model.remove(t.uid)
    })
  }
}

export class UpsertTag extends Step {
  constructor(readonly actor: Actor, readonly repo: number, readonly name: string, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const repo = model.pick("repo", this.repo)
    if (repo === undefined) return Effect.void
    const existing = model.of("tag").some((t) => t.parent === repo && t.name === this.name)
    const predicted = model.holds(this.actor, "tag.create", Uid.parentOrNull(repo as Uid.Uid)!)
      ? "ok"
      : "PermissionDenied"
    return expect(
      label,
      predicted,
      real.tags.upsert(principalOf(model, this.actor), repo, { name: this.name }),
      (t) => {
        if (!existing) {
          model.add({
            kind: "tag",
            uid: t.uid,
            parent: repo,
            name: t.name,
            createTime: model.now,
            updateTime: model.now
          })
        }
      }
    )
  }
}

// ---- What a group trusts: providers, invites, account associations ----
