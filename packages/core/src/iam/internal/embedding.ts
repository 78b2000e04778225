/**
 * How a resource embedded in another is shown to a reader (DECISIONS §14, §18): a role binding's identity, group and
 * role, each in full where the reader may list it and by its uid alone elsewhere. The API's reads of role bindings and
 * every reader of the change log (the audit list, the watch, webhook deliveries) render through it, so no surface
 * shows a reader more of an embedded resource than `GET` would.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Internal, Unavailable } from "../../engine/Errors.js"
import { trusted } from "../../engine/internal/operations.js"
import * as Repository from "../../engine/Repository.js"
import * as Uid from "../../engine/Uid.js"
import * as ChangeLog from "../../events/ChangeLog.js"
import type { Grant, Grants } from "../Authorization.js"
import * as ExternalGroupRoleMapping from "../ExternalGroupRoleMapping.js"
import * as Group from "../Group.js"
import * as Identity from "../Identity.js"
import * as Role from "../Role.js"
import * as RoleBinding from "../RoleBinding.js"
import { canReadRole } from "./roles.js"

const decodeBinding = Schema.decodeUnknownOption(RoleBinding.RoleBinding)
const encodeBinding = Schema.encodeSync(RoleBinding.RoleBinding)

/**
 * True when a reader holding `grants` may see what gave `grant` (an explanation's `grantedBy`): a binding where it may
 * list bindings, a sign-in's group mapping where it may list its identity provider's mappings, and the role either
 * gives where it may read it.
 */
export const maySeeGrant = (grants: Grants, grant: Grant): boolean => {
  const source = grant.source
  if (source === undefined || !canReadRole(grants, source.role)) return false
  if (source.binding !== undefined) return grants.holds(RoleBinding.permissions.list, grant.group)
  const provider = source.mapping === undefined ? null : Uid.parentOrNull(source.mapping)
  const providerGroup = provider === null ? null : Uid.parentOrNull(provider)
  return providerGroup !== null && grants.holds(ExternalGroupRoleMapping.permissions.list, providerGroup)
}

