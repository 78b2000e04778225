/**
 * The Elevations service (DECISIONS §21; docs/api.md §2): just-in-time elevation. An eligibility lets its identity
 * ask to hold a role at a group for a reason and a while (`elevate`); granted at once, or when an identity holding
 * the eligibility's approver role there approves (`approve`; never the one who asked), it is an expiring role binding
 * made for it, which gives its role only while the elevation stands (`Authorization`): deleting the eligibility, or
 * the approver's losing the role, ends it at once, pending ones too.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Errors from "../engine/Errors.js"
import { commit, conflict, operations, orNotFound, trusted } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import { atGroup } from "./Authorization.js"
import * as Elevation from "./Elevation.js"
import * as Eligibility from "./Eligibility.js"
import * as Group from "./Group.js"
import * as Identity from "./Identity.js"
import { canReadRole, grantable, grantor } from "./internal/roles.js"
import { actsAsItselfAt, type Principal } from "./Principal.js"
import * as Role from "./Role.js"
import { RoleBindings } from "./RoleBindings.js"

const asEligibility = ({ grantedBy: _, parent: _parent, ...eligibility }: Eligibility.Record) =>
  new Eligibility.Eligibility(eligibility, trusted)

/** An elevation as a reader sees it now: one whose time is up has ended. */
const asElevation = (now: number) => ({ parent: _, ...elevation }: Elevation.Record) =>
  new Elevation.Elevation({ ...elevation, state: Elevation.stateAt({ parent: _, ...elevation }, now) }, trusted)

/** A precondition refused: `summary`, one violation of `type` on `subject`. */
const refused = (summary: string, type: string, subject: string) =>
  new Errors.FailedPrecondition({
    summary,
    violations: [new Errors.PreconditionViolation({ type, subject, description: summary })],
    reason: type
  })

/** The filters of a list of eligibilities, beside the common list parameters. */
export interface EligibilityListOptions extends Lists.ListOptions {
  /** Only those of this identity: the caller's own need no `role_bindings.list`, so a person finds what to ask for. */
  readonly identity?: string | undefined
}

/** The most of its own eligibilities a caller is shown at once. */
const maxOwn = 200

/** The filters of a list of elevations, beside the common list parameters. */
export interface ElevationListOptions extends Lists.ListOptions {
  /** Only those in this state (`PENDING`: those waiting for an approver). */
  readonly state?: Elevation.State | undefined
  /**
   * The caller's own uid: the pending elevations of others that it may approve (at most 200, one page), whatever it
   * may list.
   */
  readonly approver?: string | undefined
}

