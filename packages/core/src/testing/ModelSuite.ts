/**
 * The model-based suite, on fast-check's model-based testing: random sequences of commands, one per engine operation
 * (grouped below by area), each run by a random caller, its outcome predicted by a simple reference model of the
 * rules. After every command, callers' lists (paged to the end with random page sizes and skips) and every
 * capability check are compared with the model's answers, and no caller may have gained through any identity it can
 * assume a capability that the command's caller did not hold. A canary identity is never bound and must never see or
 * do anything beyond the built-in roles. A failure shrinks to the fewest commands that still fail. Every store
 * adapter runs it against itself:
 *
 * ```ts
 * import { ModelSuite } from "@arbor/core/testing"
 * ModelSuite.suite("sqlite", SqliteStore.layer({ filename: ":memory:" }))
 * ```
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as TestClock from "effect/TestClock"
import {
  AccountAssociations,
  Arbor,
  Authorization,
  Capability,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  Principal,
  Repos,
  Role,
  RoleBindings,
  Roles,
  Tags
} from "../index.js"
import type { ListOptions } from "../Lists.js"
import * as Secrets from "../Secrets.js"
import { compareScalars, type Store } from "../Store.js"
import * as Uid from "../Uid.js"

const claimMatch = (subject: string) => ({ issuer: "https://issuer.example.com", subject })

type Cap = Capability.Capability
type Kind = "group" | "identity" | "role" | "binding" | "repo" | "tag" | "provider" | "invite" | "association"

interface Entity {
  readonly kind: Kind
  readonly uid: string
  readonly parent: string | null
  name: string
  readonly createTime: number
  updateTime: number
  caps?: ReadonlyArray<Cap>
  identityUid?: string
  roleUid?: string
}

/** The key of an entity: associations share their group's uid. */
const keyOf = (kind: Kind, uid: string) => kind === "association" ? `association:${uid}` : uid

const actors = ["system", "alice", "bob", "carol", "canary"] as const
type Actor = typeof actors[number]

const roleCaps: ReadonlyArray<Cap> = [
  "groups.list",
  "groups.create",
  "groups.update",
  "groups.delete",
  "identity.list",
  "identity.create",
  "identity.update",
  "identity.delete",
  "roles.list",
  "roles.create",
  "roles.update",
  "roles.delete",
  "role_bindings.list",
  "role_bindings.create",
  "role_bindings.delete",
  "repo.list",
  "repo.create",
  "repo.delete",
  "tag.list",
  "tag.create",
  "identity_providers.list",
  "identity_providers.create",
  "group_invites.list",
  "group_invites.create",
  "account_associations.list",
  "account_associations.create"
]

/** The reference model: plain maps and the rules, written as directly as possible. */
export class Model {
  readonly entities = new Map<string, Entity>()
  /** Every group uid ever created, deleted ones included, so commands can aim at missing groups. */
  readonly knownGroups: Array<string> = []
  readonly actorUid = new Map<Actor, string>()
  /** Who can assume each identity: whoever last set its claim match (the system's identities are left out). */
  readonly controller = new Map<string, Actor>()
  now = 0

  constructor() {
    for (const r of Role.builtIns) {
      this.entities.set(r.uid, {
        kind: "role",
        uid: r.uid,
        parent: null,
        name: r.name,
        createTime: 0,
        updateTime: 0,
        caps: r.capabilities
      })
    }
  }

  private cache = new Map<Kind, Array<Entity>>()

  of(kind: Kind): Array<Entity> {
    let found = this.cache.get(kind)
    if (found === undefined) {
      found = [...this.entities.values()].filter((e) => e.kind === kind)
      this.cache.set(kind, found)
    }
    return found
  }

  remove(uid: string) {
    this.entities.delete(uid)
    this.cache.clear()
  }

  pick(kind: Kind | "known-group", n: number): string | undefined {
    const pool = kind === "known-group" ? this.knownGroups : this.of(kind).map((e) => e.uid)
    return pool.length === 0 ? undefined : pool[n % pool.length]
  }

