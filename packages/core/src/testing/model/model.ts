/** The model suite's reference model: plain maps and the rules, written as directly as possible. */
import { compareScalars } from "../../engine/Store.js"
import * as Uid from "../../engine/Uid.js"
import * as Capability from "../../iam/Capability.js"
import * as Role from "../../iam/Role.js"

const ownerRole = Role.builtInByName("owner")!.uid

export const claimMatch = (subject: string) => ({ issuer: "https://issuer.example.com", subject })

export type Cap = Capability.Capability
export type Kind =
  | "group"
  | "identity"
  | "role"
  | "binding"
  | "repo"
  | "tag"
  | "provider"
  | "invite"
  | "association"
  | "eligibility"
  | "elevation"

export interface Entity {
  readonly kind: Kind
  readonly uid: string
  readonly parent: string | null
  name: string
  readonly createTime: number
  updateTime: number
  caps?: ReadonlyArray<Cap>
  identityUid?: string
  roleUid?: string
  /** A binding's end (the clock's milliseconds): from then it grants nothing; an elevation's, once granted. */
  expireTime?: number
  /** A binding's elevation (it grants only while that stands); an elevation's eligibility. */
  elevationUid?: string
  eligibilityUid?: string
  /** An eligibility's approver role, and who made it (an identity's uid; null: the system). */
  approverRoleUid?: string | undefined
  grantedBy?: string | null
  /** An elevation's state as stored, its approver and its binding. */
  state?: "PENDING" | "ACTIVE" | "DENIED" | "REVOKED"
  approverUid?: string | undefined
  bindingUid?: string | undefined
  /** A binding's condition: it grants only in a decision where this holds. */
  condition?: Condition
}

/**
 * A binding's condition, of the shapes the model decides: the name of the group decided at, the moment (before a
 * time on the clock), or a property of the request's context.
 */
export type Condition =
  | { readonly kind: "name"; readonly name: string }
  | { readonly kind: "before"; readonly time: number }
  | { readonly kind: "tier"; readonly tier: string }

/** A condition as the engine takes it: its CEL expression. */
export const expressionOf = (condition: Condition): string =>
  condition.kind === "name"
    ? `resource.name == "${condition.name}"`
    : condition.kind === "before"
    ? `request.time < timestamp("${new Date(condition.time).toISOString()}")`
    : `context.tier == "${condition.tier}"`

/** What a token is narrowed to: only these capabilities, only at this group and below. */
export interface Narrowing {
  readonly capabilities: ReadonlyArray<Cap>
  readonly scope: string
}

/** The key of an entity: associations share their group's uid. */
export const keyOf = (kind: Kind, uid: string) => kind === "association" ? `association:${uid}` : uid

export const actors = ["system", "alice", "bob", "carol", "canary"] as const

/** The capability that lists each kind. */
const listedBy: Readonly<Record<Kind, Cap>> = {
  group: "groups.list",
  identity: "identity.list",
  role: "roles.list",
  binding: "role_bindings.list",
  repo: "repo.list",
  tag: "tag.list",
  provider: "identity_providers.list",
  invite: "group_invites.list",
  association: "account_associations.list",
  eligibility: "role_bindings.list",
  elevation: "role_bindings.list"
}
export type Actor = typeof actors[number]

