/**
 * The ScimCredentials service (docs/api.md §13): an identity provider's SCIM token and switch (the protos'
 * `GenerateScimToken`, `RegenerateScimToken`, `RevokeScimToken`, `SetScimEnabled`), and which client a presented
 * token authenticates. The users that client provisions are `ScimUsers`'.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Errors from "../engine/Errors.js"
import { commit, operations, orNotFound, unexpectedConflict } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as IdentityProvider from "../iam/IdentityProvider.js"
import type * as Principal from "../iam/Principal.js"
import * as RoleBinding from "../iam/RoleBinding.js"
import { live, ownerBindings } from "./internal/owners.js"
import * as ScimToken from "./internal/tokens.js"
import * as ScimCredential from "./ScimCredential.js"
import * as ScimUser from "./ScimUser.js"

/** An authenticated SCIM client: the provider whose credential it presented. */
export interface Client {
  readonly provider: IdentityProvider.Record
}

/** How many owner bindings an organization needs before its provider's provisioning may be enabled. */
export const ownersRequired = 2

const unauthenticated = () =>
  new Errors.Unauthenticated({
    why: "a valid SCIM token of this identity provider is required",
    reason: "SCIM_TOKEN_INVALID"
  })

/** Builds the ScimCredentials service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const credentials = yield* Repository.make(ScimCredential.table, ScimCredential.Record)
  const users = yield* Repository.make(ScimUser.table, ScimUser.Record)
  const providers = yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)

  const endpointOf = (provider: Uid.Uid) => ScimCredential.endpointOf(ops.settings.apiUrl ?? "", provider)

  /** The provider, once the caller may manage its provisioning (both capabilities at its group, as the protos say). */
  const managed = (principal: Principal.Principal, providerUid: string) =>
    Effect.gen(function*() {
      const provider = yield* Uid.parse(providerUid, "identityProviderUid")
      const group = Uid.parentOrNull(provider)
      if (group === null) {
        return yield* Errors.InvalidArgument.field("identityProviderUid", "is not an identity provider's uid")
      }
      const grants = yield* ops.authorization.grants(principal)
      const target = { group, uid: provider, kind: "identity_provider" }
      yield* ops.authorization.check(principal, IdentityProvider.permissions.list, target, grants)
      yield* ops.authorization.check(principal, ScimCredential.manage, target, grants)
      return provider
    })

  /** Fails with ABORTED unless `etag` is the configuration's current one. */
  const current = (record: ScimCredential.Record | undefined, etag: string) =>
    etag === ScimCredential.etagOf(record)
      ? Effect.void
      : Effect.fail(
        new Errors.Aborted({
          description: "the SCIM configuration changed since its etag was read; read it again",
          reason: "ETAG_MISMATCH"
        })
      )

  /** When a token issued now expires, as the request asks: null for never. */
  const expiryOf = (
    request: { readonly expireTime?: DateTime.Utc | undefined; readonly neverExpires: boolean },
    now: DateTime.Utc
  ) => {
    if (request.neverExpires) return Effect.succeed(null)
    if (request.expireTime === undefined) {
      return Effect.succeed(DateTime.addDuration(now, ScimCredential.defaultLifetime))
    }
    if (!DateTime.greaterThan(request.expireTime, now)) {
      return Effect.fail(Errors.InvalidArgument.field("expireTime", "must be in the future"))
    }
    if (DateTime.greaterThan(request.expireTime, DateTime.addDuration(now, ScimCredential.maxLifetime))) {
      return Effect.fail(Errors.InvalidArgument.field("expireTime", "must be at most two years from now"))
    }
    return Effect.succeed(request.expireTime)
  }

  const configOf = (provider: Uid.Uid) => Effect.map(credentials.get(provider), Option.getOrUndefined)

  /** True once the provider was issued a token (even one revoked or expired since). */
  const hadToken = (config: ScimCredential.Record | undefined) =>
    config !== undefined && (config.tokenDigest !== null || config.revokeTime !== null)

  const neverIssued = (provider: Uid.Uid) =>
    Effect.fail(new Errors.NotFound({ resourceType: "SCIM token", uid: provider }))

  /** A provider's configuration before anything was set: off, no token. */
  const unconfigured = (provider: Uid.Uid): ScimCredential.Record => ({
    uid: provider,
    enabled: false,
    tokenDigest: null,
    tokenExpireTime: null,
    previousTokenDigest: null,
    previousTokenExpireTime: null,
    revokeTime: null,
    version: 0,
    updateTime: DateTime.unsafeMake(0)
  })

  /** A token as handed out. */
  const issued = (
    provider: Uid.Uid,
    token: string,
    expireTime: DateTime.Utc | null,
    record: ScimCredential.Record
  ): ScimCredential.Issued => ({
    token,
    endpointUrl: endpointOf(provider),
    ...(expireTime === null ? {} : { expireTime }),
    identityProviderUid: provider,
    etag: ScimCredential.etagOf(record)
  })

  /**
   * Fails unless the organization has at least `ownersRequired` owner bindings of identities `provider` does not
   * provision.
   */
  const enoughOwners = (provider: Uid.Uid) =>
    Effect.gen(function*() {
      const organization = Uid.rootOf(provider)
      const owners = yield* ownerBindings(bindings, organization)
      const provisioned = new Set(
        (yield* users.find({ conditions: live(provider), order: [{ column: "uid", direction: "asc" }] }))
          .map((u) => u.identityUid)
      )
      const manual = new Set(owners.map((b) => b.identityUid).filter((uid) => !provisioned.has(uid)))
      if (manual.size >= ownersRequired) return
      return yield* new Errors.FailedPrecondition({
        summary: `enabling SCIM needs at least ${ownersRequired} owners of the organization that it does not provision`,
        violations: [
          new Errors.PreconditionViolation({
            type: "TOO_FEW_OWNERS",
            subject: organization,
            description:
              `${manual.size} owner binding(s) at ${organization} of identities this provider does not provision`
          })
        ]
      })
    })

  /**
   * One change of provider `provider`'s configuration, as `principal`, in one transaction once the provider is
   * found: `change` is given the configuration (none before the first) and the time, and what it returns is
   * written and logged as `type`.
   */
  const lifecycle = <A, E>(
    principal: Principal.Principal,
    provider: Uid.Uid,
    type: string,
    change: (
      existing: ScimCredential.Record | undefined,
      now: DateTime.Utc
    ) => Effect.Effect<{ readonly record: ScimCredential.Record; readonly answer: A }, E>
  ) =>
    commit(
      ops,
      principal,
      Effect.gen(function*() {
        yield* orNotFound(providers.get(provider), "identity provider", provider)
        const existing = yield* configOf(provider)
        const { answer, record } = yield* change(existing, yield* DateTime.now)
        yield* (existing === undefined ? credentials.insert(record) : credentials.update(record)).pipe(
          unexpectedConflict,
          ChangeLog.typedAs("scim_credential", existing === undefined ? "created" : "updated", type)
        )
        return answer
      })
    )

  const service: ScimCredentialsService = {
    generateToken: Effect.fnUntraced(function*(principal: Principal.Principal, providerUid: string, input: unknown) {
      const provider = yield* managed(principal, providerUid)
      const request = yield* Validation.decodeRequest(ScimCredential.GenerateScimToken)(input)
      return yield* lifecycle(
        principal,
        provider,
        ScimCredential.table.events!.types.created,
        (existing, now) =>
          Effect.gen(function*() {
            if (hadToken(existing)) {
              return yield* new Errors.FailedPrecondition({
                summary: "the identity provider has a SCIM token; regenerate it instead",
                violations: [
                  new Errors.PreconditionViolation({
                    type: "SCIM_TOKEN_EXISTS",
                    subject: provider,
                    description: "a SCIM token was generated before"
                  })
                ]
              })
            }
            const expireTime = yield* expiryOf(request, now)
            const token = ScimToken.make()
            const record: ScimCredential.Record = {
              ...(existing ?? unconfigured(provider)),
              tokenDigest: ScimToken.digestOf(token),
              tokenExpireTime: expireTime,
              version: (existing?.version ?? 0) + 1,
              updateTime: now
            }
            return { record, answer: issued(provider, token, expireTime, record) }
          })
      )
    }, operation("ScimCredentials.generateToken")),

    regenerateToken: Effect.fnUntraced(
      function*(principal: Principal.Principal, providerUid: string, input: unknown) {
        const provider = yield* managed(principal, providerUid)
        const request = yield* Validation.decodeRequest(ScimCredential.RegenerateScimToken)(input)
        const requested = request.overlap === undefined
          ? ScimCredential.defaultOverlap
          : ScimCredential.durationOf(request.overlap)
        const type = "dev.chainguard.api.iam.identity_providers.scim_token.regenerated.v1"
        return yield* lifecycle(principal, provider, type, (existing, now) =>
          Effect.gen(function*() {
            if (existing === undefined || !hadToken(existing)) return yield* neverIssued(provider)
            yield* current(existing, request.etag)
            const expireTime = yield* expiryOf(request, now)
            const token = ScimToken.make()
            // The current token keeps working for the overlap if it works now, never past its own expiry.
            const works = existing.tokenDigest !== null && ScimCredential.alive(existing.tokenExpireTime, now)
            const until = DateTime.addDuration(now, Duration.min(requested, ScimCredential.maxOverlap))
            const previousUntil = !works || !DateTime.greaterThan(until, now)
              ? null
              : existing.tokenExpireTime !== null && DateTime.lessThan(existing.tokenExpireTime, until)
              ? existing.tokenExpireTime
              : until
            const record: ScimCredential.Record = {
              ...existing,
              tokenDigest: ScimToken.digestOf(token),
              tokenExpireTime: expireTime,
              previousTokenDigest: previousUntil === null ? null : existing.tokenDigest,
              previousTokenExpireTime: previousUntil,
              revokeTime: null,
              version: existing.version + 1,
              updateTime: now
            }
            return {
              record,
              answer: {
                ...issued(provider, token, expireTime, record),
                ...(previousUntil === null ? {} : { previousTokenExpireTime: previousUntil }),
                requestedOverlap: requested
              } satisfies ScimCredential.Issued
            }
          }))
      },
      operation("ScimCredentials.regenerateToken")
    ),

    revokeToken: Effect.fnUntraced(function*(principal: Principal.Principal, providerUid: string) {
      const provider = yield* managed(principal, providerUid)
      const type = "dev.chainguard.api.iam.identity_providers.scim_token.revoked.v1"
      return yield* lifecycle(principal, provider, type, (existing, now) => {
        if (existing === undefined || !hadToken(existing)) return neverIssued(provider)
        const record: ScimCredential.Record = {
          ...existing,
          tokenDigest: null,
          tokenExpireTime: now,
          previousTokenDigest: null,
          previousTokenExpireTime: null,
          revokeTime: now,
          version: existing.version + 1,
          updateTime: now
        }
        const answer = {
          identityProviderUid: provider,
          etag: ScimCredential.etagOf(record),
          enabled: record.enabled,
          revokeTime: now
        }
        return Effect.succeed({ record, answer })
      })
    }, operation("ScimCredentials.revokeToken")),

    setEnabled: Effect.fnUntraced(function*(principal: Principal.Principal, providerUid: string, input: unknown) {
      const provider = yield* managed(principal, providerUid)
      const request = yield* Validation.decodeRequest(ScimCredential.SetScimEnabled)(input)
      return yield* lifecycle(
        principal,
        provider,
        ScimCredential.table.events!.types.updated,
        (existing, now) =>
          Effect.gen(function*() {
            yield* current(existing, request.etag)
            if (request.enabled) yield* enoughOwners(provider)
            const record: ScimCredential.Record = {
              ...(existing ?? unconfigured(provider)),
              enabled: request.enabled,
              version: (existing?.version ?? 0) + 1,
              updateTime: now
            }
            return {
              record,
              answer: { identityProviderUid: provider, enabled: record.enabled, etag: ScimCredential.etagOf(record) }
            }
          })
      )
    }, operation("ScimCredentials.setEnabled")),

    authenticate: (providerUid: string, token: string) =>
      operation("ScimCredentials.authenticate")(Effect.gen(function*() {
        if (!Uid.isUid(providerUid) || !ScimToken.isToken(token)) return yield* unauthenticated()
        const config = yield* configOf(providerUid)
        if (config === undefined || !ScimToken.accepts(config, token, yield* DateTime.now)) {
          return yield* unauthenticated()
        }
        const provider = yield* providers.get(providerUid)
        if (Option.isNone(provider)) return yield* unauthenticated()
        if (!config.enabled) {
          return yield* new Errors.PermissionDenied({
            capability: "SCIM provisioning",
            resource: providerUid,
            reason: "SCIM_DISABLED",
            logDetail: "provisioning of this identity provider is not enabled"
          })
        }
        return { provider: provider.value } satisfies Client
      }))
  }
  return service
})