  holds(actor: Actor, cap: Cap, group: string): boolean {
    if (actor === "system") return true
    const identity = this.actorUid.get(actor)
    return this.of("binding").some((b) =>
      b.identityUid === identity && Uid.isAncestorOrSelf(b.parent!, group) &&
      (this.entities.get(b.roleUid!)?.caps ?? []).includes(cap)
    )
  }

  visible(actor: Actor, e: Entity): boolean {
    switch (e.kind) {
      case "group":
        return this.holds(actor, "groups.list", e.uid)
      case "identity":
        return this.holds(actor, "identity.list", e.parent!)
      case "role":
        return e.parent === null || this.holds(actor, "roles.list", e.parent)
      case "binding":
        return this.holds(actor, "role_bindings.list", e.parent!)
      case "repo":
        return this.holds(actor, "repo.list", e.parent!)
      case "tag":
        return this.holds(actor, "tag.list", Uid.parentOrNull(e.parent! as Uid.Uid)!)
      case "provider":
        return this.holds(actor, "identity_providers.list", e.parent!)
      case "invite":
        return this.holds(actor, "group_invites.list", e.parent!)
      case "association":
        return this.holds(actor, "account_associations.list", e.uid)
    }
  }

  /** Anything below the group, or its account association. */
  hasChildren(uid: string): boolean {
    return [...this.entities.values()].some((e) =>
      Uid.isAncestor(uid, e.uid) || (e.kind === "association" && e.uid === uid)
    )
  }

  /** Bindings, invites or providers that grant the role. */
  roleInUse(uid: string): boolean {
    return [...this.entities.values()].some((e) =>
      (e.kind === "binding" || e.kind === "invite" || e.kind === "provider") && e.roleUid === uid
    )
  }

  siblingNamed(kind: Kind, parent: string | null, name: string, except?: string): boolean {
    return this.of(kind).some((e) => e.parent === parent && e.name === name && e.uid !== except)
  }

  add(e: Entity) {
    this.entities.set(keyOf(e.kind, e.uid), e)
    this.cache.clear()
    if (e.kind === "group") this.knownGroups.push(e.uid)
  }

  nextUpdate(e: Entity) {
    e.updateTime = Math.max(this.now, e.updateTime + 1)
  }
}

/** Small deterministic generator for page sizes and skips. */
const lcg = (seed: number) => {
  let s = seed >>> 0
  return (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return (s >>> 8) % n
  }
}

const orders: Record<Kind, ReadonlyArray<string>> = {
  group: ["uid", "name", "name desc", "create_time desc", "update_time, name desc"],
  identity: ["uid desc", "name", "created_at"],
  role: ["name", "uid", "update_time desc"],
  binding: ["uid", "create_time desc, uid asc", "updated_at"],
  repo: ["name", "uid desc"],
  tag: ["name desc", "create_time"],
  provider: ["name", "uid"],
  invite: ["create_time desc", "uid"],
  association: ["uid", "name desc"]
}

const columnOf = (key: string) =>
  ({
    uid: "uid",
    name: "name",
    create_time: "createTime",
    created_at: "createTime",
    update_time: "updateTime",
    updated_at: "updateTime"
  })[key]!

/** The model's order: `order_by` keys, then uid in the direction of the last key. */
const sortModel = (entities: Array<Entity>, orderBy: string) => {
  const keys = orderBy.split(",").map((part) => {
    const [key, dir = "asc"] = part.trim().split(/\s+/) as [string, string?]
    return { column: columnOf(key), desc: dir === "desc" }
  })
  if (keys[keys.length - 1]!.column !== "uid") keys.push({ column: "uid", desc: keys[keys.length - 1]!.desc })
  return [...entities].sort((a, b) => {
    for (const k of keys) {
      const order = compareScalars(a[k.column as keyof Entity], b[k.column as keyof Entity])
      if (order !== 0) return order * (k.desc ? -1 : 1)
    }
    return 0
  })
}

const viewerUid = Role.builtInByName("viewer")!.uid
const viewerCaps = Role.builtInByName("viewer")!.capabilities

