/**
 * The Groups service: list, get, create, update and delete groups.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import {
  commit,
  exists,
  insertNamed,
  operations,
  orNotFound,
  trusted,
  unexpectedConflict
} from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import type { Table } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as Subscription from "../events/Subscription.js"
import * as Advisory from "../registry/Advisory.js"
import * as Repo from "../registry/Repo.js"
import * as AccountAssociation from "./AccountAssociation.js"
import { atGroup, type Grants } from "./Authorization.js"
import * as Condition from "./Condition.js"
import * as Eligibility from "./Eligibility.js"
import * as Group from "./Group.js"
import * as GroupAccessRequest from "./GroupAccessRequest.js"
import * as GroupInvite from "./GroupInvite.js"
import * as Identity from "./Identity.js"
import * as IdentityProvider from "./IdentityProvider.js"
import { requireAll } from "./internal/roles.js"
import type { Principal } from "./Principal.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"
import * as TermsAcceptance from "./TermsAcceptance.js"

/** A kind of resource that can live below a group, and so keeps it from being deleted. */
export interface ChildKind {
  readonly table: Table
  /** The plural in the refusal: `cannot delete group with child <label>`. */
  readonly label: string
  /** True when the kind's uid equals its group's (account associations), so the group itself is checked too. */
  readonly includesSelf?: boolean
}

const ownerRole = Role.builtInByName("owner")!.uid

/**
 * What may live below a group, in the order a refused delete names them (docs/api.md §5); advisories and
 * subscriptions, which that order does not name, come last.
 */
export const childKinds: ReadonlyArray<ChildKind> = [
  { table: Repo.table, label: "repos" },
  { table: Group.table, label: "groups" },
  { table: Identity.table, label: "identities" },
  { table: Role.table, label: "roles" },
  { table: RoleBinding.table, label: "role bindings" },
  { table: IdentityProvider.table, label: "identity providers" },
  { table: GroupInvite.table, label: "invites" },
  { table: AccountAssociation.table, label: "account associations", includesSelf: true },
  { table: Eligibility.table, label: "eligibilities" },
  { table: Advisory.table, label: "advisories" },
  { table: Subscription.table, label: "subscriptions" }
]

/** A group to create: below `parent` (an organization when null), from the request body `input`. */
interface Creation {
  readonly parent: Uid.Uid | null
  readonly input: unknown
}

