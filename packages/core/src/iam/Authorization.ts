/**
 * Authorization (docs/api.md §7): an identity holds capability C at group G when a role binding at G or at any
 * ancestor of G gives it a role containing C (or a group mapping does, §13: for a token whose sign-in it gave, or
 * while the identity is a member of a group its provider's SCIM client pushed). Decided from the current bindings
 * on every call: each principal's grants are cached with the version of the bindings, roles, mappings and pushed
 * groups they were read at (`Versions.grants`), which every write to those tables replaces in its own transaction,
 * so one read of that version row tells a current cache from a stale one, whichever process wrote.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Errors from "../engine/Errors.js"
import * as Versions from "../engine/internal/storage/versions.js"
import { operation, spansWanted } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import { orInternal } from "../engine/Repository.js"
import { Store } from "../engine/Store.js"
import { isAncestorOrSelf, parentOrNull } from "../engine/Uid.js"
import type { Uid } from "../engine/Uid.js"
import type * as ChangeLog from "../events/ChangeLog.js"
import * as ScimGroup from "../provisioning/ScimGroup.js"
import * as ScimUser from "../provisioning/ScimUser.js"
import type { Capability } from "./Capability.js"
import * as Condition from "./Condition.js"
import * as Elevation from "./Elevation.js"
import * as Eligibility from "./Eligibility.js"
import * as ExternalGroupRoleMapping from "./ExternalGroupRoleMapping.js"
import * as Group from "./Group.js"
import * as Conditions from "./internal/conditions.js"
import type { Target } from "./internal/conditions.js"
import {
  type ConditionOutcome,
  type DecisionRequest,
  type Edges,
  type Grant,
  Grants,
  type Held,
  nowOf,
  withdrawn
} from "./internal/grants.js"
import type { Principal } from "./Principal.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"

export { atGroup, type Target } from "./internal/conditions.js"
export { type ConditionOutcome, type DecisionRequest, type Grant, Grants } from "./internal/grants.js"

const everything = new Grants(true, [])

/** How many principals' grants are cached at most. */
const cacheSize = 10_000

/** Grants lookups of identities, by `result`: `hit` (cached and current) or `miss` (read from the store). */
export const cacheLookups = Metric.counter("arbor_authorization_cache_lookups", {
  description: "grants lookups of identities, by result: hit (cached and current) or miss (read from the store)",
  incremental: true
})
/**
 * Counts a lookup by its result. Each result has one label array for good: a counter finds its series by the identity
 * of the labels it is given, and `Metric.tagged` makes a new array on every update (a registry lookup by hash, a fifth
 * of a warm decision).
 */
const lookedUp = (() => {
  const labels = { hit: [MetricLabel.make("result", "hit")], miss: [MetricLabel.make("result", "miss")] }
  return (result: "hit" | "miss") => cacheLookups.unsafeUpdate(1, labels[result])
})()

/**
 * The kinds of write that may change what a caller may do, or whether it may act at all: bindings and roles (its
 * grants), SCIM users (deprovisioning), group mappings (a sign-in's session roles), identities and identity
 * providers (whose deletion takes the rest with it). A stream re-checks its caller after each of them.
 */
export const changesAuthority = (kind: ChangeLog.ResourceKind): boolean => authorityKinds.has(kind)

const authorityKinds: ReadonlySet<ChangeLog.ResourceKind> = new Set([
  "role_binding",
  "role",
  "scim_user",
  "scim_group",
  "external_group_role_mapping",
  "eligibility",
  "elevation",
  "identity",
  "identity_provider"
])