/** Builds the Elevations service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const bindings = yield* RoleBindings
  const eligibilities = yield* Repository.make(Eligibility.table, Eligibility.Record)
  const elevations = yield* Repository.make(Elevation.table, Elevation.Record)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const roles = yield* Repository.make(Role.table, Role.Role)
  const authorization = ops.authorization
  /** Writes an elevation's new state (its table has no unique key but its uid, which an update keeps). */
  const rewrite = (elevation: Elevation.Record) =>
    Effect.asVoid(Effect.catchTag(elevations.update(elevation), "UniqueViolation", (e) => Effect.die(e)))

  const eligibilityKind: Resources.Kind<Eligibility.Record> = {
    resourceType: "eligibility",
    repository: eligibilities,
    permissions: Eligibility.permissions,
    groupOf: Resources.parentGroup
  }
  const eligibilitySpec: Lists.ListSpec<Eligibility.Eligibility, Eligibility.Record> = {
    target: (uid) => Resources.targetOf(eligibilityKind, uid),
    load: (records) => Effect.succeed(records.map(asEligibility)),
    repository: eligibilities,
    capability: Eligibility.permissions.list,
    visibleAt: "parent"
  }
  const elevationSpec: Lists.ListSpec<Elevation.Elevation, Elevation.Record> = {
    target: (uid) => ({ group: Resources.parentGroup(uid), uid, kind: "elevation" }),
    load: (records) => Effect.map(DateTime.now, (now) => records.map(asElevation(now.epochMillis))),
    repository: elevations,
    capability: Eligibility.permissions.list,
    visibleAt: "parent"
  }

  const holdsRole = authorization.holdsRole

  /**
   * The elevation `uid`, or NotFound: for whoever asked for it, may list bindings at its group, or holds the approver
   * role of its eligibility there.
   */
  const readable = (principal: Principal, uid: string) =>
    Effect.gen(function*() {
      const id = yield* Uid.parse(uid)
      const found = yield* elevations.get(id)
      if (Option.isNone(found)) return yield* orNotFound(Effect.succeedNone, "elevation", id)
      const elevation = found.value
      if (actsAsItselfAt(principal, elevation.identityUid, elevation.parent)) return elevation
      const target = { group: elevation.parent, uid: elevation.uid, kind: "elevation" }
      if (yield* authorization.allows(principal, Eligibility.permissions.list, target)) return elevation
      const eligibility = Option.getOrUndefined(yield* eligibilities.get(elevation.eligibilityUid))
      const approves = eligibility?.approverRoleUid !== null && eligibility !== undefined &&
        (yield* holdsRole(principal, eligibility.approverRoleUid!, elevation.parent))
      return approves ? elevation : yield* orNotFound(Effect.succeedNone, "elevation", id)
    })

  /**
   * Refuses `principal` as the approver of `elevation` unless it is another identity than the one who asked, holding
   * every capability of the eligibility's approver role at its group by its own bindings (not by an elevation).
   */
  const requireApprover = (principal: Principal, elevation: Elevation.Record, eligibility: Eligibility.Record) =>
    Effect.gen(function*() {
      if (principal._tag !== "Identity" || principal.uid === elevation.identityUid) {
        return yield* new Errors.PermissionDenied({
          capability: Eligibility.permissions.create,
          resource: elevation.uid,
          reason: principal._tag === "Identity" ? "SELF_APPROVAL" : "APPROVER_NOT_AN_IDENTITY"
        })
      }
      if (eligibility.approverRoleUid === null) {
        return yield* refused("this elevation needs no approval", "NO_APPROVAL_NEEDED", elevation.uid)
      }
      if (!(yield* holdsRole(principal, eligibility.approverRoleUid, eligibility.parent))) {
        return yield* new Errors.PermissionDenied({
          capability: Eligibility.permissions.create,
          resource: elevation.uid,
          reason: "NOT_AN_APPROVER"
        })
      }
    })

  /** Makes the expiring binding that grants `elevation` from `now`, and marks it granted (by `approverUid`). */
  const grant = (elevation: Elevation.Record, approverUid: Uid.Uid | null, now: DateTime.Utc) =>
    Effect.gen(function*() {
      const expireTime = DateTime.unsafeMake(now.epochMillis + elevation.durationSeconds * 1000)
      const bindingUid = yield* bindings.bindElevated({
        group: Uid.parentOrNull(elevation.uid)!,
        identityUid: elevation.identityUid,
        roleUid: elevation.roleUid,
        expireTime,
        elevationUid: elevation.uid
      })
      const granted: Elevation.Record = {
        ...elevation,
        state: "ACTIVE",
        approverUid,
        bindingUid,
        expireTime,
        updateTime: now
      }
      yield* rewrite(granted)
      return granted
    })

  /** The eligibility of `elevation` while it stands: still there, and resting on its maker's authority. */
  const standingEligibility = (elevation: Elevation.Record) =>
    Effect.gen(function*() {
      const eligibility = yield* eligibilities.get(elevation.eligibilityUid)
      const stands = Option.isSome(eligibility) && (yield* authorization.grantStands({
        grantedBy: eligibility.value.grantedBy,
        roleUid: eligibility.value.roleUid,
        scope: eligibility.value.parent
      }))
      if (!stands) {
        return yield* refused(
          "the eligibility is gone, or its maker could no longer grant its role",
          "NOT_ELIGIBLE",
          elevation.uid
        )
      }
      return Option.getOrThrow(eligibility)
    })

  /**
   * The pending elevations of others that `principal` (`approver`, its own uid) may approve: those of the
   * eligibilities of its organization whose approver role it holds there by its own bindings.
   */
  const approvable = (principal: Principal, approver: string) =>
    Effect.gen(function*() {
      if (principal._tag !== "Identity" || approver !== principal.uid) {
        return yield* Errors.InvalidArgument.field("approver", "must be your own uid")
      }
      const asking = (yield* eligibilities.find({
        ranges: [Uid.subtree(Uid.rootOf(principal.uid))],
        order: [{ column: "uid", direction: "asc" }]
      })).filter((e) => e.approverRoleUid !== null && e.identityUid !== principal.uid)
      // Each approver role at each group asked about once, however many eligibilities name it there.
      const authority = new Map<string, boolean>()
      for (const { approverRoleUid, parent } of asking) {
        const key = `${approverRoleUid} ${parent}`
        if (approverRoleUid !== null && !authority.has(key)) {
          authority.set(key, yield* holdsRole(principal, approverRoleUid, parent))
        }
      }
      const approves = asking.filter((e) => authority.get(`${e.approverRoleUid} ${e.parent}`) === true)
      const waiting = approves.length === 0 ? [] : yield* elevations.find({
        conditions: [
          { _tag: "In", column: "eligibilityUid", values: approves.map((e) => e.uid) },
          { _tag: "Equals", column: "state", value: "PENDING" }
        ],
        order: [{ column: "uid", direction: "asc" }],
        limit: maxOwn
      })
      const now = yield* DateTime.now
      return {
        items: waiting.map(asElevation(now.epochMillis)),
        nextPageToken: undefined,
        totalCount: waiting.length,
        skipped: 0
      } satisfies Lists.Page<Elevation.Elevation>
    })

  /** The pending elevation `uid` for its approver to decide, with its eligibility. */
  const pending = (principal: Principal, uid: string) =>
    Effect.gen(function*() {
      const elevation = yield* readable(principal, uid)
      const eligibility = yield* standingEligibility(elevation)
      yield* requireApprover(principal, elevation, eligibility)
      const now = yield* DateTime.now
      if (Elevation.stateAt(elevation, now.epochMillis) !== "PENDING") {
        return yield* refused(
          `the elevation is ${Elevation.stateAt(elevation, now.epochMillis).toLowerCase()}, not pending`,
          "NOT_PENDING",
          elevation.uid
        )
      }
      return { elevation, now }
    })

  const service: ElevationsService = {
    listEligibilities: (principal: Principal, options: EligibilityListOptions = {}) =>
      operation("Elevations.listEligibilities")(
        principal._tag === "Identity" && options.identity === principal.uid
          ? Effect.map(
            eligibilities.find({
              conditions: [{ _tag: "Equals", column: "identityUid", value: principal.uid }],
              order: [{ column: "uid", direction: "asc" }],
              limit: maxOwn
            }),
            (all): Lists.Page<Eligibility.Eligibility> => {
              // A narrowed token sees those its narrowing reaches.
              const found = all.filter((e) => actsAsItselfAt(principal, principal.uid, e.parent))
              return { items: found.map(asEligibility), nextPageToken: undefined, totalCount: found.length, skipped: 0 }
            }
          )
          : Lists.list(
            ops,
            eligibilitySpec,
            principal,
            options,
            options.identity === undefined
              ? { conditions: [], digest: null }
              : {
                conditions: [{ _tag: "Equals", column: "identityUid", value: options.identity }],
                digest: [options.identity]
              }
          )
      ),

    getEligibility: (principal: Principal, uid: string) =>
      operation("Elevations.getEligibility")(
        Effect.map(Resources.get(ops, eligibilityKind, principal, uid), asEligibility)
      ),

    createEligibility: Effect.fnUntraced(function*(principal: Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, Eligibility.permissions.create, atGroup(group), grants)
      const fields = yield* Validation.decodeRequest(Eligibility.CreateEligibility)(input)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(group), "group", group)
          const identity = yield* orNotFound(identities.get(fields.identityUid), "identity", fields.identityUid)
          const organization = Uid.ancestors(group)[0] ?? group
          if (!Uid.isAncestorOrSelf(organization, identity.uid)) {
            return yield* Errors.InvalidArgument.field("identityUid", "must be an identity of the group's organization")
          }
          yield* grantable(roles, grants, fields.roleUid, group)
          const approver = fields.approverRoleUid
          if (approver !== null) {
            const roleGroup = Uid.parentOrNull(approver)
            if (!canReadRole(grants, approver)) {
              return yield* new Errors.PermissionDenied({ capability: Role.permissions.list, resource: approver })
            }
            const known = roleGroup === null
              ? Role.builtIns.some((r) => r.uid === approver)
              : Uid.isAncestorOrSelf(roleGroup, group) && Option.isSome(yield* roles.get(approver))
            if (!known) return yield* orNotFound(Effect.succeedNone, "role", approver)
          }
          const now = yield* DateTime.now
          const record: Eligibility.Record = {
            uid: Uid.makeChild(group),
            parent: group,
            identityUid: fields.identityUid,
            roleUid: fields.roleUid,
            maxDurationSeconds: fields.maxDuration,
            approverRoleUid: approver,
            grantedBy: grantor(principal),
            createTime: now,
            updateTime: now
          }
          yield* eligibilities.insert(record).pipe(
            conflict("eligibility", "the identity is already eligible for that role there")
          )
          return asEligibility(record)
        })
      )
    }, operation("Elevations.createEligibility")),

    deleteEligibility: (principal: Principal, uid: string) =>
      operation("Elevations.deleteEligibility")(
        Resources.remove(ops, eligibilityKind, principal, uid, {
          idempotent: true,
          before: (eligibility) =>
            Effect.gen(function*() {
              const now = yield* DateTime.now
              const open = yield* elevations.find({
                conditions: [
                  { _tag: "Equals", column: "eligibilityUid", value: eligibility.uid },
                  { _tag: "In", column: "state", values: ["PENDING", "ACTIVE"] }
                ],
                order: [{ column: "uid", direction: "asc" }]
              })
              const granted = open.flatMap((e) => e.bindingUid === null ? [] : [e.bindingUid])
              if (granted.length > 0) yield* bindings.unbindElevated(granted)
              for (const elevation of open) {
                yield* rewrite({ ...elevation, state: "REVOKED", updateTime: now })
              }
            })
        })
      ),

    list: (principal: Principal, options: ElevationListOptions = {}) =>
      operation("Elevations.list")(
        options.approver !== undefined ? approvable(principal, options.approver) : Lists.list(
          ops,
          elevationSpec,
          principal,
          options,
          options.state === undefined
            ? { conditions: [], digest: null }
            : { conditions: [{ _tag: "Equals", column: "state", value: options.state }], digest: [options.state] }
        )
      ),

    get: (principal: Principal, uid: string) =>
      operation("Elevations.get")(
        Effect.flatMap(readable(principal, uid), (e) =>
          Effect.map(DateTime.now, (now) => asElevation(now.epochMillis)(e)))
      ),

    elevate: Effect.fnUntraced(function*(principal: Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      const fields = yield* Validation.decodeRequest(Elevation.CreateElevation)(input)
      // Only an identity's own eligibilities: another's is not found, whoever may list it.
      const [eligibility] = principal._tag !== "Identity" ? [] : yield* eligibilities.find({
        conditions: [
          { _tag: "Equals", column: "parent", value: group },
          { _tag: "Equals", column: "identityUid", value: principal.uid },
          { _tag: "Equals", column: "roleUid", value: fields.roleUid }
        ],
        order: [{ column: "uid", direction: "asc" }]
      })
      if (eligibility === undefined) {
        return yield* orNotFound(Effect.succeedNone, "eligibility for that role in", group)
      }
      // A narrowed token asks only for what its narrowing reaches: the role's every capability, at a group in scope.
      if (principal._tag === "Identity" && principal.narrowed !== undefined) {
        const role = Role.builtIns.find((r) => r.uid === eligibility.roleUid) ??
          Option.getOrUndefined(yield* roles.get(eligibility.roleUid))
        if (role === undefined || !actsAsItselfAt(principal, principal.uid, group, role.capabilities)) {
          return yield* new Errors.PermissionDenied({
            capability: Eligibility.permissions.create,
            resource: group,
            reason: "TOKEN_NARROWED"
          })
        }
      }
      if (fields.duration > eligibility.maxDurationSeconds) {
        return yield* Errors.InvalidArgument.field("duration", `must be at most ${eligibility.maxDurationSeconds}s`)
      }
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          const now = yield* DateTime.now
          const asked: Elevation.Record = {
            uid: Uid.makeChild(eligibility.parent),
            parent: eligibility.parent,
            eligibilityUid: eligibility.uid,
            identityUid: eligibility.identityUid,
            roleUid: eligibility.roleUid,
            reason: fields.reason,
            durationSeconds: fields.duration,
            state: "PENDING",
            approverUid: null,
            bindingUid: null,
            expireTime: null,
            createTime: now,
            updateTime: now
          }
          yield* standingEligibility(asked)
          yield* elevations.insert(asked).pipe(conflict("elevation", "it was asked for already"))
          const made = eligibility.approverRoleUid === null ? yield* grant(asked, null, now) : asked
          return asElevation(now.epochMillis)(made)
        })
      )
    }, operation("Elevations.elevate")),

    approve: (principal: Principal, uid: string) =>
      operation("Elevations.approve")(Effect.gen(function*() {
        const { elevation, now } = yield* pending(principal, uid)
        return yield* commit(
          ops,
          principal,
          Effect.map(
            grant(elevation, principal._tag === "Identity" ? principal.uid : null, now),
            asElevation(now.epochMillis)
          )
        )
      })),

    deny: (principal: Principal, uid: string) =>
      operation("Elevations.deny")(Effect.gen(function*() {
        const { elevation, now } = yield* pending(principal, uid)
        const denied: Elevation.Record = {
          ...elevation,
          state: "DENIED",
          approverUid: principal._tag === "Identity" ? principal.uid : null,
          updateTime: now
        }
        return yield* commit(ops, principal, Effect.as(rewrite(denied), asElevation(now.epochMillis)(denied)))
      }))
  }
  return service
})

