/**
 * The ScimProvisioning service (docs/api.md §13): an identity provider's SCIM credential and switch (the protos'
 * `GenerateScimToken`, `RegenerateScimToken`, `RevokeScimToken`, `SetScimEnabled`), and the users its SCIM client
 * provisions (RFC 7644's create, get, list, replace, patch and delete, as the edge reads them), which decide whether
 * a person may still sign in through it (`refuses`).
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ChangeLog from "./ChangeLog.js"
import {
  Aborted,
  AlreadyExists,
  FailedPrecondition,
  InvalidArgument,
  NotFound,
  PermissionDenied,
  PreconditionViolation,
  Unauthenticated
} from "./Errors.js"
import * as IdentityProvider from "./IdentityProvider.js"
import { commit, conflict, operations, orNotFound, trusted } from "./internal/operations.js"
import * as ScimToken from "./internal/scim/tokens.js"
import { People } from "./internal/signIn/people.js"
import { operation } from "./internal/tracing.js"
import * as Principal from "./Principal.js"
import * as Repository from "./Repository.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"
import * as ScimCredential from "./ScimCredential.js"
import * as ScimUser from "./ScimUser.js"
import type { Condition } from "./Store.js"
import * as Uid from "./Uid.js"
import * as Validation from "./Validation.js"

/** An authenticated SCIM client: the provider whose credential it presented. */
export interface Client {
  readonly provider: IdentityProvider.Record
}

/** The one filter a list takes: equality on `userName` (case-insensitive) or `externalId`. */
export interface Filter {
  readonly attribute: "userName" | "externalId"
  readonly value: string
}

/** A page of users: RFC 7644 §3.4.2's `startIndex` (from 1) and `count`. */
export interface Page {
  readonly startIndex: number
  readonly count: number
}

/** The most users a page holds. */
export const maxPageSize = 200

/** How many owner bindings an organization needs before its provider's provisioning may be enabled. */
export const ownersRequired = 2

const ownerRole = Role.builtInByName("owner")!.uid
const ownerCapabilities = Role.builtInByName("owner")!.capabilities

const unauthenticated = () =>
  new Unauthenticated({ why: "a valid SCIM token of this identity provider is required", reason: "SCIM_TOKEN_INVALID" })