/** Builds the Authorization service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)
  const roles = yield* Repository.make(Role.table, Role.Role)
  const mappings = yield* Repository.make(ExternalGroupRoleMapping.table, ExternalGroupRoleMapping.Record)
  const scimUsers = yield* Repository.make(ScimUser.table, ScimUser.Record)
  const scimGroups = yield* Repository.make(ScimGroup.table, ScimGroup.Record)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const eligibilities = yield* Repository.make(Eligibility.table, Eligibility.Record)
  const elevations = yield* Repository.make(Elevation.table, Elevation.Record)
  const builtIn: ReadonlyMap<string, ReadonlySet<Capability>> = new Map(
    Role.builtIns.map((r) => [r.uid, new Set(r.capabilities)])
  )

  const store = yield* Store
  /** Grants by principal uid, each with the version it was read at; emptied when it holds `cacheSize`. */
  const cache = new Map<string, { readonly version: string; readonly held: Held }>()
  const versions = Versions.of(store)
  const version = orInternal(versions.current(Versions.grants))

  /**
   * An identity's bindings, and the providers whose SCIM clients deactivated or deleted it: its bindings in their
   * organizations' groups give nothing (docs/api.md §13); then what the group mappings of the groups the other
   * providers' clients pushed with it as a member give it. `asAuthority`: what others' grants may rest on, its
   * bindings alone, without pushed groups or elevations (so that such grants never rest on one another).
   */
  const load = (
    principal: Principal & { readonly _tag: "Identity" },
    options: { readonly asAuthority: boolean }
  ): Effect.Effect<Held, Errors.StoreFailure> =>
    Effect.gen(function*() {
      const [all, provisioned] = yield* Effect.all([
        bindings.find({
          conditions: [{ _tag: "Equals", column: "identityUid", value: principal.uid }],
          order: [{ column: "uid", direction: "asc" }]
        }),
        scimUsers.find({
          conditions: [{ _tag: "Equals", column: "identityUid", value: principal.uid }],
          order: [{ column: "uid", direction: "asc" }]
        })
      ])
      const providerOf = (user: ScimUser.Record) => parentOrNull(user.uid) ?? []
      const stopped = provisioned.filter((user) => !user.active).flatMap(providerOf)
      // When what these grants rest on next starts or ends: then they stop being current (DECISIONS §21).
      const edges: Edges = { next: Infinity }
      const held = yield* standing(all, principal.uid, options, edges)
      // Only the bindings whose window holds now; the next edge of any window is when these grants stop being current.
      const now = yield* Clock.currentTimeMillis
      const granting = held.filter((b) => {
        const starts = b.startTime?.epochMillis
        const ends = b.expireTime?.epochMillis
        if (starts !== undefined && starts > now) edges.next = Math.min(edges.next, starts)
        if (ends !== undefined && ends > now) edges.next = Math.min(edges.next, ends)
        return RoleBinding.stateAt(b, now) === "ACTIVE"
      })
      const pending = held.filter((b) => RoleBinding.stateAt(b, now) === "PENDING")
      const capabilities = yield* capabilitiesOf([...granting, ...pending].map((b) => b.roleUid))
      const grantsOf = (of: ReadonlyArray<RoleBinding.Record>) => {
        const made = of.flatMap((b): ReadonlyArray<Grant> => {
          const caps = capabilities(b.roleUid)
          return caps === undefined
            ? []
            : [{
              group: b.parent,
              capabilities: caps,
              source: {
                role: b.roleUid,
                binding: b.uid,
                ...(b.expireTime === null ? {} : { expireTime: b.expireTime.epochMillis })
              },
              ...(b.condition === null
                ? {}
                : { condition: { written: b.condition, compiled: Condition.compiled(b.condition.expression) } })
            }]
        })
        return withdrawn(
          new Grants(
            false,
            made.filter((g) => g.condition === undefined),
            made.filter((g) => g.condition !== undefined)
          ),
          stopped
        )
      }
      const bound = grantsOf(granting)
      const active = provisioned.filter((user) => user.active).flatMap(providerOf)
      // The mappings of pushed groups rest on their creators' bindings: when one of those starts or ends, so may they.
      const pushed = options.asAuthority || active.length === 0
        ? []
        : yield* memberships(principal.uid, active, edges)
      const grants = bound.with(new Grants(false, pushed))
      return {
        stopped,
        bound,
        grants,
        ahead: pending.length === 0 ? grants : grants.with(grantsOf(pending)),
        changesAt: edges.next
      }
    })

  /**
   * `all` of an identity's bindings but those made by elevations that no longer stand (DECISIONS §21): one stands
   * while it is granted and its own window (from its times, whatever its binding says) is open, its eligibility is still there for that identity and role and rests on its maker's
   * authority, and its approver (when it needed one) still holds the approver role's capabilities at its group. As
   * authority (`asAuthority`), no elevation counts.
   */
  const standing = (
    all: ReadonlyArray<RoleBinding.Record>,
    identityUid: Uid,
    options: { readonly asAuthority: boolean },
    edges: Edges
  ) =>
    Effect.gen(function*() {
      const elevated = all.filter((b) => b.elevationUid !== null)
      if (elevated.length === 0) return all
      if (options.asAuthority) return all.filter((b) => b.elevationUid === null)
      const found = yield* elevations.getMany(elevated.map((b) => b.elevationUid!))
      const eligible = new Map(
        (yield* eligibilities.getMany([...new Set(found.map((e) => e.eligibilityUid))])).map((e) => [e.uid, e] as const)
      )
      const kept = new Set<string>()
      const now = yield* Clock.currentTimeMillis
      for (const elevation of found) {
        const eligibility = eligible.get(elevation.eligibilityUid)
        // Granted, and within its own window, computed from its times whatever its binding says.
        if (
          eligibility === undefined || Elevation.stateAt(elevation, now) !== "ACTIVE" ||
          elevation.expireTime === null || elevation.bindingUid === null ||
          eligibility.identityUid !== identityUid || eligibility.roleUid !== elevation.roleUid
        ) continue
        edges.next = Math.min(edges.next, elevation.expireTime.epochMillis)
        const scope = eligibility.parent
        if (!(yield* stands({ grantedBy: eligibility.grantedBy, roleUid: eligibility.roleUid, scope }, edges))) continue
        if (elevation.approverUid !== null) {
          if (eligibility.approverRoleUid === null) continue
          if (!(yield* holdsRole(elevation.approverUid, eligibility.approverRoleUid, scope, edges))) continue
        }
        kept.add(elevation.bindingUid)
      }
      return all.filter((b) => b.elevationUid === null || kept.has(b.uid))
    })

  /**
   * What the group mappings of the groups that `providers`' SCIM clients pushed with `identityUid` as a member give
   * it: a mapping whose external group is such a group's `displayName` or `externalId`, while it stands.
   */
  const memberships = (identityUid: Uid, providers: ReadonlyArray<Uid>, edges: Edges) =>
    Effect.gen(function*() {
      const groups = yield* scimGroups.find({
        conditions: [
          { _tag: "In", column: "parent", values: providers },
          { _tag: "Overlaps", column: "members", values: [identityUid] }
        ],
        order: [{ column: "uid", direction: "asc" }]
      })
      if (groups.length === 0) return []
      const externalIds = new Map<string, Set<string>>()
      for (const group of groups) {
        const provider = parentOrNull(group.uid)!
        const ids = externalIds.get(provider) ?? new Set<string>()
        for (const id of ScimGroup.externalIdsOf(group)) ids.add(id)
        externalIds.set(provider, ids)
      }
      const found = yield* mappings.find({
        conditions: [
          { _tag: "In", column: "parent", values: [...externalIds.keys()] },
          { _tag: "In", column: "externalGroupId", values: [...new Set(groups.flatMap(ScimGroup.externalIdsOf))] }
        ],
        order: [{ column: "uid", direction: "asc" }]
      })
      return yield* granted(
        found.filter((m) => externalIds.get(m.identityProviderUid)?.has(m.externalGroupId) === true),
        edges
      )
    })

  /** The capabilities of roles, built-in or custom (those gone give none). */
  const capabilitiesOf = (roleUids: ReadonlyArray<string>) =>
    Effect.map(
      roles.getMany([...new Set(roleUids)].filter((uid) => !builtIn.has(uid))),
      (custom) => {
        const found = new Map(custom.map((r) => [r.uid as string, new Set(r.capabilities)] as const))
        return (uid: string) => builtIn.get(uid) ?? found.get(uid)
      }
    )

  /**
   * What the group mappings a sign-in gave a token hold now: each still there gives its role at its scope (one
   * deleted since gives nothing from the next call on).
   */
  const mapped = (uids: ReadonlyArray<Uid> | undefined): Effect.Effect<ReadonlyArray<Grant>, Errors.StoreFailure> =>
    uids === undefined || uids.length === 0
      ? Effect.succeed([])
      : Effect.flatMap(mappings.getMany(uids), (found) => granted(found))

  /**
   * What `found` mappings give, each as long as it stands on its creator's authority (as at sign-in); `edges` learns
   * when the creators' bindings next start or end.
   */
  const granted = (found: ReadonlyArray<ExternalGroupRoleMapping.Record>, edges?: Edges) =>
    Effect.gen(function*() {
      const standing = yield* Effect.filter(found, (mapping) => stands(mapping, edges))
      const capabilities = yield* capabilitiesOf(standing.map((m) => m.roleUid))
      return standing.flatMap((m): ReadonlyArray<Grant> => {
        const caps = capabilities(m.roleUid)
        return caps === undefined
          ? []
          : [{ group: m.scope, capabilities: caps, source: { role: m.roleUid, mapping: m.uid } }]
      })
    })

  /**
   * True while a group mapping rests on its creator's authority: they could still bind its role at its scope
   * (`role_bindings.create` there, the role one they may read, defined at or above the scope, and every one of its
   * capabilities held there), by their bindings alone (so that mappings never rest on one another). DECISIONS §7: no
   * grant outlives the authority that made it; asked at each sign-in, at each use of a token that carries the
   * mapping, and whenever a pushed group's member's grants are read.
   */
  const stands = (
    mapping: {
      readonly grantedBy: Uid | null
      readonly roleUid: Uid
      readonly scope: Uid
    },
    edges?: Edges
  ): Effect.Effect<boolean, Errors.StoreFailure> =>
    Effect.gen(function*() {
      const held = mapping.grantedBy === null ? undefined : yield* boundHeldOf(mapping.grantedBy)
      if (held !== undefined && edges !== undefined) edges.next = Math.min(edges.next, held.changesAt)
      const creator = held?.bound ?? everything
      if (!creator.holds(RoleBinding.permissions.create, mapping.scope)) return false
      const roleGroup = parentOrNull(mapping.roleUid)
      if (
        roleGroup !== null && (!creator.holds(Role.permissions.list, roleGroup) ||
          !isAncestorOrSelf(roleGroup, mapping.scope))
      ) return false
      const capabilities = (yield* capabilitiesOf([mapping.roleUid]))(mapping.roleUid)
      return capabilities !== undefined && creator.holdsAll(capabilities, mapping.scope)
    })

  const grants = (principal: Principal): Effect.Effect<Grants, Errors.StoreFailure> =>
    principal._tag === "System"
      ? Effect.succeed(everything)
      : Effect.zipWith(
        held(principal),
        mapped(principal.mappings),
        (held, session) =>
          held.grants.with(withdrawn(new Grants(false, session), held.stopped)).narrow(principal.narrowed)
      )

  /**
   * What an identity's bindings and pushed groups give it, cached by identity (narrowing is applied after, per
   * token).
   */
  const held = (principal: Principal & { readonly _tag: "Identity" }) =>
    cachedAs(principal.uid, load(principal, { asAuthority: false }))

  /** What identity `uid`'s bindings alone give it (`bound`), cached beside `held`. */
  const boundHeldOf = (uid: Uid) => cachedAs(`bound:${uid}`, load({ _tag: "Identity", uid }, { asAuthority: true }))

  /**
   * True when identity `uid` holds every capability of role `roleUid` at `scope` by its own bindings (no elevation,
   * no pushed group): who may approve an elevation, and whose approval keeps one standing (DECISIONS §21). With
   * `edges`, that authority's next window edge is one of theirs.
   */
  const holdsRole = (uid: Uid, roleUid: Uid, scope: Uid, edges?: Edges) =>
    Effect.gen(function*() {
      const authority = yield* boundHeldOf(uid)
      if (edges !== undefined) edges.next = Math.min(edges.next, authority.changesAt)
      const capabilities = (yield* capabilitiesOf([roleUid]))(roleUid)
      return capabilities !== undefined && authority.bound.holdsAll(capabilities, scope)
    })

  /** What `load` reads, from the cache under `key` while the grants' version is the one it was read at. */
  const cachedAs = (key: string, load: Effect.Effect<Held, Errors.StoreFailure>) =>
    Effect.gen(function*() {
      // The version is read before the bindings: grants cached under it are at least that recent.
      const current = yield* version
      const cached = cache.get(key)
      // The clock is read only for grants with a window ahead, as `currentGrants` does.
      if (
        cached !== undefined && cached.version === current &&
        (cached.held.changesAt === Infinity || (yield* Clock.currentTimeMillis) < cached.held.changesAt)
      ) {
        lookedUp("hit")
        return cached.held
      }
      lookedUp("miss")
      const loaded = yield* load
      if (cache.size >= cacheSize) cache.clear()
      cache.set(key, { version: current, held: loaded })
      return loaded
    })

  /**
   * What `principal` holds, without reading the store, when that is known to be current for `fiber`: the system,
   * or an identity (its token carrying no group mappings, which are read on each use) whose grants are cached at
   * the version of the grants that the store's change marker says is still current. Undefined otherwise: then
   * `grants` reads what it must.
   */
  const currentGrants = (principal: Principal, fiber: Fiber.RuntimeFiber<unknown, unknown>): Grants | undefined => {
    if (principal._tag === "System") return everything
    if (principal.mappings !== undefined && principal.mappings.length > 0) return undefined
    const cached = cache.get(principal.uid)
    if (cached === undefined || versions.unchanged(Versions.grants, fiber) !== cached.version) return undefined
    // A window that opened or closed since they were read: read them again (the clock is read only for such grants).
    if (cached.held.changesAt !== Infinity && nowOf(fiber) >= cached.held.changesAt) return undefined
    lookedUp("hit")
    return cached.held.grants.narrow(principal.narrowed)
  }

  /**
   * `decide` of what `principal` holds: at once on the cached grants when they are current (no read, no span),
   * else on the grants read. One function for both the grants and a single decision, which is the hottest path
   * (`Access.can`: mapping the grants after would cost it a fifth more).
   */
  const warm = <A>(principal: Principal, decide: (grants: Grants) => A): Effect.Effect<A, Errors.StoreFailure> =>
    Effect.withFiberRuntime((fiber) => {
      const current = spansWanted(fiber) ? undefined : currentGrants(principal, fiber)
      return current !== undefined
        ? Effect.succeed(decide(current))
        : Effect.map(operation("Authorization.grants")(grants(principal)), decide)
    })
  const grantsNow = (principal: Principal) => warm(principal, (held) => held)

  const { conditionsOf, visibleRows } = Conditions.make(groups)

  /**
   * True when `principal` (whose grants are `loaded`, when they are at hand) may take `capability` on `target`: by
   * its grants, or by a conditional grant whose condition holds for that resource now (DECISIONS §21).
   */
  const allows = (principal: Principal, capability: Capability, target: Target, loaded?: Grants) =>
    loaded === undefined
      ? service.decides(principal, capability, target.group, () =>
        Conditions.requestOf(principal, target, Condition.budget()))
      : loaded.holds(capability, target.group)
      ? Effect.succeed(true)
      : Effect.map(
        conditionsOf(loaded, capability, target.group, Conditions.requestOf(principal, target, Condition.budget())),
        (outcomes) =>
          outcomes.some((o) =>
            o.outcome.held
          )
      )

  const service: AuthorizationService = {
    holds: (principal: Principal, capability: Capability, group: string) =>
      warm(principal, (held) => held.holds(capability, group)),
    decides: (principal: Principal, capability: Capability, group: Uid, request: () => DecisionRequest) =>
      Effect.withFiberRuntime<boolean, Errors.StoreFailure>((fiber) => {
        const current = spansWanted(fiber) ? undefined : currentGrants(principal, fiber)
        if (current !== undefined) {
          if (current.holds(capability, group)) return Effect.succeed(true)
          const candidates = current.conditionalGiving(capability, group)
          if (candidates.length === 0) return Effect.succeed(false)
          if (!candidates.some((g) => g.condition!.compiled.readsNames)) {
            const attributes = Conditions.attributesOf(request(), capability, nowOf(fiber))
            return Effect.succeed(candidates.some((g) => g.condition!.compiled.decide(attributes).held))
          }
        }
        return Effect.flatMap(grantsNow(principal), (grants) =>
          grants.holds(capability, group)
            ? Effect.succeed(true)
            : Effect.map(conditionsOf(grants, capability, group, request()), (outcomes) =>
              outcomes.some((o) => o.outcome.held)))
      }),
    conditionsOf,
    admit: (principal: Principal): Effect.Effect<Principal, Errors.StoreFailure | Errors.Unauthenticated> =>
      principal._tag === "System" || principal.provider === undefined
        ? Effect.succeed(principal)
        : Effect.flatMap(held(principal), ({ stopped }) =>
          stopped.includes(principal.provider!)
            ? Effect.fail(
              new Errors.Unauthenticated({
                why: "the identity provider this token's sign-in came through has deprovisioned its person",
                reason: "DEPROVISIONED"
              })
            )
            : Effect.succeed(principal)),
    grants: grantsNow,
    heldAhead: (uid: Uid) => Effect.map(held({ _tag: "Identity", uid }), (loaded) => loaded.ahead),
    holdsRole: (principal: Principal, roleUid: Uid, scope: Uid) =>
      principal._tag !== "Identity" ? Effect.succeed(false) : Effect.gen(function*() {
        const authority = yield* boundHeldOf(principal.uid)
        const capabilities = (yield* capabilitiesOf([roleUid]))(roleUid)
        return capabilities !== undefined && authority.bound.narrow(principal.narrowed).holdsAll(capabilities, scope)
      }),
    grantStands: (grant: Parameters<typeof stands>[0]) => stands(grant),
    allows,
    visibleRows,
    check: (principal: Principal, capability: Capability, target: Target, loaded?: Grants) =>
      operation("Authorization.check", { "arbor.capability": capability })(
        Effect.flatMap(
          allows(principal, capability, target, loaded),
          (allowed) =>
            allowed ? Effect.void : Effect.fail(new Errors.PermissionDenied({ capability, resource: target.uid }))
        )
      )
  }
  return service
})