/** The engine under test, the fixtures every run starts from, and how to run an operation on it. */
export interface Real {
  readonly groups: Groups.Groups
  readonly identities: Identities.Identities
  readonly roles: Roles.Roles
  readonly bindings: RoleBindings.RoleBindings
  readonly repos: Repos.Repos
  readonly tags: Tags.Tags
  readonly providers: IdentityProviders.IdentityProviders
  readonly invites: GroupInvites.GroupInvites
  readonly associations: AccountAssociations.AccountAssociations
  readonly authorization: Authorization.Authorization
  /** A group that does not exist, below the first organization. */
  readonly missing: string
  readonly canary: string
  readonly run: <A>(effect: Effect.Effect<A>) => Promise<A>
}

const principalOf = (model: Model, actor: Actor) =>
  actor === "system" ? Principal.system : Principal.identity(model.actorUid.get(actor) as Uid.Uid)

/** Runs the real operation and compares its outcome with the model's prediction; on success, updates the model. */
const expect = <A>(
  label: string,
  predicted: string,
  operation: Effect.Effect<A, { readonly _tag: string }>,
  apply: (a: A) => void = () => {}
) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(operation)
    const actual = Exit.match(exit, {
      onSuccess: () => "ok",
      onFailure: (cause) => cause._tag === "Fail" ? cause.error._tag : `defect ${String(cause)}`
    })
    assert.strictEqual(actual, predicted, label)
    if (Exit.isSuccess(exit)) apply(exit.value)
  })

/** What each actor can do through every identity it can assume. */
const reach = (model: Model, real: Real) =>
  Effect.gen(function*() {
    const byActor = new Map<Actor, Array<Authorization.Grants>>()
    for (const [uid, actor] of model.controller) {
      if (actor === "system" || !model.entities.has(uid)) continue
      const grants = yield* real.authorization.grants(Principal.identity(uid as Uid.Uid))
      byActor.set(actor, [...(byActor.get(actor) ?? []), grants])
    }
    return byActor
  })

const reaches = (r: Map<Actor, Array<Authorization.Grants>>, actor: Actor, cap: Cap, group: string) =>
  (r.get(actor) ?? []).some((g) => g.holds(cap, group))

/** What every command carries besides its own fields: how far the clock moves first, and the seed of the checks. */
interface Tick {
  readonly advance: number
  readonly seed: number
}

/**
 * A command of the model run: its operation (`step`, which predicts, runs and compares), preceded by the clock's
 * advance and followed by the checks of every list, every capability and every identity's reach.
 */
abstract class Step implements FastCheck.AsyncCommand<Model, Real> {
  abstract readonly actor: Actor
  constructor(readonly tick: Tick) {}
  check(): boolean {
    return true
  }
  abstract step(model: Model, real: Real, label: string): Effect.Effect<void>
  async run(model: Model, real: Real): Promise<void> {
    const label = this.toString()
    await real.run(
      Effect.gen(this, function*() {
        yield* TestClock.adjust(this.tick.advance)
        model.now += this.tick.advance
        const reachBefore = yield* reach(model, real)
        const actingGrants = yield* real.authorization.grants(principalOf(model, this.actor))
        yield* this.step(model, real, label)
        yield* checkLists(model, real, label, this.tick.seed)
        yield* checkCapabilities(model, real, label)
        // No actor ever gains a capability, through any identity it can assume, that the caller did not hold itself.
        for (const [actor, grantsNow] of yield* reach(model, real)) {
          for (const grant of grantsNow.flatMap((g) => g.grants)) {
            for (const cap of grant.capabilities) {
              if (reaches(reachBefore, actor, cap, grant.group)) continue
              assert.isTrue(actingGrants.holds(cap, grant.group), `${label} / ${actor} gained ${cap} at ${grant.group}`)
            }
          }
        }
        yield* checkCanary(real)
      }).pipe(Effect.orDie)
    )
  }
  toString(): string {
    const { tick: _, ...fields } = this
    return `${this.constructor.name} ${JSON.stringify(fields)}`
  }
}

