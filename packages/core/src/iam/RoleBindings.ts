/**
 * The RoleBindings service: list, get, create, update and delete role bindings, returned hydrated with their
 * identity, group and role.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import { commit, conflict, operations, orNotFound } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import type { Condition } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as ScimUser from "../provisioning/ScimUser.js"
import type { Grants } from "./Authorization.js"
import { atGroup } from "./Authorization.js"
import * as BindingCondition from "./Condition.js"
import * as Group from "./Group.js"
import * as Identity from "./Identity.js"
import * as BindingEnds from "./internal/bindingEnds.js"
import * as Embedding from "./internal/embedding.js"
import { grantable } from "./internal/roles.js"
import { actsAsItself, type Principal } from "./Principal.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"

/** The filters of a list of role bindings, beside the common list parameters. */
export interface RoleBindingListOptions extends Lists.ListOptions {
  /** Only the bindings of this identity. */
  readonly identity?: string | undefined
  /** Only the bindings made in this group (not those of the groups below it: `uidp.descendants_of` gives those). */
  readonly group?: string | undefined
  /** Only the bindings of this role. */
  readonly role?: string | undefined
}

/**
 * The filters as store conditions, with the violations found reading them. An identity asking for its own bindings
 * (`identity` its uid) with its own token (not a narrowed one) sees every one, wherever it may list bindings or not:
 * the places it holds a role.
 */
export const filters = (options: RoleBindingListOptions, principal?: Principal): Lists.Filters => {
  const conditions: Array<Condition> = []
  const violations: Array<Errors.FieldViolation> = []
  for (const [field, column] of [["identity", "identityUid"], ["group", "parent"], ["role", "roleUid"]] as const) {
    const value = options[field]
    if (value === undefined) continue
    if (!Uid.isUid(value)) {
      violations.push(new Errors.FieldViolation({ field, description: `'${value}' is not a valid uid` }))
    }
    conditions.push({ _tag: "Equals", column, value })
  }
  return {
    conditions,
    violations,
    digest: [options.identity, options.group, options.role],
    own: principal !== undefined && options.identity !== undefined && actsAsItself(principal, options.identity)
  }
}

/** A binding to make: its group, identity and role. */
interface Wanted {
  readonly group: Uid.Uid
  readonly identityUid: Uid.Uid
  readonly roleUid: Uid.Uid
  /** Its window; none: always. */
  readonly startTime?: DateTime.Utc | null | undefined
  readonly expireTime?: DateTime.Utc | null | undefined
  /** Where it grants; none: everywhere in its group. */
  readonly condition?: BindingCondition.Condition | null | undefined
}

/** Where the checks of a binding's references read its group, identity and role. */
interface References {
  readonly groups: Pick<Repository.Repository<Group.Group>, "get">
  readonly identities: Pick<Repository.Repository<Identity.Identity>, "get">
  readonly roles: Pick<Repository.Repository<Role.Role>, "get">
}

/**
 * Refuses a change to a binding that an elevation made (DECISIONS §21): it changes only through its elevation, which
 * ends it at its time or with its eligibility; an update or a delete (REST, gRPC, `:apply`) would make it outlast
 * the elevation or end what the elevation says is granted.
 */
const madeByElevation = (binding: RoleBinding.Record) =>
  binding.elevationUid === null ? Effect.void : Effect.fail(
    new Errors.FailedPrecondition({
      summary: `role binding ${binding.uid} was made by elevation ${binding.elevationUid}: it changes only through ` +
        "the elevation (it ends at the elevation's expireTime, or when its eligibility is deleted)",
      violations: [
        new Errors.PreconditionViolation({
          type: "ELEVATION_BINDING",
          subject: binding.uid,
          description: `made by elevation ${binding.elevationUid}; it changes only through the elevation`
        })
      ],
      reason: "ELEVATION_BINDING"
    })
  )