/** SCIM provisioning. */
export class ScimProvisioning extends Effect.Service<ScimProvisioning>()("@arbor/core/ScimProvisioning", {
  effect: Effect.gen(function*() {
    const ops = yield* operations
    const people = yield* People
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
          return yield* InvalidArgument.field("identityProviderUid", "is not an identity provider's uid")
        }
        const grants = yield* ops.authorization.grants(principal)
        yield* grants.require(IdentityProvider.permissions.list, group, provider)
        yield* grants.require(ScimCredential.manage, group, provider)
        return provider
      })

    /** Fails with ABORTED unless `etag` is the configuration's current one. */
    const current = (record: ScimCredential.Record | undefined, etag: string) =>
      etag === ScimCredential.etagOf(record)
        ? Effect.void
        : Effect.fail(
          new Aborted({
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
        return Effect.fail(InvalidArgument.field("expireTime", "must be in the future"))
      }
      if (DateTime.greaterThan(request.expireTime, DateTime.addDuration(now, ScimCredential.maxLifetime))) {
        return Effect.fail(InvalidArgument.field("expireTime", "must be at most two years from now"))
      }
      return Effect.succeed(request.expireTime)
    }

    const configOf = (provider: Uid.Uid) => Effect.map(credentials.get(provider), Option.getOrUndefined)

    /** The provider's users, those deleted left out. */
    const live = (provider: Uid.Uid): ReadonlyArray<Condition> => [
      { _tag: "Equals", column: "parent", value: provider },
      { _tag: "Equals", column: "deleted", value: false }
    ]

    const userOf = ({ deleted: _, userNameKey: _k, ...user }: ScimUser.Record) => new ScimUser.ScimUser(user, trusted)

    /** The user `id` (its person's uid) of the client's provider, as stored; NotFound for one deleted. */
    const stored = (client: Client, id: string) =>
      Effect.gen(function*() {
        const found = Uid.isUid(id)
          ? yield* users.find({
            conditions: [...live(client.provider.uid), { _tag: "Equals", column: "identityUid", value: id }],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          })
          : []
        const record = found[0]
        if (record === undefined) return yield* new NotFound({ resourceType: "User", uid: id })
        return record
      })

    /** A user as a client wrote it: checked, its attributes without those the server sets. */
    const written = (input: unknown) =>
      Effect.map(Validation.decode(ScimUser.WriteScimUser)(ScimUser.withoutPasswords(input)), (user) => {
        const { active, externalId, userName, ...rest } = user
        const attributes = Object.fromEntries(Object.entries(rest).filter(([key]) => !ScimUser.isIgnored(key)))
        return { active, externalId, userName, attributes, email: ScimUser.emailOf(user) }
      })

    type Written = Effect.Effect.Success<ReturnType<typeof written>>

    const taken = conflict("User", "a user with that userName or externalId exists")

    /** Writes `next` over `record` (or a new user when there is none), its version and update time advanced. */
    const save = (record: ScimUser.Record | undefined, next: Written, provider: Uid.Uid, identityUid: Uid.Uid) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const user: ScimUser.Record = {
          uid: record?.uid ?? Uid.makeChild(provider),
          identityUid,
          externalId: next.externalId,
          userName: next.userName,
          userNameKey: ScimUser.userNameKeyOf(next.userName),
          active: next.active,
          attributes: next.attributes,
          deleted: false,
          version: (record?.version ?? 0) + 1,
          createTime: record === undefined || record.deleted ? now : record.createTime,
          updateTime: now
        }
        if (record === undefined) yield* users.insert(user).pipe(taken)
        else if (record.deleted) {
          yield* users.update(user).pipe(
            taken,
            ChangeLog.typedAs("scim_user", "updated", ScimUser.table.events!.types.created)
          )
        } else yield* users.update(user).pipe(taken)
        return userOf(user)
      })

    /** The `owner` bindings at `organization`. */
    const ownerBindings = (organization: Uid.Uid) =>
      bindings.find({
        conditions: [
          { _tag: "Equals", column: "parent", value: organization },
          { _tag: "Equals", column: "roleUid", value: ownerRole }
        ],
        order: [{ column: "uid", direction: "asc" }]
      })

    /**
     * Whether the organization of `provider` has an active owner: an identity with an owner binding at it that still
     * holds the owner's capabilities there (one its provider deprovisioned does not).
     */
    const hasActiveOwner = (provider: Uid.Uid) =>
      Effect.gen(function*() {
        const organization = Uid.rootOf(provider)
        const owners = yield* ownerBindings(organization)
        for (const uid of new Set(owners.map((b) => b.identityUid))) {
          const grants = yield* ops.authorization.grants(Principal.identity(uid))
          if (grants.holdsAll(ownerCapabilities, organization)) return true
        }
        return false
      })

    /**
     * Runs `body` as one transaction, its writes attributed to the client: `scim:<provider uid>`. A write that would
     * leave the organization with no active owner (deactivating, deleting, or linking then deactivating, each of its
     * owners) is refused and logged: provisioning never locks an organization out, its SCIM settings included.
     */
    const asClient = <A, E, R>(client: Client, body: Effect.Effect<A, E, R>) =>
      commit(
        ops,
        Principal.system,
        ChangeLog.actingAs({ subject: `scim:${client.provider.uid}` })(Effect.gen(function*() {
          const owned = yield* hasActiveOwner(client.provider.uid)
          const result = yield* body
          if (owned && !(yield* hasActiveOwner(client.provider.uid))) {
            yield* Effect.logWarning("a SCIM write was refused: it would leave the organization with no active owner")
              .pipe(Effect.annotateLogs({ identityProvider: client.provider.uid }))
            return yield* new Aborted({
              description: "this change would leave the organization with no active owner; an owner must remain " +
                "whom this provider has not deactivated or deleted",
              reason: "LAST_OWNER"
            })
          }
          return result
        }))
      )

    /** Refuses a replacement that changes `externalId`: it is the person the user is. */
    const sameExternalId = (record: ScimUser.Record, next: Written) =>
      next.externalId === record.externalId
        ? Effect.void
        : Effect.fail(InvalidArgument.field("externalId", "is immutable: it is the person's subject at the provider"))

    /** True once the provider was issued a token (even one revoked or expired since). */
    const hadToken = (config: ScimCredential.Record | undefined) =>
      config !== undefined && (config.tokenDigest !== null || config.revokeTime !== null)

    const neverIssued = (provider: Uid.Uid) => Effect.fail(new NotFound({ resourceType: "SCIM token", uid: provider }))

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
        const owners = yield* ownerBindings(organization)
        const provisioned = new Set(
          (yield* users.find({ conditions: live(provider), order: [{ column: "uid", direction: "asc" }] }))
            .map((u) => u.identityUid)
        )
        const manual = new Set(owners.map((b) => b.identityUid).filter((uid) => !provisioned.has(uid)))
        if (manual.size >= ownersRequired) return
        return yield* new FailedPrecondition({
          summary:
            `enabling SCIM needs at least ${ownersRequired} owners of the organization that it does not provision`,
          violations: [
            new PreconditionViolation({
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
            Effect.orDie,
            ChangeLog.typedAs("scim_credential", existing === undefined ? "created" : "updated", type)
          )
          return answer
        })
      )

    return {
      /** The SCIM status of a provider, as its reads show it. */
      status: (provider: Uid.Uid) =>
        Effect.gen(function*() {
          return ScimCredential.statusOf(yield* configOf(provider), endpointOf(provider), yield* DateTime.now)
        }),

      /**
       * The provider's first token, shown once (`identity_providers.scim.manage` and `identity_providers.list` at
       * its group): FAILED_PRECONDITION when it has had one. Provisioning stays as it was (off at first).
       */
      generateToken: Effect.fnUntraced(function*(principal: Principal.Principal, providerUid: string, input: unknown) {
        const provider = yield* managed(principal, providerUid)
        const request = yield* Validation.decode(ScimCredential.GenerateScimToken)(input)
        return yield* lifecycle(
          principal,
          provider,
          ScimCredential.table.events!.types.created,
          (existing, now) =>
            Effect.gen(function*() {
              if (hadToken(existing)) {
                return yield* new FailedPrecondition({
                  summary: "the identity provider has a SCIM token; regenerate it instead",
                  violations: [
                    new PreconditionViolation({
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
      }, operation("ScimProvisioning.generateToken")),

      /**
       * A new token, shown once, in place of the current one, which keeps working for the overlap asked (an hour by
       * default, a day at most, never past its own expiry) when it still works; NOT_FOUND when the provider never had
       * one, ABORTED when `etag` is not current.
       */
      regenerateToken: Effect.fnUntraced(
        function*(principal: Principal.Principal, providerUid: string, input: unknown) {
          const provider = yield* managed(principal, providerUid)
          const request = yield* Validation.decode(ScimCredential.RegenerateScimToken)(input)
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
        operation("ScimProvisioning.regenerateToken")
      ),

      /** Kills the current and the previous token at once; the switch stays. NOT_FOUND when none was ever issued. */
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
      }, operation("ScimProvisioning.revokeToken")),

      /**
       * Starts or pauses provisioning; ABORTED when `etag` is not current. Enabling needs at least two owner bindings
       * at the organization of identities this provider does not provision (FAILED_PRECONDITION otherwise), so that
       * provisioning can never lock out its only owner.
       */
      setEnabled: Effect.fnUntraced(function*(principal: Principal.Principal, providerUid: string, input: unknown) {
        const provider = yield* managed(principal, providerUid)
        const request = yield* Validation.decode(ScimCredential.SetScimEnabled)(input)
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
      }, operation("ScimProvisioning.setEnabled")),

      /**
       * The client presenting `token` at provider `providerUid`'s endpoint: Unauthenticated unless the token is one the
       * provider's configuration accepts now; PermissionDenied when its provisioning is off.
       */
      authenticate: (providerUid: string, token: string) =>
        operation("ScimProvisioning.authenticate")(Effect.gen(function*() {
          if (!Uid.isUid(providerUid) || !ScimToken.isToken(token)) return yield* unauthenticated()
          const config = yield* configOf(providerUid)
          if (config === undefined || !ScimToken.accepts(config, token, yield* DateTime.now)) {
            return yield* unauthenticated()
          }
          const provider = yield* providers.get(providerUid)
          if (Option.isNone(provider)) return yield* unauthenticated()
          if (!config.enabled) {
            return yield* new PermissionDenied({
              capability: "SCIM provisioning",
              resource: providerUid,
              reason: "SCIM_DISABLED",
              logDetail: "provisioning of this identity provider is not enabled"
            })
          }
          return { provider: provider.value } satisfies Client
        })),

      /**
       * Provisions a user: the person of the provider whose subject is its `externalId`, made now (with the
       * provider's default role) when they have not signed in yet. One deleted before comes back; a `userName` or
       * `externalId` another user has is ALREADY_EXISTS.
       */
      createUser: (client: Client, input: unknown) =>
        operation("ScimProvisioning.createUser")(Effect.gen(function*() {
          const user = yield* written(input)
          const provider = client.provider
          return yield* asClient(
            client,
            Effect.gen(function*() {
              const [existing] = yield* users.find({
                conditions: [
                  { _tag: "Equals", column: "parent", value: provider.uid },
                  { _tag: "Equals", column: "externalId", value: user.externalId }
                ],
                order: [{ column: "uid", direction: "asc" }],
                limit: 1
              })
              if (existing !== undefined && !existing.deleted) {
                return yield* new AlreadyExists({
                  resourceType: "User",
                  description: "a user with that externalId exists"
                })
              }
              const person = yield* people.provision({
                issuer: provider.oidc.issuer,
                subject: user.externalId,
                email: user.email,
                emailVerified: false,
                name: typeof user.attributes.displayName === "string" ? user.attributes.displayName : user.userName
              }, { provider })
              return yield* save(existing, user, provider.uid, person.uid)
            })
          )
        })),

      getUser: (client: Client, id: string) =>
        operation("ScimProvisioning.getUser")(Effect.map(stored(client, id), userOf)),

      /** The provider's users, oldest first, those the filter names only; with how many match in all. */
      listUsers: (client: Client, filter: Filter | undefined, page: Page) =>
        operation("ScimProvisioning.listUsers")(Effect.gen(function*() {
          const conditions: ReadonlyArray<Condition> = [
            ...live(client.provider.uid),
            ...(filter === undefined ? [] : [{
              _tag: "Equals" as const,
              column: filter.attribute === "userName" ? "userNameKey" : "externalId",
              value: filter.attribute === "userName" ? ScimUser.userNameKeyOf(filter.value) : filter.value
            }])
          ]
          const total = yield* users.count({ conditions })
          const found = page.count === 0 ? [] : yield* users.find({
            conditions,
            order: [{ column: "createTime", direction: "asc" }, { column: "uid", direction: "asc" }],
            offset: Math.max(0, page.startIndex - 1),
            limit: Math.min(page.count, maxPageSize)
          })
          return { total, users: found.map(userOf) }
        })),

      /** Replaces a user's attributes (RFC 7644 §3.5.1); its `externalId` cannot change. */
      replaceUser: (client: Client, id: string, input: unknown) =>
        operation("ScimProvisioning.replaceUser")(Effect.gen(function*() {
          const next = yield* written(input)
          return yield* asClient(
            client,
            Effect.gen(function*() {
              const record = yield* stored(client, id)
              yield* sameExternalId(record, next)
              return yield* save(record, next, client.provider.uid, record.identityUid)
            })
          )
        })),

      /**
       * Changes a user by `apply`, which the edge makes of a PATCH request (RFC 7644 §3.5.2): it is given the user
       * as stored, and what it returns is checked as a replacement is.
       */
      patchUser: <E>(client: Client, id: string, apply: (user: ScimUser.ScimUser) => Effect.Effect<unknown, E>) =>
        operation("ScimProvisioning.patchUser")(
          asClient(
            client,
            Effect.gen(function*() {
              const record = yield* stored(client, id)
              const next = yield* written(yield* apply(userOf(record)))
              yield* sameExternalId(record, next)
              return yield* save(record, next, client.provider.uid, record.identityUid)
            })
          )
        ),

      /**
       * Deletes a user: gone from SCIM, and its person can no longer sign in through the provider nor hold anything
       * in its organization, until the client creates the user again.
       */
      deleteUser: (client: Client, id: string) =>
        operation("ScimProvisioning.deleteUser")(
          asClient(
            client,
            Effect.gen(function*() {
              const record = yield* stored(client, id)
              const now = yield* DateTime.now
              yield* users.update({
                ...record,
                deleted: true,
                active: false,
                userNameKey: ScimUser.deletedKey(record.uid),
                version: record.version + 1,
                updateTime: now
              }).pipe(Effect.orDie, ChangeLog.typedAs("scim_user", "updated", ScimUser.table.events!.types.deleted))
            })
          )
        ),

      /** True when provider `providerUid` provisioned the person `subject` and has since deactivated or deleted them. */
      refuses: (providerUid: Uid.Uid, subject: string) =>
        Effect.map(
          users.find({
            conditions: [
              { _tag: "Equals", column: "parent", value: providerUid },
              { _tag: "Equals", column: "externalId", value: subject },
              { _tag: "Equals", column: "active", value: false }
            ],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          }),
          (found) => found.length > 0
        )
    }
  })
}) {}
