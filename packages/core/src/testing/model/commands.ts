/** The model suite's commands: one per engine operation, each run by a random caller and compared with the model. */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as TestClock from "effect/TestClock"
import * as Uid from "../../engine/Uid.js"
import { Capability, Role } from "../../index.js"
import {
  checkCanary,
  checkCapabilities,
  checkLists,
  expect,
  ownedOrganizations,
  principalOf,
  reach,
  reaches,
  type Real
} from "./checks.js"
import { type Actor, type Cap, claimMatch, keyOf, type Model, roleCaps } from "./model.js"

export const viewerUid = Role.builtInByName("viewer")!.uid
export const viewerCaps = Role.builtInByName("viewer")!.capabilities

/** What every command carries besides its own fields: how far the clock moves first, and the seed of the checks. */
export interface Tick {
  readonly advance: number
  readonly seed: number
}

/**
 * A command of the model run: its operation (`step`, which predicts, runs and compares), preceded by the clock's
 * advance and followed by the checks of every list, every capability and every identity's reach.
 */
export abstract class Step implements FastCheck.AsyncCommand<Model, Real> {
  abstract readonly actor: Actor
  /** What its last run picked from the pools, as names (a counterexample shows them). */
  private picked: ReadonlyArray<string> = []
  constructor(readonly tick: Tick) {}
  check(): boolean {
    return true
  }
  abstract step(model: Model, real: Real, label: string): Effect.Effect<void>
  async run(model: Model, real: Real): Promise<void> {
    this.picked = []
    const label = this.toString()
    await real.run(
      Effect.gen(this, function*() {
        yield* TestClock.adjust(this.tick.advance)
        model.now += this.tick.advance
        const reachBefore = yield* reach(model, real)
        const ownedBefore = yield* ownedOrganizations(real)
        const actingGrants = yield* real.authorization.grants(principalOf(model, this.actor))
        model.picks.length = 0
        yield* this.step(model, real, label).pipe(
          Effect.ensuring(Effect.sync(() => this.picked = [...model.picks])),
          // Its own comparison names what it picked, as the checks after it do.
          Effect.catchAllDefect((defect) =>
            Effect.die(
              defect instanceof Error
                ? Object.assign(defect, { message: `${defect.message} (${this.picked.join(", ")})` })
                : defect
            )
          )
        )
        const ran = this.toString()
        // The engine's invariant, asked of the engine itself: an organization that had an owner still has one.
        const ownedAfter = yield* ownedOrganizations(real)
        for (const org of ownedBefore) {
          assert.isTrue(ownedAfter.has(org), `${ran} / ${model.nameOf(org)} lost its last owner`)
        }
        yield* checkLists(model, real, ran, this.tick.seed)
        yield* checkCapabilities(model, real, ran)
        // No actor ever gains a capability, through any identity it can assume, that the caller did not hold itself.
        for (const [actor, grantsNow] of yield* reach(model, real)) {
          for (const grant of grantsNow.flatMap((g) => g.grants)) {
            for (const cap of grant.capabilities) {
              if (reaches(reachBefore, actor, cap, grant.group)) continue
              assert.isTrue(
                actingGrants.holds(cap, grant.group),
                `${ran} / ${actor} gained ${cap} at ${model.nameOf(grant.group)}`
              )
            }
          }
        }
        yield* checkCanary(real)
      }).pipe(Effect.orDie)
    )
  }
  toString(): string {
    const { picked, tick: _, ...fields } = this
    return `${this.constructor.name} ${JSON.stringify(fields)}${picked.length === 0 ? "" : ` (${picked.join(", ")})`}`
  }
}

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
    const predicted = !model.holds(this.actor, "groups.update", uid)
      ? "PermissionDenied"
      : e === undefined
      ? "NotFound"
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
      (model.entities.get(b.roleUid!)?.caps ?? []).every((c) => model.holds(this.actor, c, b.parent!))
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
      for (const b of model.of("binding")) if (b.identityUid === uid) model.remove(b.uid)
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
      : !this.caps.every((c) => model.holds(this.actor, c, parent))
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
      : !this.caps.every((c) => model.holds(this.actor, c, group))
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