/** Builds the RoleBindings service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const roles = yield* Repository.make(Role.table, Role.Role)
  const scimUsers = yield* Repository.make(ScimUser.table, ScimUser.Record)
  const authorization = ops.authorization
  // The ends of expiring bindings, logged once each: woken here whenever a binding with an expiry is written.
  const wake = yield* Queue.sliding<void>(1)
  yield* Effect.forkScoped(BindingEnds.sweeper(ops, bindings, wake))
  const expiring = (records: ReadonlyArray<{ readonly expireTime: DateTime.Utc | null }>) =>
    records.some((r) => r.expireTime !== null) ? Queue.offer(wake, undefined) : Effect.void

  /** Embeds each binding's identity, group and role as far as the caller may read them. */
  const embedding = yield* Embedding.make
  const hydrate = embedding.bindings
  const hydrateOne = (record: RoleBinding.Record, grants: Grants) =>
    Effect.map(hydrate([record], grants), (bs) => bs[0]!)

  const spec: Lists.ListSpec<RoleBinding.RoleBinding, RoleBinding.Record> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: bindings,
    capability: RoleBinding.permissions.list,
    visibleAt: "parent",
    load: hydrate
  }

  /**
   * The group of the identity provider whose SCIM client provisioned person `identityUid`, when it is `group` or
   * above it: a person is bound only there, by those who may list that group's identities (docs/api.md §13).
   */
  const provisionedFor = (identityUid: Uid.Uid, group: Uid.Uid) =>
    Effect.map(
      scimUsers.find({
        conditions: [
          { _tag: "Equals", column: "identityUid", value: identityUid },
          { _tag: "Equals", column: "deleted", value: false }
        ],
        order: [{ column: "uid", direction: "asc" }]
      }),
      (users) =>
        users.map((user) => Uid.parentOrNull(Uid.parentOrNull(user.uid) ?? user.uid))
          .find((providerGroup) => providerGroup !== null && Uid.isAncestorOrSelf(providerGroup, group)) ?? null
    )

  /**
   * Checks what a binding at `group` may reference: the group exists, the caller may see the identity (a person's,
   * at the group of the provider that provisioned them, else at `group`), a workload's exists, the caller may see
   * the role, it is built in or defined at `group` or above, and the caller holds every capability of the role.
   * A person is referenced by the uid `LookupIdentity` gives, whether or not they have signed in yet (the binding
   * holds from their first sign-in) and alike either way, so that a binding tells nobody whether they have.
   */
  const checkReferences = (
    grants: Grants,
    group: Uid.Uid,
    identityUid: Uid.Uid,
    roleUid: Uid.Uid,
    read: References = { groups, identities, roles }
  ) =>
    Effect.gen(function*() {
      const groupValue = yield* orNotFound(read.groups.get(group), "group", group)
      const person = Uid.parentOrNull(identityUid) === null
      const identityGroup = person
        ? (yield* provisionedFor(identityUid, group)) ?? group
        : Uid.parentOrNull(identityUid)!
      if (!grants.holds(Identity.permissions.list, identityGroup)) {
        return yield* new Errors.PermissionDenied({ capability: Identity.permissions.list, resource: identityUid })
      }
      const found = yield* read.identities.get(identityUid)
      if (!person && Option.isNone(found)) return yield* orNotFound(Effect.succeedNone, "identity", identityUid)
      const role = yield* grantable(read.roles, grants, roleUid, group)
      return { group: groupValue, identity: Option.getOrUndefined(found), role }
    })

  /** Refuses an expiry that is not after `now`: a binding is written to grant, not already ended. */
  const ending = (expireTime: DateTime.Utc | null, now: DateTime.Utc) =>
    expireTime === null || expireTime.epochMillis > now.epochMillis
      ? Effect.void
      : Effect.fail(Errors.InvalidArgument.field("expireTime", "must be in the future"))

  const duplicate = (group: string) => `the identity already holds that role in ${group}`
  const kind: Resources.Kind<RoleBinding.Record> = {
    resourceType: "role binding",
    repository: bindings,
    permissions: RoleBinding.permissions,
    groupOf: Resources.parentGroup
  }

  /**
   * What the references of `wanted` bindings read, each kind in one read: the groups, identities and roles they
   * name, for `checkReferences` to look up.
   */
  const referencesOf = (wanted: ReadonlyArray<Wanted>) =>
    Effect.gen(function*() {
      const lookup = <A extends { readonly uid: Uid.Uid }>(values: ReadonlyArray<A>) => {
        const byUid = new Map(values.map((value) => [value.uid as string, value]))
        return { get: (uid: string) => Effect.succeed(Option.fromNullable(byUid.get(uid))) }
      }
      const distinct = (uids: ReadonlyArray<Uid.Uid>) => [...new Set(uids)]
      return {
        groups: lookup(yield* groups.getMany(distinct(wanted.map((w) => w.group)))),
        identities: lookup(yield* identities.getMany(distinct(wanted.map((w) => w.identityUid)))),
        roles: lookup(yield* roles.getMany(distinct(wanted.map((w) => w.roleUid))))
      } satisfies References
    })

  /**
   * Binds each identity to its role in its group, once every binding's references are checked (in the caller's
   * transaction, in order: the first refused refuses them all); in one write for many (an `:apply`).
   */
  const bind = (grants: Grants, wanted: ReadonlyArray<Wanted>) =>
    Effect.gen(function*() {
      const read = wanted.length === 1 ? undefined : yield* referencesOf(wanted)
      const refs = yield* Effect.forEach(
        wanted,
        ({ group, identityUid, roleUid }) => checkReferences(grants, group, identityUid, roleUid, read)
      )
      const now = yield* DateTime.now
      yield* Effect.forEach(wanted, (w) => ending(w.expireTime ?? null, now))
      const records = wanted.map((
        { condition, expireTime, group, identityUid, roleUid, startTime }
      ): RoleBinding.Record => ({
        uid: Uid.makeChild(group),
        parent: group,
        identityUid,
        roleUid,
        startTime: startTime ?? null,
        expireTime: expireTime ?? null,
        condition: condition ?? null,
        elevationUid: null,
        endedTime: null,
        createTime: now,
        updateTime: now
      }))
      // Several at once: one already bound found first, to be named (the insert's own refusal, which would end the
      // transaction on PostgreSQL, does not say which).
      if (records.length > 1) {
        const held = yield* bindings.findRows({
          conditions: [
            { _tag: "In", column: "parent", values: [...new Set(records.map((r) => r.parent))] },
            { _tag: "In", column: "identityUid", values: [...new Set(records.map((r) => r.identityUid))] }
          ],
          order: [{ column: "uid", direction: "asc" }]
        })
        const keys = new Set(held.map((row) => `${row.parent}\n${row.identityUid}\n${row.roleUid}`))
        const bound = records.find((r) => keys.has(`${r.parent}\n${r.identityUid}\n${r.roleUid}`))
        if (bound !== undefined) {
          return yield* new Errors.AlreadyExists({ resourceType: "role binding", description: duplicate(bound.parent) })
        }
      }
      yield* bindings.insertMany(records).pipe(conflict("role binding", duplicate(records[0]?.parent ?? "")))
      yield* expiring(records)
      return records.map((record, i) => embedding.embed(grants, record, refs[i]!))
    })

  const service: RoleBindingsService = {
    list: (principal: Principal, options: RoleBindingListOptions = {}) => {
      const filtered = filters(options, principal)
      // One's own bindings embed in full where one holds a role, and which.
      const listed = filtered.own === true && principal._tag === "Identity"
        ? {
          ...spec,
          load: (records: ReadonlyArray<RoleBinding.Record>, grants: Grants) =>
            hydrate(records, grants, [], principal.uid)
        }
        : spec
      return operation("RoleBindings.list")(Lists.list(ops, listed, principal, options, filtered))
    },

    get: (principal: Principal, uid: string) =>
      operation("RoleBindings.get")(Resources.getPresented(ops, kind, principal, uid, hydrateOne)),

    create: Effect.fnUntraced(function*(principal: Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, RoleBinding.permissions.create, atGroup(group), grants)
      const fields = yield* Validation.decodeRequest(RoleBinding.CreateRoleBinding, RoleBinding.fields)(input)
      const [bound] = yield* commit(ops, principal, bind(grants, [{ group, ...fields }]))
      return bound!
    }, operation("RoleBindings.create")),

    createMany: Effect.fnUntraced(function*(
      principal: Principal,
      creations: ReadonlyArray<{ readonly groupUid: string; readonly input: unknown }>
    ) {
      const grants = yield* authorization.grants(principal)
      // Each a step of its own (`Effect.forEach`): a large batch lets other requests in between (`Fairness`).
      const wanted = yield* Effect.forEach(creations, ({ groupUid, input }) =>
        Effect.gen(function*() {
          const group = yield* Uid.parse(groupUid, "parent")
          yield* authorization.check(principal, RoleBinding.permissions.create, atGroup(group), grants)
          const fields = yield* Validation.decodeRequest(RoleBinding.CreateRoleBinding, RoleBinding.fields)(input)
          return { group, ...fields } satisfies Wanted
        }))
      return yield* commit(ops, principal, bind(grants, wanted))
    }, operation("RoleBindings.createMany")),

    batchCreate: Effect.fnUntraced(function*(principal: Principal, input: unknown) {
      const batch = yield* Validation.decodeRequest(RoleBinding.BatchCreateRoleBindings)(input)
      const group = yield* Uid.parse(batch.parent ?? "", "parent")
      const violations: Array<Errors.FieldViolation> = []
      const wanted: Array<
        Omit<Wanted, "group"> & { readonly at: number }
      > = []
      batch.requests.forEach((request, i) => {
        const field = (name: string) => `requests[${i}].${name}`
        if (request.parent !== undefined && request.parent !== "" && request.parent !== group) {
          violations.push(
            new Errors.FieldViolation({ field: field("parent"), description: "must be the batch's parent" })
          )
        }
        const own = request.roleBinding.roleUid
        const roleUid = own ?? batch.roleUid
        if (own !== undefined && batch.roleUid !== undefined && own !== batch.roleUid) {
          violations.push(
            new Errors.FieldViolation({
              field: field("roleBinding.roleUid"),
              description: "differs from the batch's roleUid"
            })
          )
        } else if (roleUid === undefined) {
          violations.push(
            new Errors.FieldViolation({
              field: field("roleBinding.roleUid"),
              description: "is required, here or as the batch's roleUid"
            })
          )
        } else {
          const first = wanted.find((w) => w.identityUid === request.roleBinding.identityUid && w.roleUid === roleUid)
          if (first !== undefined) {
            violations.push(
              new Errors.FieldViolation({
                field: `requests[${i}]`,
                description: `binds what requests[${first.at}] binds`
              })
            )
          }
          const { condition, expireTime, identityUid, startTime } = request.roleBinding
          if (startTime !== null && expireTime !== null && startTime.epochMillis >= expireTime.epochMillis) {
            violations.push(
              new Errors.FieldViolation({
                field: field("roleBinding.expireTime"),
                description: "must be after startTime"
              })
            )
          }
          wanted.push({ identityUid, roleUid, startTime, expireTime, condition, at: i })
        }
      })
      const [violation, ...more] = violations
      if (violation !== undefined) return yield* new Errors.InvalidArgument({ violations: [violation, ...more] })
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, RoleBinding.permissions.create, atGroup(group), grants)
      return yield* commit(
        ops,
        principal,
        bind(grants, wanted.map(({ at: _, ...binding }) => ({ group, ...binding }))).pipe(
          ChangeLog.typedAs("role_binding", "created", RoleBinding.batchCreatedType)
        )
      )
    }, operation("RoleBindings.batchCreate")),

    update: (
      principal: Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("RoleBindings.update")(Resources.updatePresented(ops, kind, principal, uid, {
        patch,
        updateMask,
        fields: RoleBinding.fields,
        apply: (current, { body, grants, mask, updateTime }) =>
          Effect.gen(function*() {
            yield* madeByElevation(current)
            const iso = (time: DateTime.Utc | null) => time === null ? null : DateTime.formatIso(time)
            const merged = FieldMask.apply(
              {
                identityUid: current.identityUid,
                roleUid: current.roleUid,
                startTime: iso(current.startTime),
                expireTime: iso(current.expireTime),
                condition: current.condition === null
                  ? null
                  : Schema.encodeSync(BindingCondition.Condition)(current.condition)
              },
              body,
              mask,
              RoleBinding.fields
            )
            const fields = yield* Validation.decodeRequest(RoleBinding.CreateRoleBinding, RoleBinding.fields)(merged)
            // A new expiry must be ahead (and its end is logged anew); one left as it was may have passed.
            const extended = fields.expireTime?.epochMillis !== current.expireTime?.epochMillis
            if (extended) yield* ending(fields.expireTime, updateTime)
            yield* checkReferences(grants, current.parent, fields.identityUid, fields.roleUid)
            if (extended) yield* expiring([fields])
            return { ...current, ...fields, endedTime: extended ? null : current.endedTime, updateTime }
          }),
        duplicate: (next) => duplicate(next.parent),
        present: hydrateOne
      })),

    bindElevated: (wanted: {
      readonly group: Uid.Uid
      readonly identityUid: Uid.Uid
      readonly roleUid: Uid.Uid
      readonly expireTime: DateTime.Utc
      readonly elevationUid: Uid.Uid
    }) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const record: RoleBinding.Record = {
          uid: Uid.makeChild(wanted.group),
          parent: wanted.group,
          identityUid: wanted.identityUid,
          roleUid: wanted.roleUid,
          startTime: null,
          expireTime: wanted.expireTime,
          condition: null,
          elevationUid: wanted.elevationUid,
          endedTime: null,
          createTime: now,
          updateTime: now
        }
        // One an earlier elevation made there is replaced; one bound for good stays (and refuses this one).
        const earlier = yield* bindings.findRows({
          conditions: [
            { _tag: "Equals", column: "parent", value: wanted.group },
            { _tag: "Equals", column: "identityUid", value: wanted.identityUid },
            { _tag: "Equals", column: "roleUid", value: wanted.roleUid }
          ],
          order: [{ column: "uid", direction: "asc" }]
        })
        const replaced = earlier.filter((row) => row.elevationUid !== null && row.elevationUid !== undefined)
        if (replaced.length > 0) {
          yield* bindings.delete({ conditions: [{ _tag: "In", column: "uid", values: replaced.map((r) => r.uid) }] })
        }
        yield* bindings.insert(record).pipe(
          conflict("role binding", "the identity already holds that role there, for good: it needs no elevation")
        )
        yield* expiring([record])
        return record.uid
      }),

    unbindElevated: (uids: ReadonlyArray<Uid.Uid>) =>
      Effect.gen(function*() {
        const made = (yield* bindings.getMany(uids)).filter((b) => b.elevationUid !== null)
        if (made.length > 0) {
          yield* bindings.delete({ conditions: [{ _tag: "In", column: "uid", values: made.map((b) => b.uid) }] })
        }
      }),

    delete: (principal: Principal, uid: string) =>
      operation("RoleBindings.delete")(
        Resources.remove(ops, kind, principal, uid, { idempotent: true, before: madeByElevation })
      )
  }
  return service
})

