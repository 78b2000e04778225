import * as Effect from "effect/Effect"
import { PermissionDenied } from "../../engine/Errors.js"
import { orNotFound } from "../../engine/internal/operations.js"
import type { Repository } from "../../engine/Repository.js"
import * as Uid from "../../engine/Uid.js"
import type { Authorization, Grants } from "../Authorization.js"
import type { Capability } from "../Capability.js"
import * as Principal from "../Principal.js"
import type * as Role from "../Role.js"

/** Fails unless the caller holds every one of `capabilities` at `group` (no escalation through roles). */
export const requireAll = (grants: Grants, capabilities: ReadonlyArray<Capability>, group: string) => {
  const missing = capabilities.find((c) => !grants.holds(c, group))
  return missing === undefined
    ? Effect.void
    : Effect.fail(new PermissionDenied({ capability: missing, resource: group }))
}

/** True when the caller may read the role: a built-in one, or a custom one where it holds `roles.list`. */
export const canReadRole = (grants: Grants, roleUid: Uid.Uid): boolean => {
  const roleGroup = Uid.parentOrNull(roleUid)
  return roleGroup === null || grants.holds("roles.list", roleGroup)
}

/**
 * The role `roleUid` if something at `group` may grant it: one the caller may read (else permission denied), built
 * in or defined at `group` or above (any other is not found), whose every capability the caller holds at `group`.
 */
export const grantable = (
  roles: Pick<Repository<Role.Role>, "get">,
  grants: Grants,
  roleUid: Uid.Uid,
  group: Uid.Uid
) =>
  Effect.gen(function*() {
    if (!canReadRole(grants, roleUid)) {
      return yield* new PermissionDenied({ capability: "roles.list", resource: roleUid })
    }
    const roleGroup = Uid.parentOrNull(roleUid)
    if (roleGroup !== null && !Uid.isAncestorOrSelf(roleGroup, group)) {
      return yield* orNotFound(Effect.succeedNone, "role", roleUid)
    }
    const role = yield* orNotFound(roles.get(roleUid), "role", roleUid)
    yield* requireAll(grants, role.capabilities, group)
    return role
  })

/** Whose authority a stored grant (an invite, a provider's default role) rests on: an identity, or null for the system. */
export const grantor = (principal: Principal.Principal): Uid.Uid | null =>
  principal._tag === "Identity" ? principal.uid : null

/**
 * True while `grantedBy` (null: the system) could still make a grant of `roleUid` at `group` that needs
 * `capability` there: no grant outlives the authority that made it (docs/api.md §7). Read from the current role
 * bindings, so a demotion takes effect at the next use.
 */
export const stillGrantable = (
  authorization: Authorization,
  roles: Repository<Role.Role>,
  grant: { readonly grantedBy: Uid.Uid | null; readonly capability: Capability; readonly roleUid: Uid.Uid },
  group: Uid.Uid
) =>
  Effect.gen(function*() {
    const grants = yield* authorization.grants(
      grant.grantedBy === null ? Principal.system : Principal.identity(grant.grantedBy)
    )
    if (!grants.holds(grant.capability, group)) return false
    return yield* grantable(roles, grants, grant.roleUid, group).pipe(
      Effect.as(true),
      Effect.catchTags({ PermissionDenied: () => Effect.succeed(false), NotFound: () => Effect.succeed(false) })
    )
  })