/** The renderer of embedded resources, over the engine's store. */
export const make = Effect.gen(function*() {
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const roles = yield* Repository.make(Role.table, Role.Role)

  /** What of a resource another embeds beside its uid. */
  type Embedded = { readonly name: string; readonly description: string }

  /**
   * What of a binding's references the caller may read; the others are embedded with their uid only. A `reader`
   * reads the whole of its own bindings: where it holds a role, and which.
   */
  const readable = (grants: Grants, r: RoleBinding.Record, reader?: Uid.Uid) => {
    if (reader !== undefined && r.identityUid === reader) return { identity: true, group: true, role: true }
    const identityGroup = Uid.parentOrNull(r.identityUid)
    return {
      identity: identityGroup === null || grants.holds(Identity.permissions.list, identityGroup),
      group: grants.holds(Group.permissions.list, r.parent),
      role: canReadRole(grants, r.roleUid)
    }
  }

  /**
   * A binding with its identity, group and role embedded: blank but for the uid where the caller may not read it,
   * or where it is absent (deleted).
   */
  const embed = (
    grants: Grants,
    r: RoleBinding.Record,
    found: {
      readonly identity: Embedded & { readonly subject: string; readonly issuer: string } | undefined
      readonly group: Embedded | undefined
      readonly role: Embedded | undefined
    },
    reader?: Uid.Uid
  ) => {
    const may = readable(grants, r, reader)
    const identity = may.identity ? found.identity : undefined
    const group = may.group ? found.group : undefined
    const role = may.role ? found.role : undefined
    return new RoleBinding.RoleBinding({
      uid: r.uid,
      identity: {
        uid: r.identityUid,
        name: identity?.name ?? "",
        description: identity?.description ?? "",
        subject: identity?.subject ?? "",
        issuer: identity?.issuer ?? ""
      },
      group: { uid: r.parent, name: group?.name ?? "", description: group?.description ?? "" },
      role: { uid: r.roleUid, name: role?.name ?? "", description: role?.description ?? "" },
      startTime: r.startTime,
      expireTime: r.expireTime,
      condition: r.condition,
      elevationUid: r.elevationUid,
      createTime: r.createTime,
      updateTime: r.updateTime
    }, trusted)
  }

  /**
   * Embeds each binding's identity, group and role as far as the caller may read them (all of `reader`'s own),
   * reading each referenced resource once.
   */
  const bindings = (
    records: ReadonlyArray<RoleBinding.Record>,
    grants: Grants,
    recorded: ReadonlyArray<RoleBinding.RoleBinding | undefined> = [],
    reader?: Uid.Uid
  ): Effect.Effect<ReadonlyArray<RoleBinding.RoleBinding>, Internal | Unavailable> =>
    Effect.gen(function*() {
      const unique = (f: (r: RoleBinding.Record) => string) => [...new Set(records.map(f))]
      const byUid = <A extends { readonly uid: string }>(xs: ReadonlyArray<A>) => new Map(xs.map((x) => [x.uid, x]))
      const [is, gs, rs] = yield* Effect.all([
        Effect.map(identities.getMany(unique((r) => r.identityUid)), byUid),
        Effect.map(groups.getMany(unique((r) => r.parent)), byUid),
        Effect.map(roles.getMany(unique((r) => r.roleUid)), byUid)
      ])
      /** As the entry recorded it when it has a name there (what was written then), else as it is now. */
      const asWritten = <A extends Embedded>(then: A | undefined, now: A | undefined) =>
        then !== undefined && then.name !== "" ? then : now
      return records.map((r, i) =>
        embed(grants, r, {
          identity: asWritten(recorded[i]?.identity, is.get(r.identityUid)),
          group: asWritten(recorded[i]?.group, gs.get(r.parent)),
          role: asWritten(recorded[i]?.role, rs.get(r.roleUid))
        }, reader)
      )
    })

  /** The binding an entry's body holds (a body of any age: older ones name their references by uid alone). */
  const bindingOf = (entry: ChangeLog.Entry): RoleBinding.RoleBinding | undefined =>
    entry.kind !== "role_binding" ? undefined : Option.getOrUndefined(decodeBinding(entry.body))

  const recordOf = (b: RoleBinding.RoleBinding): RoleBinding.Record => ({
    uid: b.uid,
    parent: b.group.uid,
    identityUid: b.identity.uid,
    roleUid: b.role.uid,
    startTime: b.startTime,
    expireTime: b.expireTime,
    condition: b.condition,
    elevationUid: null,
    endedTime: null,
    createTime: b.createTime,
    updateTime: b.updateTime
  })

  /**
   * The entries as a reader holding `grants` may see them: each role binding's identity, group and role as the entry
   * recorded them when it was written (DECISIONS §20: a reference deleted or renamed since keeps its name there),
   * shown only where the reader may read them where they live, by uid alone elsewhere, as `GET` would. Other entries
   * are returned as they are, and so is the array itself when none needs rendering.
   */
  const entries = (
    grants: Grants,
    batch: ReadonlyArray<ChangeLog.Entry>
  ): Effect.Effect<ReadonlyArray<ChangeLog.Entry>, Internal | Unavailable> => {
    const written = batch.map(bindingOf)
    const named = written.filter((b): b is RoleBinding.RoleBinding => b !== undefined)
    if (named.length === 0) return Effect.succeed(batch)
    return Effect.map(bindings(named.map(recordOf), grants, named), (rendered) => {
      let next = 0
      return batch.map((entry, i) =>
        written[i] === undefined
          ? entry
          : new ChangeLog.Entry({ ...entry, body: encodeBinding(rendered[next++]!) }, { disableValidation: true })
      )
    })
  }

  return { embed, bindings, entries }
})

/** Whether an entry's body embeds resources that are rendered for each reader (`entries`). */
export const rendersPerReader = (entry: ChangeLog.Entry): boolean => entry.kind === "role_binding"
