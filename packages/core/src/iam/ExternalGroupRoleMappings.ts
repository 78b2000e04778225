/**
 * The ExternalGroupRoleMappings service: create, get, list, delete and batch delete the mappings of an
 * organization's identity provider from its groups to roles (docs/api.md §13), and the mappings a sign-in through
 * that provider gives (`forSignIn`).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Errors from "../engine/Errors.js"
import { commit, conflict, operations, orNotFound, trusted } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as ChangeLog from "../events/ChangeLog.js"
import { atGroup } from "./Authorization.js"
import * as ExternalGroupRoleMapping from "./ExternalGroupRoleMapping.js"
import * as Group from "./Group.js"
import * as IdentityProvider from "./IdentityProvider.js"
import { grantable, grantor } from "./internal/roles.js"
import type { Principal } from "./Principal.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"

type Mapping = ExternalGroupRoleMapping.ExternalGroupRoleMapping

/** The filters of a list of mappings, beside the common list parameters. */
export interface MappingListOptions extends Lists.ListOptions {
  /** Only the mappings of this identity provider. */
  readonly identityProviderUid?: string | undefined
}

const asMapping = (record: ExternalGroupRoleMapping.Record): Mapping => {
  const { grantedBy: _, key: _key, ...mapping } = record
  return new ExternalGroupRoleMapping.ExternalGroupRoleMapping(mapping, trusted)
}

/**
 * Builds the ExternalGroupRoleMappings service from the services in its context; `Arbor.layer` builds it with the
 * others.
 */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const mappings = yield* Repository.make(ExternalGroupRoleMapping.table, ExternalGroupRoleMapping.Record)
  const providers = yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const roles = yield* Repository.make(Role.table, Role.Role)
  /** A mapping's group: its provider's. */
  const groupOf = (uid: Uid.Uid) => Uid.parentOrNull(Uid.parentOrNull(uid) ?? uid) ?? uid
  const kind: Resources.Kind<ExternalGroupRoleMapping.Record> = {
    resourceType: "external group role mapping",
    repository: mappings,
    permissions: ExternalGroupRoleMapping.permissions,
    groupOf
  }
  const spec: Lists.ListSpec<Mapping, ExternalGroupRoleMapping.Record> = {
    target: (uid) => Resources.targetOf(kind, uid),
    load: (records) => Effect.succeed(records.map(asMapping)),
    repository: mappings,
    capability: ExternalGroupRoleMapping.permissions.list,
    visibleAt: "parent"
  }

  const service: ExternalGroupRoleMappingsService = {
    list: (principal: Principal, options: MappingListOptions = {}) => {
      const provider = options.identityProviderUid || undefined
      const filters: Lists.Filters = provider === undefined
        ? { conditions: [], digest: null }
        : {
          conditions: [{ _tag: "Equals", column: "parent", value: provider }],
          digest: [provider],
          violations: Uid.isUid(provider)
            ? []
            : [
              new Errors.FieldViolation({
                field: "identity_provider_uid",
                description: `'${provider}' is not a valid uid`
              })
            ]
        }
      return operation("ExternalGroupRoleMappings.list")(Lists.list(ops, spec, principal, options, filters))
    },

    get: (principal: Principal, uid: string) =>
      operation("ExternalGroupRoleMappings.get")(Effect.map(Resources.get(ops, kind, principal, uid), asMapping)),

    create: Effect.fnUntraced(function*(principal: Principal, providerUid: string, input: unknown) {
      const provider = yield* Uid.parse(providerUid, "parent")
      const group = Uid.parentOrNull(provider)
      if (group === null) return yield* Errors.InvalidArgument.field("parent", "is not an identity provider's uid")
      const grants = yield* ops.authorization.grants(principal)
      yield* ops.authorization.check(principal, ExternalGroupRoleMapping.permissions.create, {
        group,
        uid: provider,
        kind: "identity_provider"
      }, grants)
      const fields = yield* Validation.decodeRequest(ExternalGroupRoleMapping.CreateExternalGroupRoleMapping)(input)
      const scope = fields.scope ?? group
      if (!Uid.isAncestorOrSelf(group, scope)) {
        return yield* Errors.InvalidArgument.field("scope", "must be the identity provider's group or a group below it")
      }
      yield* ops.authorization.check(principal, RoleBinding.permissions.create, atGroup(scope), grants)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(providers.get(provider), "identity provider", provider)
          yield* orNotFound(groups.get(scope), "group", scope)
          yield* grantable(roles, grants, fields.roleUid, scope)
          const record: ExternalGroupRoleMapping.Record = {
            uid: Uid.makeChild(provider),
            identityProviderUid: provider,
            externalGroupId: fields.externalGroupId,
            roleUid: fields.roleUid,
            scope,
            grantedBy: grantor(principal),
            key: ExternalGroupRoleMapping.keyOf({ ...fields, scope }),
            createTime: yield* DateTime.now
          }
          yield* mappings.insert(record).pipe(
            conflict("external group role mapping", "this provider already maps that group to that role there")
          )
          return asMapping(record)
        })
      )
    }, operation("ExternalGroupRoleMappings.create")),

    delete: (principal: Principal, uid: string) =>
      operation("ExternalGroupRoleMappings.delete")(
        Resources.remove<ExternalGroupRoleMapping.Record, never, never>(ops, kind, principal, uid, {
          idempotent: true
        })
      ),

    batchDelete: Effect.fnUntraced(function*(
      principal: Principal,
      request: { readonly parent: string; readonly names: ReadonlyArray<string> }
    ) {
      const provider = yield* Uid.parse(request.parent, "parent")
      const group = Uid.parentOrNull(provider) ?? provider
      yield* ops.authorization.check(principal, ExternalGroupRoleMapping.permissions.delete, {
        group,
        uid: provider,
        kind: "identity_provider"
      })
      if (request.names.length === 0 || request.names.length > ExternalGroupRoleMapping.maxBatch) {
        return yield* Errors.InvalidArgument.field(
          "names",
          `must name 1 to ${ExternalGroupRoleMapping.maxBatch} mappings`
        )
      }
      const violations = request.names.flatMap((name, i) =>
        Uid.isUid(name) && Uid.parentOrNull(name) === provider
          ? []
          : [new Errors.FieldViolation({ field: `names[${i}]`, description: `is not a mapping of ${provider}` })]
      )
      const [first, ...rest] = violations
      if (first !== undefined) return yield* new Errors.InvalidArgument({ violations: [first, ...rest] })
      const uids = [...new Set(request.names)]
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          const found = yield* mappings.getMany(uids)
          yield* mappings.delete({ conditions: [{ _tag: "In", column: "uid", values: uids }] })
          return { parent: provider, externalGroupRoleMappings: found.map(asMapping) }
        }).pipe(
          ChangeLog.typedAs("external_group_role_mapping", "deleted", ExternalGroupRoleMapping.batchDeletedType)
        )
      )
    }, operation("ExternalGroupRoleMappings.batchDelete")),

    forSignIn: (providerUid: Uid.Uid, groups: ReadonlyArray<string>) =>
      operation("ExternalGroupRoleMappings.forSignIn")(Effect.gen(function*() {
        if (groups.length === 0) return []
        const found = yield* mappings.find({
          order: [{ column: "uid", direction: "asc" }],
          conditions: [
            { _tag: "Equals", column: "parent", value: providerUid },
            { _tag: "In", column: "externalGroupId", values: [...new Set(groups)].slice(0, 1000) }
          ]
        })
        return yield* Effect.filter(found, ops.authorization.grantStands)
      }))
  }
  return service
})