/** (a) Callers' lists, paged to the end with random page sizes and skips: a random third of the (caller, kind) pairs. */
const checkLists = (model: Model, real: Real, label: string, seed: number) =>
  Effect.gen(function*() {
    const random = lcg(seed)
    const groupsNow = model.of("group").map((g) => g.uid)
    for (const actor of actors) {
      for (const kind of kinds) {
        if (random(3) !== 0) continue
        const filterPick = random(4)
        const target = groupsNow[random(groupsNow.length)]!
        const options: ListOptions = {
          orderBy: orders[kind][random(orders[kind].length)]!,
          ...(filterPick === 1 ? { descendantsOf: target } : filterPick === 2 ? { childrenOf: target } : {})
        }
        const expected = sortModel(
          model.of(kind).filter((e) =>
            model.visible(actor, e) &&
            (options.descendantsOf === undefined || Uid.isAncestor(options.descendantsOf, e.uid)) &&
            (options.childrenOf === undefined || e.parent === options.childrenOf)
          ),
          options.orderBy!
        ).map((e) => e.uid)
        let position = 0
        let pageToken: string | undefined
        const seen: Array<string> = []
        for (let pages = 0; pages < 50; pages++) {
          const pageSize = 1 + random(6)
          const skip = random(4) === 0 ? random(3) : 0
          const page = yield* listOf(real, kind)(principalOf(model, actor), { ...options, pageSize, skip, pageToken })
          const skipped = Math.min(skip, expected.length - position)
          position += skipped
          const items = expected.slice(position, position + pageSize)
          position += items.length
          const where = `${label} / ${actor} lists ${kind} ${JSON.stringify(options)}`
          assert.deepStrictEqual(page.items.map((i) => i.uid), items, where)
          assert.strictEqual(page.skipped, skipped, where)
          assert.strictEqual(page.totalCount, expected.length, where)
          assert.strictEqual(page.nextPageToken !== undefined, position < expected.length, where)
          seen.push(...page.items.map((i) => i.uid))
          pageToken = page.nextPageToken
          if (pageToken === undefined) break
        }
        assert.strictEqual(new Set(seen).size, seen.length, "no item twice")
      }
    }
  }).pipe(Effect.orDie)

const kinds = ["group", "identity", "role", "binding", "repo", "tag", "provider", "invite", "association"] as const

/** The list operation of a kind of resource. */
const listOf = (real: Real, kind: Kind) =>
(principal: Principal.Principal, options: ListOptions): Effect.Effect<
  {
    readonly items: ReadonlyArray<{ readonly uid: string }>
    readonly nextPageToken?: string | undefined
    readonly totalCount: number
    readonly skipped: number
  },
  { readonly _tag: string }
> => {
  switch (kind) {
    case "group":
      return real.groups.list(principal, options)
    case "identity":
      return real.identities.list(principal, options)
    case "role":
      return real.roles.list(principal, options)
    case "binding":
      return real.bindings.list(principal, options)
    case "repo":
      return real.repos.list(principal, options)
    case "tag":
      return real.tags.list(principal, options)
    case "provider":
      return real.providers.list(principal, options)
    case "invite":
      return real.invites.list(principal, options)
    case "association":
      return real.associations.list(principal, options)
  }
}

/** (b) Every capability check, at every group and at a group that does not exist. */
const checkCapabilities = (model: Model, real: Real, label: string) =>
  Effect.gen(function*() {
    const groupsNow = model.of("group").map((g) => g.uid)
    for (const actor of actors) {
      const grants = yield* real.authorization.grants(principalOf(model, actor))
      for (const group of [...groupsNow, real.missing]) {
        for (const cap of roleCaps) {
          assert.strictEqual(
            grants.holds(cap, group),
            model.holds(actor, cap, group),
            `${label} / ${actor} ${cap} at ${group}`
          )
        }
      }
    }
  }).pipe(Effect.orDie)

