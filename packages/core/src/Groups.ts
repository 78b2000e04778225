/**
 * The Groups service: list, get, create, update and delete groups.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as AccountAssociation from "./AccountAssociation.js"
import * as Advisory from "./Advisory.js"
import * as Errors from "./Errors.js"
import * as Group from "./Group.js"
import * as GroupInvite from "./GroupInvite.js"
import * as Identity from "./Identity.js"
import * as IdentityProvider from "./IdentityProvider.js"
import * as FieldMask from "./internal/lists/fieldMask.js"
import { commit, conflict, exists, operations, orNotFound, trusted } from "./internal/operations.js"
import * as Resources from "./internal/resources.js"
import { operation } from "./internal/tracing.js"
import * as Lists from "./Lists.js"
import type { Principal } from "./Principal.js"
import * as Repo from "./Repo.js"
import * as Repository from "./Repository.js"
import type * as ResourceService from "./ResourceService.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"
import type { Table } from "./Store.js"
import * as Subscription from "./Subscription.js"
import * as TermsAcceptance from "./TermsAcceptance.js"
import * as Uid from "./Uid.js"
import * as Validation from "./Validation.js"

/** A kind of resource that can live below a group, and so keeps it from being deleted. */
export interface ChildKind {
  readonly table: Table
  /** The plural in the refusal: `cannot delete group with child <label>`. */
  readonly label: string
  /** True when the kind's uid equals its group's (account associations), so the group itself is checked too. */
  readonly includesSelf?: boolean
}

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
  { table: Advisory.table, label: "advisories" },
  { table: Subscription.table, label: "subscriptions" }
]

/** Groups: the organization hierarchy. */
export class Groups extends Effect.Service<Groups>()("@arbor/core/Groups", {
  effect: Effect.gen(function*() {
    const ops = yield* operations
    const groups = yield* Repository.make(Group.table, Group.Group)
    const acceptances = yield* Repository.make(TermsAcceptance.table, TermsAcceptance.TermsAcceptance)
    const authorization = ops.authorization
    const kind: Resources.Kind<Group.Group> = {
      resourceType: "group",
      repository: groups,
      permissions: Group.permissions,
      groupOf: (uid) => uid
    }
    const spec: Lists.ListSpec<Group.Group> = {
      repository: groups,
      capability: Group.permissions.list,
      visibleAt: "self",
      load: Lists.asIs
    }

    const insert = (principal: Principal, parent: Uid.Uid | null, input: unknown) =>
      Effect.gen(function*() {
        if (parent !== null && Uid.depth(parent) >= Group.maxDepth) {
          return yield* Errors.InvalidArgument.field(
            "parent",
            `is ${Group.maxDepth} levels below its organization: folders nest at most ${Group.maxDepth} deep`
          )
        }
        const fields = yield* Validation.decode(Group.CreateGroup)(input)
        return yield* commit(
          ops,
          principal,
          Effect.gen(function*() {
            if (parent !== null) yield* orNotFound(groups.get(parent), "group", parent)
            const now = yield* DateTime.now
            const group = new Group.Group({
              uid: parent === null ? Uid.makeRoot() : Uid.makeChild(parent),
              ...fields,
              verified: false,
              createTime: now,
              updateTime: now
            }, trusted)
            yield* groups.insert(group).pipe(
              conflict(
                "group",
                `a group named '${fields.name}' already exists ${parent === null ? "at the root" : `in ${parent}`}`
              )
            )
            return group
          })
        )
      })

    /**
     * Refuses to delete a group while anything lives below it, naming the first kind found; else removes the terms
     * it accepted, which are records of the group rather than resources in it.
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
        // What the group accepted goes with it.
        yield* acceptances.delete({ conditions: [{ _tag: "Equals", column: "parent", value: group.uid }] })
        return []
      })

    const service = {
      /** Groups the caller may list (`groups.list` at the group or above). */
      list: (principal: Principal, options: Lists.ListOptions = {}) =>
        operation("Groups.list")(Lists.list(ops, spec, principal, options)),

      get: (principal: Principal, uid: string) => operation("Groups.get")(Resources.get(ops, kind, principal, uid)),

      /** Creates a group below `parentUid`. */
      create: Effect.fnUntraced(function*(principal: Principal, parentUid: string, input: unknown) {
        const parent = yield* Uid.parse(parentUid, "parent")
        yield* authorization.check(principal, Group.permissions.create, parent)
        return yield* insert(principal, parent, input)
      }, operation("Groups.create")),

      /** Creates a root group (an organization): for the system principal and configured platform admins. */
      createRoot: Effect.fnUntraced(function*(principal: Principal, input: unknown) {
        const settings = ops.settings
        if (principal._tag !== "System" && !settings.platformAdmins.includes(principal.uid)) {
          return yield* new Errors.PermissionDenied({ capability: Group.permissions.create, resource: "root" })
        }
        return yield* insert(principal, null, input)
      }, operation("Groups.createRoot")),

      /** Updates a group: the fields present in `patch`, or those named by `updateMask`. */
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
          apply: (current, { body, mask, updateTime }) =>
            Validation.decode(Group.CreateGroup)(
              FieldMask.apply({ name: current.name, description: current.description }, body, mask, Group.fields)
            ).pipe(Effect.map((fields) => new Group.Group({ ...current, ...fields, updateTime }, trusted))),
          duplicate: (next) => `a group named '${next.name}' already exists beside ${next.uid}`
        })),

      /** Deletes a group that has nothing below it. */
      delete: (principal: Principal, uid: string) =>
        operation("Groups.delete")(Resources.remove(ops, kind, principal, uid, { before: refuseIfNotEmpty }))
    }
    return service satisfies ResourceService.Writable<Group.Group>
  })
}) {}