export class Bind extends Step {
  constructor(
    readonly actor: Actor,
    readonly parent: number,
    readonly identity: number,
    readonly role: number,
    /** How long it grants, in the clock's milliseconds; for good when undefined. */
    readonly lifetime: number | undefined,
    tick: Tick
  ) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const parent = model.pick("known-group", this.parent) ?? real.missing
    const identityUid = model.pick("identity", this.identity)!
    if (identityUid === real.canary) return Effect.void
    const roleUid = model.pick("role", this.role)!
    const role = model.entities.get(roleUid)!
    const identityGroup = Uid.parentOrNull(identityUid as Uid.Uid)!
    const predicted = !model.holds(this.actor, "role_bindings.create", parent)
      ? "PermissionDenied"
      : !model.entities.has(parent)
      ? "NotFound"
      : !model.holds(this.actor, "identity.list", identityGroup)
      ? "PermissionDenied"
      : role.parent !== null && !model.holds(this.actor, "roles.list", role.parent)
      ? "PermissionDenied"
      : role.parent !== null && !Uid.isAncestorOrSelf(role.parent, parent)
      ? "NotFound"
      : !(role.caps ?? []).every((c) => model.holds(this.actor, c, parent))
      ? "PermissionDenied"
      : model.of("binding").some((b) => b.parent === parent && b.identityUid === identityUid && b.roleUid === roleUid)
      ? "AlreadyExists"
      : "ok"
    const expireTime = this.lifetime === undefined ? undefined : model.now + this.lifetime
    const body = {
      identityUid,
      roleUid,
      ...(expireTime === undefined ? {} : { expireTime: new Date(expireTime).toISOString() })
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
          ...(expireTime === undefined ? {} : { expireTime })
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
      : model.losesLastOwner(new Set([uid]))
      ? "FailedPrecondition"
      : "ok"
    return expect(label, predicted, real.bindings.delete(principalOf(model, this.actor), uid), () => model.remove(uid))
  }
}

// ---- The registry ----

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
      : !viewerCaps.every((c) => model.holds(this.actor, c, parent))
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
      : !viewerCaps.every((c) => model.holds(this.actor, c, parent))
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

export const actorArb = FastCheck.constantFrom<Actor>("system", "system", "alice", "bob", "carol", "canary")
export const nameArb = FastCheck.constantFrom("a", "b", "c", "d")
export const capsArb = FastCheck.subarray([...roleCaps], { minLength: 1 })
export const tickArb: FastCheck.Arbitrary<Tick> = FastCheck.record({
  advance: FastCheck.constantFrom(0, 0, 1, 1000),
  seed: FastCheck.nat()
})
export const at = FastCheck.nat()

/** Every command, with its weight among them. */
export const commands = FastCheck.commands(
  [
    ...Array.from(
      { length: 4 },
      () => FastCheck.tuple(actorArb, at, FastCheck.boolean(), nameArb, tickArb).map((a) => new CreateGroup(...a))
    ),
    FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new RenameGroup(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteGroup(...a)),
    ...Array.from(
      { length: 2 },
      () => FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new CreateIdentity(...a))
    ),
    ...Array.from(
      { length: 2 },
      () =>
        FastCheck.tuple(actorArb, at, FastCheck.constantFrom("name" as const, "assumption" as const), nameArb, tickArb)
          .map((a) => new UpdateIdentity(...a))
    ),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteIdentity(...a)),
    ...Array.from(
      { length: 2 },
      () => FastCheck.tuple(actorArb, at, nameArb, capsArb, tickArb).map((a) => new CreateRole(...a))
    ),
    FastCheck.tuple(actorArb, at, capsArb, tickArb).map((a) => new UpdateRole(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteRole(...a)),
    ...Array.from(
      { length: 4 },
      () =>
        FastCheck.tuple(actorArb, at, at, at, FastCheck.constantFrom(undefined, undefined, 1000, 2500), tickArb).map((
          a
        ) => new Bind(...a))
    ),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new Unbind(...a)),
    ...Array.from(
      { length: 2 },
      () => FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new UpsertRepo(...a))
    ),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteRepo(...a)),
    ...Array.from({ length: 2 }, () => FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new UpsertTag(...a))),
    FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new CreateProvider(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new CreateInvite(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new CreateAssociation(...a))
  ],
  { maxCommands: 40, size: "max" }
)

/** The commands of one run, as the property receives them. */
export type Commands = Iterable<FastCheck.AsyncCommand<Model, Real>>