/**
 * The RoleBindings service. Bindings are hydrated (identity, group, role); a list shows those the caller may list
 * and, asked with its own uid as `identity`, its own; creating or changing one needs every capability of its role
 * (no escalation); deleting one that is gone succeeds.
 */
export interface RoleBindingsService extends ResourceService.Writable<RoleBinding.RoleBinding, RoleBindingListOptions> {
  /**
   * Binds identities to roles in their groups as `create` does each, in one write: all or none. For many at once
   * (an `:apply`), in a few statements rather than several each.
   */
  readonly createMany: (
    principal: Principal,
    creations: ReadonlyArray<{ readonly groupUid: string; readonly input: unknown }>
  ) => Effect.Effect<Array<RoleBinding.RoleBinding>, Errors.WriteFailure>
  /**
   * Binds up to 25 identities to roles in one group, all or none (`BatchCreateRoleBindings`), in the order asked:
   * each as `create` would, the caller holding every capability of each role. A request names its role or takes
   * the batch's `roleUid`; its `parent`, when set, is the batch's.
   */
  readonly batchCreate: (
    principal: Principal,
    input: unknown
  ) => Effect.Effect<Array<RoleBinding.RoleBinding>, Errors.WriteFailure>
  /**
   * The binding a granted elevation makes (`Elevations`, in its transaction; not for other callers): its role at
   * its group until `expireTime`, made by the elevation, whose standing it then rests on. Answers its uid.
   */
  readonly bindElevated: (wanted: {
    readonly group: Uid.Uid
    readonly identityUid: Uid.Uid
    readonly roleUid: Uid.Uid
    readonly expireTime: DateTime.Utc
    readonly elevationUid: Uid.Uid
  }) => Effect.Effect<Uid.Uid, Errors.StoreFailure | Errors.FailedPrecondition | Errors.AlreadyExists | Errors.Aborted>
  /** Deletes the bindings elevations made (`Elevations`, when their eligibility goes; in its transaction). */
  readonly unbindElevated: (
    uids: ReadonlyArray<Uid.Uid>
  ) => Effect.Effect<void, Errors.StoreFailure | Errors.FailedPrecondition>
}

/** Role bindings: an identity holding a role in a group and everything below it. */
export class RoleBindings extends Effect.Service<RoleBindings>()("@arbor/core/RoleBindings", { scoped: make }) {}