/** (c) The canary: nothing beyond the built-in roles, ever. */
const checkCanary = (real: Real) =>
  Effect.gen(function*() {
    const canary = Principal.identity(real.canary as Uid.Uid)
    assert.strictEqual((yield* real.authorization.grants(canary)).grants.length, 0)
    assert.strictEqual((yield* real.groups.list(canary)).totalCount, 0)
    assert.strictEqual((yield* real.roles.list(canary)).totalCount, Role.builtIns.length)
  }).pipe(Effect.orDie)

// ---- The hierarchy ----

class CreateGroup extends Step {
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

class RenameGroup extends Step {
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

class DeleteGroup extends Step {
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

class CreateIdentity extends Step {
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

class UpdateIdentity extends Step {
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
    // Repointing an identity needs every capability it holds, at each group where it holds it.
    const takesOver = model.of("binding").every((b) =>
      b.identityUid !== uid ||
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

class DeleteIdentity extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("identity", this.target)
    if (uid === undefined || uid === real.canary) return Effect.void
    const predicted = model.holds(this.actor, "identity.delete", Uid.parentOrNull(uid as Uid.Uid)!)
      ? "ok"
      : "PermissionDenied"
    return expect(label, predicted, real.identities.delete(principalOf(model, this.actor), uid), () => {
      model.remove(uid)
      for (const b of model.of("binding")) if (b.identityUid === uid) model.remove(b.uid)
    })
  }
}

// ---- Roles and bindings ----

class CreateRole extends Step {
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

class UpdateRole extends Step {
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

class DeleteRole extends Step {
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

class Bind extends Step {
  constructor(
    readonly actor: Actor,
    readonly parent: number,
    readonly identity: number,
    readonly role: number,
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
    const body = { identityUid, roleUid }
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
          roleUid
        })
    )
  }
}

class Unbind extends Step {
  constructor(readonly actor: Actor, readonly target: number, tick: Tick) {
    super(tick)
  }
  step(model: Model, real: Real, label: string) {
    const uid = model.pick("binding", this.target)
    if (uid === undefined) return Effect.void
    const predicted = model.holds(this.actor, "role_bindings.delete", Uid.parentOrNull(uid as Uid.Uid)!)
      ? "ok"
      : "PermissionDenied"
    return expect(label, predicted, real.bindings.delete(principalOf(model, this.actor), uid), () => model.remove(uid))
  }
}

// ---- The registry ----

class UpsertRepo extends Step {
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

class DeleteRepo extends Step {
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

class UpsertTag extends Step {
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

class CreateProvider extends Step {
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

class CreateInvite extends Step {
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

class CreateAssociation extends Step {
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

const actorArb = FastCheck.constantFrom<Actor>("system", "system", "alice", "bob", "carol", "canary")
const nameArb = FastCheck.constantFrom("a", "b", "c", "d")
const capsArb = FastCheck.subarray([...roleCaps], { minLength: 1 })
const tickArb: FastCheck.Arbitrary<Tick> = FastCheck.record({
  advance: FastCheck.constantFrom(0, 0, 1, 1000),
  seed: FastCheck.nat()
})
const at = FastCheck.nat()

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
    ...Array.from({ length: 4 }, () => FastCheck.tuple(actorArb, at, at, at, tickArb).map((a) => new Bind(...a))),
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

/**
 * One run of `commands` against the engine over `store`, built afresh: two organizations, alice the owner of the
 * first, bob a binder and carol a role maker there, a team folder with a repo and tags, a folder whose only content
 * is its account association, and the canary.
 */
export const run = <E>(store: Layer.Layer<Store, E>, steps: Commands): Effect.Effect<void, E> =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const identities = yield* Identities.Identities
    const roles = yield* Roles.Roles
    const bindings = yield* RoleBindings.RoleBindings
    const repos = yield* Repos.Repos
    const tags = yield* Tags.Tags
    const model = new Model()
    const add = (entity: Omit<Entity, "createTime" | "updateTime">) =>
      model.add({ ...entity, createTime: 0, updateTime: 0 })