export const roleCaps: ReadonlyArray<Cap> = [
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
  /** Each entity as a person reads it (a group's path of names), kept once it is deleted. */
  private readonly names = new Map<string, string>()
  /** What the command running picked from the pools, as names. */
  readonly picks: Array<string> = []

  constructor() {
    for (const r of Role.builtIns) {
      this.names.set(r.uid, r.name)
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
    const picked = pool.length === 0 ? undefined : pool[n % pool.length]
    this.picks.push(
      `${kind === "known-group" ? "group" : kind} ${picked === undefined ? "(none)" : this.nameOf(picked)}`
    )
    return picked
  }

  /** A group that never exists, which commands may aim at. */
  addMissing(uid: string, parent: string) {
    this.names.set(uid, `${this.nameOf(parent)}/(missing)`)
    this.knownGroups.push(uid)
  }

  /** `uid` as a person reads it: a group's path of names, a role's name, a binding's identity, role and group. */
  nameOf(uid: string): string {
    return this.names.get(uid) ?? uid
  }

  /**
   * True when removing the bindings `removed` would leave an organization that has an owner with none: the engine
   * refuses that, whatever the path (DECISIONS §20).
   */
  losesLastOwner(removed: ReadonlySet<string>): boolean {
    // An owner binding that ends, or that an elevation made, keeps nothing owned: only those that never end count.
    const owners = this.of("binding").filter((b) =>
      b.roleUid === ownerRole && Uid.parentOrNull(b.parent! as Uid.Uid) === null && b.expireTime === undefined &&
      b.elevationUid === undefined && b.condition === undefined
    )
    return owners.some((lost) =>
      removed.has(lost.uid) && owners.every((b) => b.parent !== lost.parent || removed.has(b.uid))
    )
  }

  /**
   * The API's own check about one resource at `group` (DECISIONS §21): `actor` holds `cap` there unconditionally, or
   * by a condition that holds there for a request that brings no context.
   */
  holds(actor: Actor, cap: Cap, group: string): boolean {
    return this.decides(actor, cap, group, {})
  }

  /** True when `actor` holds `cap` at `group` by bindings without a condition: what it may delegate. */
  holdsUnconditionally(actor: Actor, cap: Cap, group: string): boolean {
    if (actor === "system") return true
    return this.holdsAs(this.actorUid.get(actor)!, cap, group, true)
  }

  /** True when `narrowing` keeps `cap` at `group`, and `actor` holds it there. */
  holdsNarrowed(actor: Actor, narrowing: Narrowing, cap: Cap, group: string): boolean {
    return narrowing.capabilities.includes(cap) && Uid.isAncestorOrSelf(narrowing.scope, group) &&
      this.holds(actor, cap, group)
  }

  /**
   * True when identity `uid` (null: the system) holds `cap` at `group`: by its bindings within their windows, and
   * (`elevated`) by those of its elevations that stand; as authority (not elevated), by the others alone.
   */
  holdsAs(uid: string | null, cap: Cap, group: string, elevated = false): boolean {
    if (uid === null) return true
    return this.of("binding").some((b) =>
      b.condition === undefined && this.gives(b, uid, cap, group) &&
      (b.elevationUid === undefined || (elevated && this.elevationStands(b.elevationUid)))
    )
  }

  /** True when binding `b`, within its window, gives identity `uid` `cap` at `group` (its condition aside). */
  private gives(b: Entity, uid: string, cap: Cap, group: string): boolean {
    return b.identityUid === uid && (b.expireTime === undefined || this.now < b.expireTime) &&
      Uid.isAncestorOrSelf(b.parent!, group) && (this.entities.get(b.roleUid!)?.caps ?? []).includes(cap)
  }

  /**
   * A decision about one resource (`Access.can`, AuthZEN): `actor` holds `cap` at `group`, or a binding of its with a
   * condition gives it there and the condition holds for the group's name, the moment and `context`.
   */
  decides(actor: Actor, cap: Cap, group: string, context: { readonly tier?: string }): boolean {
    if (this.holdsUnconditionally(actor, cap, group)) return true
    // No one delegates what holds only sometimes.
    if (Capability.delegating.has(cap)) return false
    const uid = this.actorUid.get(actor)!
    return this.of("binding").some((b) =>
      b.condition !== undefined && this.gives(b, uid, cap, group) && this.conditionHolds(b.condition, group, context)
    )
  }

  private conditionHolds(condition: Condition, group: string, context: { readonly tier?: string }): boolean {
    switch (condition.kind) {
      case "name":
        return this.entities.get(group)?.kind === "group" && this.entities.get(group)!.name === condition.name
      case "before":
        return this.now < condition.time
      case "tier":
        return context.tier === condition.tier
    }
  }

  /** True when `uid` (null: the system) holds every capability of role `roleUid` at `group`, by its own bindings. */
  holdsRole(uid: string | null, roleUid: string, group: string): boolean {
    const caps = this.entities.get(roleUid)?.caps
    return caps !== undefined && caps.every((c) => this.holdsAs(uid, c, group))
  }

  /**
   * True while the elevation `uid` stands (DECISIONS §21): granted, within its own window, its eligibility there and
   * resting on its maker's authority (they could still bind its role at its scope), and its approver (when it needed
   * one) still holding the approver role there; each by their own bindings, never by an elevation.
   */
  elevationStands(uid: string): boolean {
    const elevation = this.entities.get(uid)
    const eligibility = elevation?.eligibilityUid === undefined
      ? undefined
      : this.entities.get(elevation.eligibilityUid)
    if (elevation?.state !== "ACTIVE" || eligibility === undefined || !(this.now < elevation.expireTime!)) return false
    if (!this.makerStands(eligibility)) return false
    return eligibility.approverRoleUid === undefined ||
      (elevation.approverUid !== undefined &&
        this.holdsRole(elevation.approverUid, eligibility.approverRoleUid, eligibility.parent!))
  }

  /** True while the maker of `eligibility` could still bind its role at its group (its elevations rest on that). */
  makerStands(eligibility: Entity): boolean {
    const scope = eligibility.parent!
    const role = this.entities.get(eligibility.roleUid!)
    const maker = eligibility.grantedBy ?? null
    return role !== undefined && this.holdsAs(maker, "role_bindings.create", scope) &&
      (role.parent === null ||
        (this.holdsAs(maker, "roles.list", role.parent) && Uid.isAncestorOrSelf(role.parent, scope))) &&
      this.holdsRole(maker, role.uid, scope)
  }

  /** True when a check about `e` by `actor` allows listing it: what its list shows (DECISIONS §21). */
  visible(actor: Actor, e: Entity): boolean {
    // A built-in role is everyone's.
    if (e.kind === "role" && e.parent === null) return true
    return this.holds(actor, listedBy[e.kind], this.governedAt(e))
  }

  /** The group whose capabilities govern `e`: a group and an association their own, a tag its repo's group. */
  governedAt(e: Entity): string {
    switch (e.kind) {
      case "group":
      case "association":
        return e.uid
      case "tag":
        return Uid.parentOrNull(e.parent! as Uid.Uid)!
      default:
        return e.parent!
    }
  }

  /** Anything below the group but elevations (records of what was granted), or its account association. */
  hasChildren(uid: string): boolean {
    return [...this.entities.values()].some((e) =>
      (Uid.isAncestor(uid, e.uid) && e.kind !== "elevation") || (e.kind === "association" && e.uid === uid)
    )
  }

  /** Bindings, invites, providers or eligibilities that grant the role, or eligibilities that name it their approver. */
  roleInUse(uid: string): boolean {
    return [...this.entities.values()].some((e) =>
      ((e.kind === "binding" || e.kind === "invite" || e.kind === "provider" || e.kind === "eligibility") &&
        e.roleUid === uid) || (e.kind === "eligibility" && e.approverRoleUid === uid)
    )
  }

  siblingNamed(kind: Kind, parent: string | null, name: string, except?: string): boolean {
    return this.of(kind).some((e) => e.parent === parent && e.name === name && e.uid !== except)
  }

  add(e: Entity) {
    if (e.kind !== "association") {
      const where = e.parent === null ? "" : this.nameOf(e.parent)
      this.names.set(
        e.uid,
        e.kind === "group"
          ? (e.parent === null ? e.name : `${where}/${e.name}`)
          : e.kind === "binding"
          ? `${this.nameOf(e.identityUid!)} → ${this.nameOf(e.roleUid!)} at ${where}`
          : `${where}/${e.name}`
      )
    }
    this.entities.set(keyOf(e.kind, e.uid), e)
    this.cache.clear()
    if (e.kind === "group") this.knownGroups.push(e.uid)
  }

  nextUpdate(e: Entity) {
    e.updateTime = Math.max(this.now, e.updateTime + 1)
  }
}

export const orders: Record<Kind, ReadonlyArray<string>> = {
  group: ["uid", "name", "name desc", "create_time desc", "update_time, name desc"],
  identity: ["uid desc", "name", "created_at"],
  role: ["name", "uid", "update_time desc"],
  binding: ["uid", "create_time desc, uid asc", "updated_at"],
  repo: ["name", "uid desc"],
  tag: ["name desc", "create_time"],
  provider: ["name", "uid"],
  invite: ["create_time desc", "uid"],
  association: ["uid", "name desc"],
  eligibility: ["uid"],
  elevation: ["uid"]
}

export const columnOf = (key: string) =>
  ({
    uid: "uid",
    name: "name",
    create_time: "createTime",
    created_at: "createTime",
    update_time: "updateTime",
    updated_at: "updateTime"
  })[key]!

/** The model's order: `order_by` keys, then uid in the direction of the last key. */
export const sortModel = (entities: Array<Entity>, orderBy: string) => {
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