/** What switching a provider's provisioning answers: its state after, and the version to send next. */
export interface Switched {
  readonly identityProviderUid: Uid.Uid
  readonly enabled: boolean
  readonly etag: string
}

/** What revoking a provider's tokens answers: as a switch does, and when the tokens stopped working. */
export interface Revoked extends Switched {
  readonly revokeTime: DateTime.Utc
}

/**
 * The ScimCredentials service: a provider's SCIM tokens (shown once, kept hashed), its provisioning's switch, and
 * who a token presented at its SCIM endpoint speaks for.
 */
export interface ScimCredentialsService {
  /**
   * The provider's first token, shown once (`identity_providers.scim.manage` and `identity_providers.list` at
   * its group): FAILED_PRECONDITION when it has had one. Provisioning stays as it was (off at first).
   */
  readonly generateToken: (
    principal: Principal.Principal,
    providerUid: string,
    input: unknown
  ) => Effect.Effect<ScimCredential.Issued, Errors.WriteFailure>
  /**
   * A new token, shown once, in place of the current one, which keeps working for the overlap asked (an hour by
   * default, a day at most, never past its own expiry) when it still works; NOT_FOUND when the provider never had
   * one, ABORTED when `etag` is not current.
   */
  readonly regenerateToken: (
    principal: Principal.Principal,
    providerUid: string,
    input: unknown
  ) => Effect.Effect<ScimCredential.Issued, Errors.WriteFailure>
  /** Kills the current and the previous token at once; the switch stays. NOT_FOUND when none was ever issued. */
  readonly revokeToken: (
    principal: Principal.Principal,
    providerUid: string
  ) => Effect.Effect<Revoked, Errors.WriteFailure>
  /**
   * Starts or pauses provisioning; ABORTED when `etag` is not current. Enabling needs at least two owner bindings
   * at the organization of identities this provider does not provision (FAILED_PRECONDITION otherwise), so that
   * provisioning can never lock out its only owner.
   */
  readonly setEnabled: (
    principal: Principal.Principal,
    providerUid: string,
    input: unknown
  ) => Effect.Effect<Switched, Errors.WriteFailure>
  /**
   * The client presenting `token` at provider `providerUid`'s endpoint: Unauthenticated unless the token is one the
   * provider's configuration accepts now; PermissionDenied when its provisioning is off.
   */
  readonly authenticate: (
    providerUid: string,
    token: string
  ) => Effect.Effect<Client, Errors.StoreFailure | Errors.Unauthenticated | Errors.PermissionDenied>
}

/** SCIM credentials. */
export class ScimCredentials
  extends Effect.Service<ScimCredentials>()("@arbor/core/ScimCredentials", { effect: make })
{}