    const org = yield* groups.createRoot(Principal.system, { name: "org" })
    const other = yield* groups.createRoot(Principal.system, { name: "other" })
    for (const g of [org, other]) add({ kind: "group", uid: g.uid, parent: null, name: g.name })
    for (const actor of actors.filter((a) => a !== "system")) {
      const identity = yield* identities.create(Principal.system, org.uid, {
        name: actor,
        claimMatch: claimMatch(actor)
      })
      add({ kind: "identity", uid: identity.uid, parent: org.uid, name: actor })
      model.actorUid.set(actor, identity.uid)
      model.controller.set(identity.uid, actor)
    }
    const bind = (actor: Actor, roleUid: string) =>
      Effect.map(
        bindings.create(Principal.system, org.uid, { identityUid: model.actorUid.get(actor)!, roleUid }),
        (b) =>
          add({
            kind: "binding",
            uid: b.uid,
            parent: org.uid,
            name: "",
            identityUid: model.actorUid.get(actor)!,
            roleUid
          })
      )
    yield* bind("alice", Role.builtInByName("owner")!.uid)
    // Bob may bind and see a little; carol may make roles: both meet escalation refusals often.
    for (
      const [actor, name, capabilities] of [
        ["bob", "binder", [
          "role_bindings.create",
          "role_bindings.delete",
          "identity.list",
          "identity.update",
          "groups.list",
          "roles.list"
        ]],
        ["carol", "role maker", [
          "roles.create",
          "roles.update",
          "roles.delete",
          "roles.list",
          "groups.list",
          "groups.create",
          "groups.delete",
          "group_invites.create",
          "identity_providers.create",
          "account_associations.create"
        ]]
      ] as const
    ) {
      const role = yield* roles.create(Principal.system, org.uid, { name, capabilities })
      add({ kind: "role", uid: role.uid, parent: org.uid, name, caps: Capability.normalize(capabilities) })
      yield* bind(actor, role.uid)
    }
    const team = yield* groups.create(Principal.system, org.uid, { name: "team" })
    const cloud = yield* groups.create(Principal.system, org.uid, { name: "cloud" })
    for (const g of [team, cloud]) add({ kind: "group", uid: g.uid, parent: org.uid, name: g.name })
    const app = yield* repos.upsert(Principal.system, team.uid, { name: "app" })
    add({ kind: "repo", uid: app.uid, parent: team.uid, name: "app" })
    for (const name of ["v1", "latest"]) {
      const tag = yield* tags.upsert(Principal.system, app.uid, { name })
      add({ kind: "tag", uid: tag.uid, parent: app.uid, name })
    }
    const associations = yield* AccountAssociations.AccountAssociations
    yield* associations.create(Principal.system, cloud.uid, { name: "aws" })
    add({ kind: "association", uid: cloud.uid, parent: org.uid, name: "aws" })
    const missing = `${org.uid}/ffffffffffffffff`
    model.knownGroups.push(missing)

    const runtime = yield* Effect.runtime<never>()
    const real: Real = {
      groups,
      identities,
      roles,
      bindings,
      repos,
      tags,
      providers: yield* IdentityProviders.IdentityProviders,
      invites: yield* GroupInvites.GroupInvites,
      associations,
      authorization: yield* Authorization.Authorization,
      missing,
      canary: model.actorUid.get("canary")!,
      run: Runtime.runPromise(runtime)
    }
    yield* Effect.promise(() => FastCheck.asyncModelRun(() => ({ model, real }), steps))
  }).pipe(
    Effect.orDie,
    Effect.provide(Arbor.layer.pipe(Layer.provideMerge(store), Layer.provide(Secrets.layerEphemeral)))
  )

/** Runs the model-based tests against the engine over `store`, built afresh for each run. */
export const suite = <E>(
  name: string,
  store: Layer.Layer<Store, E>,
  options: { readonly numRuns?: number } = {}
): void => {
  describe(`model-based: ${name}`, () => {
    it.effect.prop(
      "every command's outcome, every caller's lists and every capability check match the model",
      [commands],
      ([steps]) => run(store, steps),
      { fastCheck: { numRuns: options.numRuns ?? 100 }, timeout: 600_000 }
    )
  })
}