/**
 * Just-in-time elevation (DECISIONS §21): who is eligible for which role where, and the elevations they ask for,
 * approve or deny; a granted elevation is an expiring binding made through the same no-escalation rules.
 */
export interface ElevationsService {
  /**
   * Eligibilities the caller may list (`role_bindings.list` at their group or above), of one identity when asked;
   * the caller's own, asked by its uid, whatever it may list (the first 200, oldest first).
   */
  readonly listEligibilities: (
    principal: Principal,
    options?: EligibilityListOptions
  ) => Effect.Effect<Lists.Page<Eligibility.Eligibility>, Errors.ListFailure>
  readonly getEligibility: (
    principal: Principal,
    uid: string
  ) => Effect.Effect<Eligibility.Eligibility, Errors.ReadFailure>
  /**
   * Makes identity `identityUid` eligible for a role at group `groupUid`: what binding the role there needs
   * (`role_bindings.create`, the role one the caller may read, every one of its capabilities held there), and an
   * approver role the caller may read, defined at or above the group. It rests on the caller's authority.
   */
  readonly createEligibility: (
    principal: Principal,
    groupUid: string,
    input: unknown
  ) => Effect.Effect<Eligibility.Eligibility, Errors.WriteFailure>
  /**
   * Deletes an eligibility (`role_bindings.delete` at its group), and with it its elevations: pending ones and
   * granted ones end at once (their bindings deleted, each a change-log entry), as revoked.
   */
  readonly deleteEligibility: (principal: Principal, uid: string) => Effect.Effect<void, Errors.WriteFailure>
  /**
   * Elevations the caller may list (`role_bindings.list` at their group or above), of one state when asked; with
   * `approver` (its own uid), the pending ones it may approve.
   */
  readonly list: (
    principal: Principal,
    options?: ElevationListOptions
  ) => Effect.Effect<Lists.Page<Elevation.Elevation>, Errors.ListFailure>
  /** One elevation: its own identity's, or with `role_bindings.list` at its group. */
  readonly get: (principal: Principal, uid: string) => Effect.Effect<Elevation.Elevation, Errors.ReadFailure>
  /**
   * The caller asks to hold a role it is eligible for at group `groupUid` for `duration` (at most the eligibility's
   * longest) and a reason: granted at once when it needs no approval, else pending until approved or denied.
   */
  readonly elevate: (
    principal: Principal,
    groupUid: string,
    input: unknown
  ) => Effect.Effect<Elevation.Elevation, Errors.WriteFailure>
  /** Approves a pending elevation: another identity than the one who asked, holding the approver role there. */
  readonly approve: (principal: Principal, uid: string) => Effect.Effect<Elevation.Elevation, Errors.WriteFailure>
  /** Denies a pending elevation, as an approver may. */
  readonly deny: (principal: Principal, uid: string) => Effect.Effect<Elevation.Elevation, Errors.WriteFailure>
}

/** Just-in-time elevation: eligibilities and the elevations they allow. */
export class Elevations extends Effect.Service<Elevations>()("@arbor/core/Elevations", { effect: make }) {}
