/**
 * The IdentityProviders service: list, get, create, update and delete identity providers. The client secret is
 * write-only: never returned, kept when an update omits it, and stored sealed (`Sealing`, with the key of `Secrets`).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash, timingSafeEqual } from "node:crypto"
import * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import { commit, conflict, operations, orNotFound, trusted, unexpectedConflict } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import * as Sealing from "../engine/Sealing.js"
import { Secrets } from "../engine/Secrets.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as ScimCredential from "../provisioning/ScimCredential.js"
import * as ScimGroup from "../provisioning/ScimGroup.js"
import * as ScimUser from "../provisioning/ScimUser.js"
import * as IssuerUrl from "../tokens/IssuerUrl.js"
import { atGroup } from "./Authorization.js"
import * as ExternalGroupRoleMapping from "./ExternalGroupRoleMapping.js"
import * as Group from "./Group.js"
import * as IdentityProvider from "./IdentityProvider.js"
import { grantable, grantor } from "./internal/roles.js"
import type { Principal } from "./Principal.js"
import * as Role from "./Role.js"

/** The provider as returned: without its client secret. */
const withoutSecret = ({ grantedBy: _g, oidc: { clientSecret: _, ...oidc }, ...record }: IdentityProvider.Record) =>
  new IdentityProvider.IdentityProvider({ ...record, oidc }, trusted)

/** Builds the IdentityProviders service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const providers = yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const roles = yield* Repository.make(Role.table, Role.Role)
  const mappings = yield* Repository.make(ExternalGroupRoleMapping.table, ExternalGroupRoleMapping.Record)
  const credentials = yield* Repository.make(ScimCredential.table, ScimCredential.Record)
  const scimUsers = yield* Repository.make(ScimUser.table, ScimUser.Record)
  const scimGroups = yield* Repository.make(ScimGroup.table, ScimGroup.Record)
  const authorization = ops.authorization
  const { sealing } = yield* Secrets
  /** The validated fields as stored: the client secret sealed. */
  const sealed = <F extends { readonly oidc: { readonly clientSecret: string } }>(fields: F): F => ({
    ...fields,
    oidc: { ...fields.oidc, clientSecret: Sealing.seal(sealing, fields.oidc.clientSecret) }
  })
  const kind: Resources.Kind<IdentityProvider.Record> = {
    resourceType: "identity provider",
    repository: providers,
    permissions: IdentityProvider.permissions,
    groupOf: Resources.parentGroup
  }
  const spec: Lists.ListSpec<IdentityProvider.IdentityProvider, IdentityProvider.Record> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: providers,
    capability: IdentityProvider.permissions.list,
    visibleAt: "parent",
    load: (records) => Effect.succeed(records.map(withoutSecret))
  }

  /** Validates a provider's fields: the schema, then the issuer against the configured policy. */
  const validate = (input: unknown) =>
    Effect.gen(function*() {
      const fields = yield* Validation.decodeRequest(IdentityProvider.CreateIdentityProvider, IdentityProvider.fields)(
        input
      )
      const error = IssuerUrl.error(fields.oidc.issuer, { allowLoopback: ops.settings.allowLoopbackHttpIssuers })
      if (error !== undefined) return yield* Errors.InvalidArgument.field("oidc.issuer", error)
      return fields
    })

  const service: IdentityProvidersService = {
    list: (principal: Principal, options: Lists.ListOptions = {}) =>
      operation("IdentityProviders.list")(Lists.list(ops, spec, principal, options)),

    get: (principal: Principal, uid: string) =>
      operation("IdentityProviders.get")(Effect.gen(function*() {
        const record = yield* Resources.get(ops, kind, principal, uid)
        const scim = yield* Effect.map(credentials.get(record.uid), Option.getOrUndefined)
        const endpoint = ScimCredential.endpointOf(ops.settings.apiUrl ?? "", record.uid)
        return new IdentityProvider.IdentityProvider({
          ...withoutSecret(record),
          scim: ScimCredential.statusOf(scim, endpoint, yield* DateTime.now)
        }, trusted)
      })),

    create: Effect.fnUntraced(function*(principal: Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, IdentityProvider.permissions.create, atGroup(group), grants)
      const fields = yield* validate(input)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(group), "group", group)
          yield* grantable(roles, grants, fields.defaultRole, group)
          const now = yield* DateTime.now
          const record: IdentityProvider.Record = {
            uid: Uid.makeChild(group),
            ...sealed(fields),
            grantedBy: grantor(principal),
            createTime: now,
            updateTime: now
          }
          yield* providers.insert(record).pipe(
            conflict("identity provider", `an identity provider named '${fields.name}' already exists in ${group}`)
          )
          return withoutSecret(record)
        })
      )
    }, operation("IdentityProviders.create")),

    update: (
      principal: Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("IdentityProviders.update")(
        Resources.update(ops, kind, principal, uid, {
          patch,
          updateMask,
          fields: IdentityProvider.fields,
          apply: (current, request) =>
            Effect.gen(function*() {
              const { createTime: _c, grantedBy: _g, uid: _u, updateTime: _t, ...stored } = current
              const clientSecret = yield* Sealing.open(sealing, stored.oidc.clientSecret)
              const input = { ...stored, oidc: { ...stored.oidc, clientSecret } }
              const merged = FieldMask.apply(input, request.body, request.mask, IdentityProvider.fields)
              const oidc = merged.oidc as Record<string, unknown> | undefined
              if (oidc !== undefined && oidc.clientSecret === undefined) merged.oidc = { ...oidc, clientSecret }
              const fields = yield* validate(merged)
              if (fields.defaultRole !== current.defaultRole) {
                yield* grantable(roles, request.grants, fields.defaultRole, kind.groupOf(current.uid))
              }
              return { ...current, ...sealed(fields), grantedBy: grantor(principal), updateTime: request.updateTime }
            }),
          duplicate: (next) => `an identity provider named '${next.name}' already exists beside ${next.uid}`
        }).pipe(
          Effect.map(withoutSecret)
        )
      ),

    delete: (principal: Principal, uid: string) =>
      operation("IdentityProviders.delete")(
        Resources.remove<
          IdentityProvider.Record,
          Errors.StoreFailure | Errors.FailedPrecondition,
          never
        >(
          ops,
          kind,
          principal,
          uid,
          {
            before: (provider) =>
              Effect.all([
                mappings.delete({ ranges: [Uid.descendants(provider.uid)] }),
                scimUsers.delete({ ranges: [Uid.descendants(provider.uid)] }),
                scimGroups.delete({ ranges: [Uid.descendants(provider.uid)] }),
                credentials.delete({ ranges: [Uid.only(provider.uid)] })
              ], { discard: true })
          }
        )
      ),

    clientSecretIs: (principal: Principal, uid: string, candidate: string) =>
      operation("IdentityProviders.clientSecretIs")(Effect.gen(function*() {
        const record = yield* Resources.get(ops, kind, principal, uid)
        yield* authorization.check(principal, IdentityProvider.permissions.create, Resources.targetOf(kind, record.uid))
        const stored = yield* Sealing.open(sealing, record.oidc.clientSecret)
        const digest = (text: string) => createHash("sha256").update(text).digest()
        return timingSafeEqual(digest(stored), digest(candidate))
      })),

    sealStoredSecrets: ops.store.transaction(Effect.gen(function*() {
      const stored = yield* providers.find({ order: [{ column: "uid", direction: "asc" }] })
      const stale = stored.filter((record) => Sealing.needsSealing(sealing, record.oidc.clientSecret))
      for (const record of stale) {
        const clientSecret = Sealing.seal(sealing, yield* Sealing.open(sealing, record.oidc.clientSecret))
        yield* providers.rewrite({ ...record, oidc: { ...record.oidc, clientSecret } }).pipe(unexpectedConflict)
      }
      return stale.length
    })).pipe(Repository.orInternal)
  }
  return service
})

