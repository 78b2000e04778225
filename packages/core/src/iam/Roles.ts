/**
 * The Roles service: list, get, create, update and delete roles. Built-in roles are seeded when the service
 * starts and cannot be changed.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import { commit, conflict, exists, operations, orNotFound, trusted } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import { Store } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import { atGroup } from "./Authorization.js"
import * as Eligibility from "./Eligibility.js"
import * as ExternalGroupRoleMapping from "./ExternalGroupRoleMapping.js"
import * as Group from "./Group.js"
import * as GroupInvite from "./GroupInvite.js"
import * as IdentityProvider from "./IdentityProvider.js"
import { requireAll } from "./internal/roles.js"
import type { Principal } from "./Principal.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"

const builtInRefused = (uid: string, action: string) =>
  new Errors.FailedPrecondition({
    summary: `built-in roles cannot be ${action}`,
    violations: [
      new Errors.PreconditionViolation({ type: "BUILT_IN_ROLE", subject: uid, description: "the role is built in" })
    ]
  })

/** Builds the Roles service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const roles = yield* Repository.make(Role.table, Role.Role)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const authorization = ops.authorization
  const store = yield* Store
  const spec: Lists.ListSpec<Role.Role> = {
    target: (uid) => Resources.targetOf(kind, uid),
    load: Lists.asIs,
    repository: roles,
    capability: Role.permissions.list,
    visibleAt: "parent",
    public: Role.builtIns.map((r) => r.uid)
  }

  yield* Repository.orInternal(store.transaction(Effect.forEach(Role.builtIns, (builtIn) =>
    Effect.gen(function*() {
      const current = yield* roles.get(builtIn.uid)
      const now = yield* DateTime.now
      if (current._tag === "None") {
        return yield* roles.insert(new Role.Role({ ...builtIn, createTime: now, updateTime: now }, trusted))
      }
      const role = current.value
      const same = role.name === builtIn.name && role.description === builtIn.description &&
        role.capabilities.join() === builtIn.capabilities.join()
      if (!same) yield* roles.update(new Role.Role({ ...role, ...builtIn, updateTime: now }, trusted))
    }), { discard: true }))).pipe(Effect.orDie)

  const kind: Resources.Kind<Role.Role> = {
    resourceType: "role",
    repository: roles,
    permissions: Role.permissions,
    groupOf: Resources.parentGroup
  }

  /**
   * Refuses to delete a role that bindings, invites, identity providers, group mappings or eligibilities still grant,
   * or that eligibilities name as their approver role (their requests could then never be approved).
   */
  const refuseIfInUse = (role: Role.Role) =>
    Effect.gen(function*() {
      for (
        const [table, column, users] of [
          [RoleBinding.table, "roleUid", "role bindings grant"],
          [GroupInvite.table, "roleUid", "group invites grant"],
          [IdentityProvider.table, "defaultRole", "identity providers grant"],
          [ExternalGroupRoleMapping.table, "roleUid", "external group role mappings grant"],
          [Eligibility.table, "roleUid", "eligibilities grant"],
          [Eligibility.table, "approverRoleUid", "eligibilities name as their approver role"]
        ] as const
      ) {
        if (yield* exists(ops, table, { conditions: [{ _tag: "Equals", column, value: role.uid }] })) {
          return yield* new Errors.FailedPrecondition({
            summary: `cannot delete a role that ${users}`,
            violations: [
              new Errors.PreconditionViolation({
                type: "RESOURCE_IN_USE",
                subject: role.uid,
                description: `${users} this role`
              })
            ]
          })
        }
      }
      return []
    })

  const service: RolesService = {
    list: (principal: Principal, options: Lists.ListOptions = {}) =>
      operation("Roles.list")(Lists.list(ops, spec, principal, options)),

    get: Effect.fnUntraced(function*(principal: Principal, uid: string) {
      if (Role.isBuiltIn(uid)) return yield* orNotFound(roles.get(uid), "role", uid)
      return yield* Resources.get(ops, kind, principal, uid)
    }, operation("Roles.get")),

    create: Effect.fnUntraced(function*(principal: Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, Role.permissions.create, atGroup(group), grants)
      const fields = yield* Validation.decodeRequest(Role.CreateRole, Role.fields)(input)
      yield* requireAll(grants, fields.capabilities, group)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(group), "group", group)
          const now = yield* DateTime.now
          const role = new Role.Role(
            { uid: Uid.makeChild(group), ...fields, createTime: now, updateTime: now },
            trusted
          )
          yield* roles.insert(role).pipe(
            conflict("role", `a role named '${fields.name}' already exists in ${group}`)
          )
          return role
        })
      )
    }, operation("Roles.create")),

    update: Effect.fnUntraced(function*(principal: Principal, uid: string, patch: unknown, updateMask?: string) {
      if (Role.isBuiltIn(uid)) return yield* builtInRefused(uid, "updated")
      return yield* Resources.update(ops, kind, principal, uid, {
        patch,
        updateMask,
        fields: Role.fields,
        apply: (current, request) =>
          Effect.gen(function*() {
            const merged = FieldMask.apply(
              { name: current.name, description: current.description, capabilities: current.capabilities },
              request.body,
              request.mask,
              Role.fields
            )
            const fields = yield* Validation.decodeRequest(Role.CreateRole, Role.fields)(merged)
            yield* requireAll(request.grants, fields.capabilities, kind.groupOf(current.uid))
            return new Role.Role({ ...current, ...fields, updateTime: request.updateTime }, trusted)
          }),
        duplicate: (next) => `a role named '${next.name}' already exists beside ${next.uid}`
      })
    }, operation("Roles.update")),

    delete: Effect.fnUntraced(function*(principal: Principal, uid: string) {
      if (Role.isBuiltIn(uid)) return yield* builtInRefused(uid, "deleted")
      return yield* Resources.remove(ops, kind, principal, uid, { before: refuseIfInUse })
    }, operation("Roles.delete"))
  }
  return service
})

/**
 * The Roles service. Lists show the built-in roles and the custom roles the caller may list; every caller reads a
 * built-in role. Creating or changing a custom role needs every capability it will list; built-in roles never
 * change, and a role still bound is not deleted.
 */
export type RolesService = ResourceService.Writable<Role.Role>

/** Roles: named sets of capabilities. */
export class Roles extends Effect.Service<Roles>()("@arbor/core/Roles", { effect: make }) {}