/**
 * The Authorization service: what a principal holds, from the current role bindings (a revoked binding takes
 * effect at once), and the checks every surface makes with it.
 */
export interface AuthorizationService {
  /** True when `principal` holds `capability` at `group` (or above it), decided as `grants` reads them. */
  readonly holds: (
    principal: Principal,
    capability: Capability,
    group: string
  ) => Effect.Effect<boolean, Errors.StoreFailure>
  /**
   * True when `principal` holds `capability` at `group` for a decision about one resource (`request`): by its
   * grants, or by a conditional grant whose condition holds for the request now (DECISIONS §21). Without a read
   * when the grants are current and no condition wants the group's names. `request` is made only when a condition
   * is to be decided.
   */
  readonly decides: (
    principal: Principal,
    capability: Capability,
    group: Uid,
    request: () => DecisionRequest
  ) => Effect.Effect<boolean, Errors.StoreFailure>
  /** How each conditional grant of `grants` that would give `capability` at `group` comes out for `request`. */
  readonly conditionsOf: (
    grants: Grants,
    capability: Capability,
    group: Uid,
    request: DecisionRequest
  ) => Effect.Effect<ReadonlyArray<ConditionOutcome>, Errors.StoreFailure>
  /**
   * `principal`, unless its token came from a sign-in through an identity provider whose SCIM client has since
   * deactivated or deleted it: that token no longer authenticates (docs/api.md §13).
   */
  readonly admit: (principal: Principal) => Effect.Effect<Principal, Errors.StoreFailure | Errors.Unauthenticated>
  /** What `principal` holds, from its current bindings. */
  readonly grants: (principal: Principal) => Effect.Effect<Grants, Errors.StoreFailure>
  /**
   * What identity `uid` holds now or will hold by a binding that starts later, with no write: what whoever could
   * act as it must hold already (no escalation through identities, docs/api.md §7).
   */
  readonly heldAhead: (uid: Uid) => Effect.Effect<Grants, Errors.StoreFailure>
  /**
   * True when `principal` is an identity holding every capability of role `roleUid` at `scope` by its own bindings
   * (no elevation, no pushed group), as far as its token's narrowing reaches: who may approve, deny or see an
   * elevation as its approver (DECISIONS §21).
   */
  readonly holdsRole: (principal: Principal, roleUid: Uid, scope: Uid) => Effect.Effect<boolean, Errors.StoreFailure>
  /**
   * True while a grant that someone made (a group mapping, an eligibility) rests on their authority: they could
   * still bind its role at its scope.
   */
  readonly grantStands: (
    grant: { readonly grantedBy: Uid | null; readonly roleUid: Uid; readonly scope: Uid }
  ) => Effect.Effect<boolean, Errors.StoreFailure>
  /**
   * True when `principal` may take `capability` on one resource, `target`: held at its group, or given there by a
   * conditional grant whose condition holds for it now (DECISIONS §21; never a capability that delegates). `loaded`:
   * `principal`'s grants, when the caller has them at hand.
   */
  readonly allows: (
    principal: Principal,
    capability: Capability,
    target: Target,
    loaded?: Grants
  ) => Effect.Effect<boolean, Errors.StoreFailure>
  /**
   * The ranges of rows a list shows beyond what the unconditional grants show (`covered`), through conditional grants
   * of `capability`, each row decided as a check about it would be: a list shows exactly what its caller could get.
   */
  readonly visibleRows: ReturnType<typeof Conditions.make>["visibleRows"]
  /** The API's own check of every act on one resource: fails with PermissionDenied naming it unless `allows`. */
  readonly check: (
    principal: Principal,
    capability: Capability,
    target: Target,
    loaded?: Grants
  ) => Effect.Effect<void, Errors.StoreFailure | Errors.PermissionDenied>
}

/** Loads grants from the current role bindings. */
export class Authorization extends Effect.Service<Authorization>()("@arbor/core/Authorization", { effect: make }) {}