/**
 * The IdentityProviders service. A provider's default role must be grantable in its group by whoever creates or
 * changes it; an `oidc` without `clientSecret` keeps the stored secret, which is never returned. A get carries the
 * provider's SCIM provisioning status; a delete takes, atomically, its group mappings, SCIM configuration,
 * provisioned users and pushed groups.
 */
export interface IdentityProvidersService extends ResourceService.Writable<IdentityProvider.IdentityProvider> {
  /**
   * True when provider `uid`'s client secret is `candidate` ("" for none), compared in constant time; for those
   * who may change it (`identity_providers.create` at its group), who could replace it anyway. The secret itself
   * is never returned. IAM as code asks it to plan a secret's change without reading the secret.
   */
  readonly clientSecretIs: (
    principal: Principal,
    uid: string,
    candidate: string
  ) => Effect.Effect<boolean, Errors.ReadFailure>
  /**
   * Seals under the current key the client secrets that are not (stored before sealing began, or under a
   * retired key), at a server's start; returns how many. Not a change of any provider: no change-log entry, no new
   * update time.
   */
  readonly sealStoredSecrets: Effect.Effect<number, Errors.StoreFailure>
}

/** Identity providers: upstream OIDC providers for a group. */
export class IdentityProviders
  extends Effect.Service<IdentityProviders>()("@arbor/core/IdentityProviders", { effect: make })
{}