/** Builds the Groups service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const groups = yield* Repository.make(Group.table, Group.Group)
  const acceptances = yield* Repository.make(TermsAcceptance.table, TermsAcceptance.TermsAcceptance)
  const accessRequests = yield* Repository.make(GroupAccessRequest.table, GroupAccessRequest.GroupAccessRequest)
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)
  const roles = yield* Repository.make(Role.table, Role.Role)
  const authorization = ops.authorization
  const kind: Resources.Kind<Group.Group> = {
    resourceType: "group",
    repository: groups,
    permissions: Group.permissions,
    groupOf: (uid) => uid
  }
  const spec: Lists.ListSpec<Group.Group> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: groups,
    capability: Group.permissions.list,
    visibleAt: "self",
    load: Lists.asIs
  }

  /**
   * Creates groups, each below its parent (an organization when null), which exists already: in one write, all or
   * none. A root group gets an `owner` binding for `owner` in the same write.
   */
  const insert = (principal: Principal, creations: ReadonlyArray<Creation>, owner?: Uid.Uid) =>
    Effect.gen(function*() {
      // Each a step of its own (`Effect.forEach`, not a loop of `yield*`, which runs synchronous steps as one), so
      // that a large batch lets other requests in between (`Fairness`).
      const made = yield* Effect.forEach(creations, ({ input, parent }) =>
        parent !== null && Uid.depth(parent) >= Group.maxDepth
          ? Errors.InvalidArgument.field(
            "parent",
            `is ${Group.maxDepth} levels below its organization: folders nest at most ${Group.maxDepth} deep`
          )
          : Effect.map(Validation.decodeRequest(Group.CreateGroup, Group.fields)(input), (fields) => ({
            uid: parent === null ? Uid.makeRoot() : Uid.makeChild(parent),
            fields
          })))
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          const now = yield* DateTime.now
          // A new group is not verified: `verified` in a create body is output-only there and ignored (a client that
          // copies a fetched group sends it); only a platform admin's update sets it.
          const created = made.map(({ fields, uid }) =>
            new Group.Group({ uid, ...fields, verified: false, createTime: now, updateTime: now }, trusted)
          )
          yield* insertNamed(groups, groups, "group", created, (group) => {
            const parent = Uid.parentOrNull(group.uid)
            return `a group named '${group.name}' already exists ${parent === null ? "at the root" : `in ${parent}`}`
          })
          if (owner !== undefined) {
            const uid = created[0]!.uid
            yield* orNotFound(identities.get(owner), "identity", owner)
            yield* bindings.insert({
              uid: Uid.makeChild(uid),
              parent: uid,
              identityUid: owner,
              roleUid: ownerRole,
              startTime: null,
              expireTime: null,
              condition: null,
              elevationUid: null,
              endedTime: null,
              createTime: now,
              updateTime: now
            }).pipe(unexpectedConflict)
          }
          return created
        })
      )
    })

  /**
   * Refuses to delete a group while anything lives below it, naming the first kind found; else removes the terms
   * it accepted and the requests for access to it, which are records of the group rather than resources in it.
   */
  const refuseIfNotEmpty = (group: Group.Group) =>
    Effect.gen(function*() {
      for (const child of childKinds) {
        const range = child.includesSelf === true ? Uid.subtree(group.uid) : Uid.descendants(group.uid)
        if (yield* exists(ops, child.table, { ranges: [range] })) {
          return yield* new Errors.FailedPrecondition({
            summary: `cannot delete group with child ${child.label}`,
            violations: [
              new Errors.PreconditionViolation({
                type: "RESOURCE_NOT_EMPTY",
                subject: group.uid,
                description: `the group still has ${child.label}`
              })
            ]
          })
        }
      }
      // What the group accepted, and the requests for access to it, go with it.
      yield* acceptances.delete({ conditions: [{ _tag: "Equals", column: "parent", value: group.uid }] })
      yield* accessRequests.delete({ conditions: [{ _tag: "Equals", column: "parent", value: group.uid }] })
      return []
    })

  /** The domain of the caller's verified email, when it may look for its organization. */
  const eligibleDomain = (principal: Principal) =>
    principal._tag === "Identity" && principal.narrowed === undefined
      ? GroupAccessRequest.eligibleDomain(principal.email)
      : undefined

  /** The verified organization named by the caller's email domain, if they are eligible and there is one. */
  const verifiedFor = (principal: Principal) =>
    Effect.gen(function*() {
      const domain = eligibleDomain(principal)
      if (domain === undefined) return undefined
      const [found] = yield* groups.find({
        order: [{ column: "uid", direction: "asc" }],
        conditions: [
          { _tag: "Equals", column: "parent", value: null },
          { _tag: "Equals", column: "name", value: domain },
          { _tag: "Equals", column: "verified", value: true }
        ],
        limit: 1
      })
      return found
    })

  const notFoundForDomain = () =>
    new Errors.NotFound({ resourceType: "verified organization", uid: "for your email's domain" })

  /** The system, or a platform admin's own token (not a narrowed one). */
  const isPlatformAdmin = (principal: Principal) =>
    principal._tag === "System" ||
    (principal.narrowed === undefined && ops.settings.platformAdmins.includes(principal.uid))

  /**
   * Whether a group is verified after an update (docs/api.md §13): only a platform admin changes it, and only an
   * organization named by a domain is verified. A verified organization renamed by anyone else, or to a name that
   * is not a domain, is verified no more: its name is what people at that domain find it by.
   */
  /**
   * Renaming `group` changes what conditions on names decide at it and below (DECISIONS §21): it needs, for every
   * binding with such a condition at the group, above it or below it, every capability of its role at the group
   * (unconditionally), as binding that role there would; else whoever may rename could hand out what those bindings
   * give, by making their conditions hold.
   */
  const mayRename = (grants: Grants, group: Uid.Uid) =>
    Effect.gen(function*() {
      if (grants.unrestricted) return
      const [above, below] = yield* Effect.all([
        bindings.find({
          conditions: [{ _tag: "In", column: "parent", values: [...Uid.ancestors(group), group] }],
          order: [{ column: "uid", direction: "asc" }]
        }),
        bindings.find({ ranges: [Uid.descendants(group)], order: [{ column: "uid", direction: "asc" }] })
      ])
      const naming = [...above, ...below].filter((b) =>
        b.condition !== null && Condition.compiled(b.condition.expression).readsNames
      )
      if (naming.length === 0) return
      const custom = new Map(
        (yield* roles.getMany([...new Set(naming.map((b) => b.roleUid))].filter((uid) => !Role.isBuiltIn(uid))))
          .map((r) => [r.uid as string, r.capabilities] as const)
      )
      for (const binding of naming) {
        const capabilities = Role.builtInOf(binding.roleUid)?.capabilities ?? custom.get(binding.roleUid) ?? []
        yield* requireAll(grants, capabilities, group)
      }
    })

  const verifiedAfter = (principal: Principal, current: Group.Group, wanted: boolean, name: string) =>
    Effect.gen(function*() {
      if (wanted !== current.verified) {
        if (wanted) yield* mayVerify(principal, current.uid, name)
        else if (!isPlatformAdmin(principal)) yield* adminOnly(current.uid)
        return wanted
      }
      const renamed = name !== current.name
      return current.verified && !(renamed && (!isPlatformAdmin(principal) || !GroupAccessRequest.isDomain(name)))
    })

  const adminOnly = (uid: string) =>
    new Errors.PermissionDenied({
      capability: "groups.update",
      resource: uid,
      reason: "PLATFORM_ADMIN_REQUIRED",
      logDetail: "only platform admins verify organizations"
    })

  /** Fails unless the caller may mark group `uid`, named `name`, verified. */
  const mayVerify = (principal: Principal, uid: Uid.Uid, name: string) =>
    !isPlatformAdmin(principal)
      ? Effect.fail(adminOnly(uid))
      : Uid.parentOrNull(uid) !== null || !GroupAccessRequest.isDomain(name)
      ? Errors.InvalidArgument.field("verified", "only an organization named by a domain (acme.com) can be verified")
      : Effect.void

  const service: GroupsService = {
    list: (principal: Principal, options: Lists.ListOptions = {}) =>
      operation("Groups.list")(Lists.list(ops, spec, principal, options)),

    get: (principal: Principal, uid: string) => operation("Groups.get")(Resources.get(ops, kind, principal, uid)),

    create: Effect.fnUntraced(function*(principal: Principal, parentUid: string, input: unknown) {
      const parent = yield* Uid.parse(parentUid, "parent")
      yield* authorization.check(principal, Group.permissions.create, atGroup(parent))
      return (yield* insert(principal, [{ parent, input }]))[0]!
    }, operation("Groups.create")),

    createMany: Effect.fnUntraced(function*(
      principal: Principal,
      creations: ReadonlyArray<{ readonly parentUid: string; readonly input: unknown }>
    ) {
      const parsed = yield* Effect.forEach(
        creations,
        ({ input, parentUid }) => Effect.map(Uid.parse(parentUid, "parent"), (parent): Creation => ({ parent, input }))
      )
      for (const parent of new Set(parsed.map(({ parent }) => parent))) {
        yield* authorization.check(principal, Group.permissions.create, atGroup(parent!))
      }
      return yield* insert(principal, parsed)
    }, operation("Groups.createMany")),

    createRoot: Effect.fnUntraced(function*(principal: Principal, input: unknown, options: {
      /** The identity (a person's too) bound as its owner; by default the calling identity, if any. */
      readonly owner?: string | undefined
    } = {}) {
      const settings = ops.settings
      if (principal._tag !== "System" && !settings.platformAdmins.includes(principal.uid)) {
        return yield* new Errors.PermissionDenied({ capability: Group.permissions.create, resource: "root" })
      }
      const owner = options.owner === undefined
        ? (principal._tag === "Identity" ? principal.uid : undefined)
        : yield* Uid.parse(options.owner, "owner")
      return (yield* insert(principal, [{ parent: null, input }], owner))[0]!
    }, operation("Groups.createRoot")),

    update: (
      principal: Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("Groups.update")(Resources.update(ops, kind, principal, uid, {
        patch,
        updateMask,
        fields: Group.fields,
        apply: (current, { body, grants, mask, updateTime }) =>
          Effect.gen(function*() {
            const fields = yield* Validation.decodeRequest(Group.CreateGroup, Group.fields)(FieldMask.apply(
              { name: current.name, description: current.description, verified: current.verified },
              body,
              mask,
              Group.fields
            ))
            if (fields.name !== current.name) yield* mayRename(grants, current.uid)
            const verified = yield* verifiedAfter(principal, current, fields.verified, fields.name)
            return new Group.Group({ ...current, ...fields, verified, updateTime }, trusted)
          }),
        duplicate: (next) => `a group named '${next.name}' already exists beside ${next.uid}`
      })),

    checkEligibility: (principal: Principal) =>
      operation("Groups.checkEligibility")(Effect.succeed({ eligible: eligibleDomain(principal) !== undefined })),

    lookupVerified: (principal: Principal) =>
      operation("Groups.lookupVerified")(Effect.flatMap(verifiedFor(principal), (group) =>
        group === undefined
          ? Effect.fail(notFoundForDomain())
          : Effect.succeed(group))),

    requestAccess: Effect.fnUntraced(function*(principal: Principal, groupUid: string) {
      if (groupUid === "") return yield* Errors.InvalidArgument.field("group_uid", "is required")
      const group = yield* verifiedFor(principal)
      if (group === undefined || group.uid !== groupUid || principal._tag !== "Identity") {
        return yield* notFoundForDomain()
      }
      const requester = principal.uid
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          const now = yield* DateTime.now
          const recent = yield* accessRequests.count({
            ranges: [Uid.descendants(group.uid)],
            conditions: [
              { _tag: "Equals", column: "requester", value: requester },
              {
                _tag: "AtLeast",
                column: "createTime",
                value: DateTime.toEpochMillis(now) - GroupAccessRequest.repeatAfterMillis
              }
            ]
          })
          if (recent > 0) {
            return yield* new Errors.ResourceExhausted({
              description: "you asked this organization for access within the last day; its owners have been told",
              retryAfterSeconds: GroupAccessRequest.repeatAfterMillis / 1000,
              reason: "ACCESS_ALREADY_REQUESTED"
            })
          }
          yield* accessRequests.insert(
            new GroupAccessRequest.GroupAccessRequest({
              uid: Uid.makeChild(group.uid),
              requester,
              email: principal.email ?? "",
              createTime: now
            }, trusted)
          ).pipe(unexpectedConflict)
          return {}
        })
      )
    }, operation("Groups.requestAccess")),

    delete: (principal: Principal, uid: string) =>
      operation("Groups.delete")(Resources.remove(ops, kind, principal, uid, { before: refuseIfNotEmpty }))
  }
  return service
})