/**
 * The ExternalGroupRoleMappings service. Lists are of one provider when asked (`identity_providers.list`). Creating
 * a mapping needs `identity_providers.create` at its provider's group and, at the mapping's scope,
 * `role_bindings.create` and every capability of the role (no escalation): the mapping rests on the caller's
 * authority, as a binding they made would. Deleting one that is gone succeeds.
 */
export interface ExternalGroupRoleMappingsService extends ResourceService.Creatable<Mapping, MappingListOptions> {
  /**
   * Deletes the mappings `names` of provider `parent` at once (`identity_providers.delete`): those gone are
   * skipped, one of another provider is INVALID_ARGUMENT and deletes nothing. Answers those deleted.
   */
  readonly batchDelete: (
    principal: Principal,
    request: { readonly parent: string; readonly names: ReadonlyArray<string> }
  ) => Effect.Effect<
    { readonly parent: Uid.Uid; readonly externalGroupRoleMappings: ReadonlyArray<Mapping> },
    Errors.WriteFailure
  >
  /**
   * The mappings a sign-in through provider `providerUid` gives a person whose groups claim holds `groups`: those
   * of their external groups whose creator could still bind the role at the scope (docs/api.md §7).
   */
  readonly forSignIn: (
    providerUid: Uid.Uid,
    groups: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Mapping>, Errors.StoreFailure>
}

/** External group role mappings. */
export class ExternalGroupRoleMappings
  extends Effect.Service<ExternalGroupRoleMappings>()("@arbor/core/ExternalGroupRoleMappings", { effect: make })
{}