/** The Groups service: the organization hierarchy, each group's standard methods and the verified organizations'. */
export interface GroupsService extends ResourceService.Writable<Group.Group> {
  /**
   * Creates groups below existing ones, as `create` does each, in one write: all or none. For many at once (an
   * `:apply`), in a few statements rather than a few each.
   */
  readonly createMany: (
    principal: Principal,
    creations: ReadonlyArray<{ readonly parentUid: string; readonly input: unknown }>
  ) => Effect.Effect<Array<Group.Group>, Errors.WriteFailure>
  /**
   * Creates a root group (an organization): for the system principal and configured platform admins. `owner` is
   * the identity (a person's too) bound as its owner; by default the calling identity, if any.
   */
  readonly createRoot: (
    principal: Principal,
    input: unknown,
    options?: { readonly owner?: string | undefined }
  ) => Effect.Effect<Group.Group, Errors.WriteFailure>
  /**
   * Whether the caller may look for the verified organization of their email's domain (`CheckEligibility`): a
   * person whose email the server's own provider verified, at a domain that is not a free mail service.
   */
  readonly checkEligibility: (principal: Principal) => Effect.Effect<{ readonly eligible: boolean }>
  /**
   * The verified organization named by the caller's email domain (`LookupGroup`). Every reason there is none (no
   * such organization, not eligible) is the same NotFound, so that none can be told from another.
   */
  readonly lookupVerified: (principal: Principal) => Effect.Effect<Group.Group, Errors.StoreFailure | Errors.NotFound>
  /**
   * Asks the owners of the verified organization `groupUid` for access (`RequestGroupAccess`): it must be the
   * one the caller's email domain names (else NotFound, as for `lookupVerified`). The request is a change-log
   * entry of the organization; the same caller's next one within a day is ResourceExhausted.
   */
  readonly requestAccess: (
    principal: Principal,
    groupUid: string
  ) => Effect.Effect<{}, Errors.WriteFailure | Errors.ResourceExhausted>
}

/** Groups: the organization hierarchy. */
export class Groups extends Effect.Service<Groups>()("@arbor/core/Groups", { effect: make }) {}
