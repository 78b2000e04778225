/**
 * The wire format (docs/api.md §2, §9): the JSON shape of every resource in v2beta1 and in v1, each a `Schema` from
 * that JSON to the engine's own resource class. A server encodes what the engine returns through them; a client
 * decodes responses through them into the same classes. Times are RFC 3339 UTC with milliseconds; v1 renames `uid`,
 * `createTime` and `updateTime` to `id`, `createdAt` and `updatedAt` and spells capabilities dotted, v2 as enum names.
 */
import { AccountAssociation as CoreAccountAssociation, Amazon, Azure, Google } from "@arbor/core/AccountAssociation"
import * as AccountAssociationCheck from "@arbor/core/AccountAssociationCheck"
import { Advisory as CoreAdvisory, eventOf, EventType } from "@arbor/core/Advisory"
import * as Capability from "@arbor/core/Capability"
import * as ChangeLog from "@arbor/core/ChangeLog"
import { ClaimMatch, StaticKeys as CoreStaticKeys } from "@arbor/core/ClaimMatch"
import { Condition as CoreCondition } from "@arbor/core/Condition"
import * as CoreDecisionVocabulary from "@arbor/core/DecisionVocabulary"
import { Elevation as CoreElevation, State as ElevationState } from "@arbor/core/Elevation"
import { Eligibility as CoreEligibility } from "@arbor/core/Eligibility"
import { ExternalGroupRoleMapping as CoreExternalGroupRoleMapping } from "@arbor/core/ExternalGroupRoleMapping"
import { Group as CoreGroup } from "@arbor/core/Group"
import { GroupAccessRequest as CoreGroupAccessRequest } from "@arbor/core/GroupAccessRequest"
import { GroupInvite as CoreGroupInvite } from "@arbor/core/GroupInvite"
import { Identity as CoreIdentity } from "@arbor/core/Identity"
import { IdentityMetadata as CoreIdentityMetadata } from "@arbor/core/IdentityMetadata"
import { IdentityProvider as CoreIdentityProvider, Oidc } from "@arbor/core/IdentityProvider"
import { CatalogTier, Repo as CoreRepo } from "@arbor/core/Repo"
import { RepoReadme as CoreRepoReadme } from "@arbor/core/RepoReadme"
import { Role as CoreRole } from "@arbor/core/Role"
import { RoleBinding as CoreRoleBinding, stateAt as bindingStateAt } from "@arbor/core/RoleBinding"
import * as ScimCredential from "@arbor/core/ScimCredential"
import { ScimGroup as CoreScimGroup } from "@arbor/core/ScimGroup"
import { ScimUser as CoreScimUser } from "@arbor/core/ScimUser"
import { Health as CoreSubscriptionHealth, Subscription as CoreSubscription } from "@arbor/core/Subscription"
import { Tag as CoreTag } from "@arbor/core/Tag"
import { TermsAcceptance as CoreTermsAcceptance } from "@arbor/core/TermsAcceptance"
import { Uid as CoreUid } from "@arbor/core/Uid"
import * as DateTime from "effect/DateTime"
import * as EffectDuration from "effect/Duration"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"

/** A time: RFC 3339 UTC with milliseconds. */
export const Time = Schema.DateTimeUtc.annotations({
  jsonSchema: { type: "string", format: "date-time", description: "RFC 3339 UTC with milliseconds" }
})

/** A duration as protobuf's JSON writes one: seconds, with up to nine decimals, and `s` (`"3600s"`). */
export const Duration = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^\d{1,12}(\.\d{1,9})?s$/)),
  Schema.DurationFromSelf,
  {
    strict: true,
    decode: (json) => EffectDuration.millis(Number(json.slice(0, -1)) * 1000),
    encode: (duration) => `${EffectDuration.toMillis(duration) / 1000}s`
  }
).annotations({ jsonSchema: { type: "string", description: "seconds and 's', as \"3600s\"" } })

/** A uid (docs/api.md §1). */
export const Uid = CoreUid.annotations({
  jsonSchema: { type: "string", description: "hierarchical uid: 40 hex characters, then '/' and 16 per level" }
})

const Strings = Schema.Array(Schema.String)
const Reference = Schema.Struct({ uid: Uid, name: Schema.String, description: Schema.String })
const times = { createTime: Time, updateTime: Time }

const v1Names = { uid: "id", createTime: "createdAt", updateTime: "updatedAt" } as const
type V1Name = keyof typeof v1Names

/** A struct's fields with the keys v1 renames taking their v1 names on the wire; the decoded keys stay. */
export type V1Fields<F extends Schema.Struct.Fields> = {
  readonly [K in keyof F]: K extends V1Name ? F[K] extends Schema.Schema.All ? Schema.PropertySignature<
        ":",
        Schema.Schema.Type<F[K]>,
        typeof v1Names[K],
        ":",
        Schema.Schema.Encoded<F[K]>,
        false,
        Schema.Schema.Context<F[K]>
      >
    : F[K]
    : F[K]
}

const v1Fields = <F extends Schema.Struct.Fields>(fields: F): V1Fields<F> =>
  Object.fromEntries(
    Object.entries(fields).map(([key, field]) =>
      key in v1Names && Schema.isSchema(field)
        ? [key, Schema.propertySignature(field).pipe(Schema.fromKey(v1Names[key as V1Name]))]
        : [key, field]
    )
  ) as V1Fields<F>

/** One shape of a resource on the wire, from its JSON to the engine's class. */
const shape = <A, T, I, R>(
  identifier: string,
  target: Schema.Schema<A>,
  struct: Schema.Schema<T, I, R>,
  decode: (wire: T) => A,
  encode: (value: A) => T
): Schema.Schema<A, I, R> =>
  Schema.transform(struct, target, { strict: true, decode, encode }).annotations({ identifier })

/** A resource's two shapes: v2beta1 and v1. */
export interface Resource<A, V2, V1, R = never> {
  readonly v2: Schema.Schema<A, V2, R>
  readonly v1: Schema.Schema<A, V1, R>
}

/** A resource whose v1 shape is its v2 shape with v1's names. */
const resource = <A, F extends Schema.Struct.Fields>(
  identifier: string,
  target: Schema.Schema<A>,
  fields: F,
  decode: (wire: Schema.Schema.Type<Schema.Struct<F>>) => A,
  encode: (value: A) => Schema.Schema.Type<Schema.Struct<F>>
): Resource<
  A,
  Schema.Schema.Encoded<Schema.Struct<F>>,
  Schema.Schema.Encoded<Schema.Struct<V1Fields<F>>>,
  Schema.Struct.Context<F> | Schema.Struct.Context<V1Fields<F>>
> => ({
  v2: shape(identifier, target, Schema.Struct(fields), decode, encode),
  // `fromKey` renames only the keys on the wire: decoded, a v1 shape is its v2 shape.
  v1: shape(
    `${identifier}V1`,
    target,
    // The same values under the same keys, which the type system cannot see through `V1Fields`: a declared identity.
    Schema.transform(Schema.Struct(v1Fields(fields)), Schema.typeSchema(Schema.Struct(fields)), {
      strict: false,
      decode: (decoded) => decoded,
      encode: (value) => value
    }),
    decode,
    encode
  )
})

export const Group = resource(
  "Group",
  Schema.typeSchema(CoreGroup),
  {
    uid: Uid,
    name: Schema.String,
    description: Schema.String,
    resourceLimits: Schema.Record({ key: Schema.String, value: Schema.Number }),
    verified: Schema.Boolean,
    ...times
  },
  ({ resourceLimits: _, ...group }) => new CoreGroup(group, true),
  (group) => ({ ...group, resourceLimits: {} })
)

const StaticKeys = Schema.Struct({ ...CoreStaticKeys.fields, expirationTime: Time })

export const Identity = resource(
  "Identity",
  Schema.typeSchema(CoreIdentity),
  {
    uid: Uid,
    name: Schema.String,
    description: Schema.String,
    claimMatch: Schema.optionalWith(ClaimMatch, { exact: true }),
    staticKeys: Schema.optionalWith(StaticKeys, { exact: true }),
    email: Schema.optionalWith(Schema.String, { exact: true }),
    emailUnverified: Schema.optionalWith(Schema.String, { exact: true }),
    lastSeenTime: Time,
    ...times
  },
  (identity) => new CoreIdentity(identity, true),
  (identity) => identity
)

/** A capability as a v2 enum name (`CAP_IAM_GROUPS_LIST`); either spelling decodes. */
const CapabilityName = Schema.transformOrFail(Schema.String, Schema.typeSchema(Capability.Capability), {
  strict: true,
  decode: (name) => ParseResult.decodeUnknown(Capability.Capability)(name),
  encode: (capability) => ParseResult.succeed(Capability.toEnumName(capability))
}).annotations({ jsonSchema: { type: "string", description: "a capability's enum name, CAP_…" } })

const roleFields = { uid: Uid, name: Schema.String, description: Schema.String, ...times }
const toRole = (role: Schema.Struct.Type<typeof roleFields> & Pick<CoreRole, "capabilities">) =>
  new CoreRole(role, true)

export const Role: Resource<
  CoreRole,
  Schema.Struct.Encoded<typeof roleFields> & { readonly capabilities: ReadonlyArray<string> },
  Schema.Struct.Encoded<V1Fields<typeof roleFields>> & { readonly capabilities: ReadonlyArray<string> }
> = {
  v2: shape(
    "Role",
    Schema.typeSchema(CoreRole),
    Schema.Struct({ ...roleFields, capabilities: Schema.Array(CapabilityName) }),
    toRole,
    (role) => role
  ),
  v1: shape(
    "RoleV1",
    Schema.typeSchema(CoreRole),
    Schema.Struct({
      ...v1Fields(roleFields),
      capabilities: Schema.Array(Capability.Capability.annotations({
        jsonSchema: { type: "string", description: "a capability's dotted name" }
      }))
    }),
    toRole,
    (role) => role
  )
}

/** A role binding's condition (as Google Cloud IAM's `Expr`): a CEL expression, and words for people. */
export const Condition = Schema.Struct({
  expression: Schema.String.annotations({ description: "a CEL expression that must be true (docs/api.md §15)" }),
  title: Schema.optionalWith(Schema.String, { default: () => "" }),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
}).annotations({ identifier: "Condition", description: "where a role binding grants" })

/** The wire has no `updateTime` for a binding: decoded, it is the create time. */
export const RoleBinding = resource(
  "RoleBinding",
  Schema.typeSchema(CoreRoleBinding),
  {
    uid: Uid,
    identity: Schema.Struct({ ...Reference.fields, subject: Schema.String, issuer: Schema.String }),
    group: Reference,
    role: Reference,
    startTime: Schema.optionalWith(Time, { exact: true }).annotations({
      description: "when it starts to grant (absent: from its creation); Arbor's own, field 1000 in gRPC"
    }),
    expireTime: Schema.optionalWith(Time, { exact: true }).annotations({
      description: "when it stops granting (absent: never); Arbor's own, field 1001 in gRPC"
    }),
    state: Schema.optionalWith(Schema.Literal("PENDING", "ENDED"), { exact: true }).annotations({
      description: "output only: PENDING before startTime, ENDED from expireTime (absent: granting)"
    }),
    condition: Schema.optionalWith(Condition, { exact: true }).annotations({
      description: "where it grants: only where this CEL expression holds (absent: everywhere in its group); " +
        "Arbor's own, field 1003 in gRPC"
    }),
    createTime: Time
  },
  ({ condition, expireTime, startTime, state: _, ...binding }) =>
    new CoreRoleBinding({
      ...binding,
      startTime: startTime ?? null,
      expireTime: expireTime ?? null,
      condition: condition === undefined ? null : new CoreCondition(condition, true),
      updateTime: binding.createTime
    }, true),
  ({ condition, expireTime, startTime, ...binding }) => {
    // Read only from times (a value that holds something else is refused by the encoding after this).
    const time = (value: unknown) => DateTime.isDateTime(value) && DateTime.isUtc(value) ? value : null
    const state = bindingStateAt({ expireTime: time(expireTime), startTime: time(startTime) }, Date.now())
    return {
      ...binding,
      ...(startTime === null ? {} : { startTime }),
      ...(expireTime === null ? {} : { expireTime }),
      ...(state === "ACTIVE" ? {} : { state }),
      ...(condition === null ? {} : { condition: { ...condition } })
    }
  }
)

/** SCIM credential states by their protos' enum spelling (`CREDENTIAL_STATE_LIVE`). */
const credentialStates = {
  CREDENTIAL_STATE_NOT_ISSUED: "NOT_ISSUED",
  CREDENTIAL_STATE_LIVE: "LIVE",
  CREDENTIAL_STATE_EXPIRED: "EXPIRED",
  CREDENTIAL_STATE_REVOKED: "REVOKED",
  CREDENTIAL_STATE_ROTATING: "ROTATING"
} as const satisfies Record<string, ScimCredential.CredentialState>

/** A SCIM credential's state in the protos' enum spelling. */
const CredentialState = Schema.transform(
  Schema.Literal(...Struct.keys(credentialStates)),
  ScimCredential.CredentialState,
  {
    strict: true,
    decode: (state) => credentialStates[state],
    encode: (state) => `CREDENTIAL_STATE_${state}` as const
  }
)

/** An identity provider's SCIM provisioning status (output only; on a get, not in a list). */
export const ScimStatus = shape(
  "IdentityProviderScim",
  Schema.typeSchema(ScimCredential.Status),
  Schema.Struct({
    enabled: Schema.Boolean,
    endpointUrl: Schema.String.annotations({ description: "where the provider's SCIM client sends its requests" }),
    tokenExpireTime: Schema.optionalWith(Time, { exact: true }),
    previousTokenExpireTime: Schema.optionalWith(Time, { exact: true }),
    credentialState: CredentialState,
    etag: Schema.String.annotations({ description: "what RegenerateScimToken and SetScimEnabled must name" })
  }),
  (status) => new ScimCredential.Status(status, true),
  (status) => status
)

export const IdentityProvider = resource(
  "IdentityProvider",
  Schema.typeSchema(CoreIdentityProvider),
  {
    uid: Uid,
    name: Schema.String,
    description: Schema.String,
    defaultRole: Uid,
    oidc: Oidc,
    ...times,
    scim: Schema.optionalWith(ScimStatus, { exact: true })
  },
  (provider) => new CoreIdentityProvider(provider, true),
  (provider) => provider
)

export const AccountAssociation = resource(
  "AccountAssociation",
  Schema.typeSchema(CoreAccountAssociation),
  {
    uid: Uid,
    name: Schema.String,
    description: Schema.String,
    amazon: Schema.optionalWith(Schema.encodedSchema(Amazon), { exact: true }),
    google: Schema.optionalWith(Schema.encodedSchema(Google), { exact: true }),
    azure: Schema.optionalWith(Schema.encodedSchema(Azure), { exact: true }),
    ...times
  },
  (association) => new CoreAccountAssociation(association, true),
  (association) => association
)

export const GroupInvite = resource(
  "GroupInvite",
  Schema.typeSchema(CoreGroupInvite),
  {
    uid: Uid,
    roleUid: Uid,
    role: Reference,
    email: Schema.optional(Schema.String),
    expirationTime: Time,
    singleUse: Schema.Boolean,
    keyId: Schema.String,
    code: Schema.optional(Schema.String.annotations({ description: "returned once, by create" })),
    ...times
  },
  (invite) => new CoreGroupInvite(invite, true),
  (invite) => invite
)

export const Repo = resource(
  "Repo",
  Schema.typeSchema(CoreRepo),
  {
    uid: Uid,
    name: Schema.String,
    description: Schema.String,
    catalogTier: CatalogTier,
    bundles: Strings,
    aliases: Strings,
    activeTags: Strings,
    ...times
  },
  (repo) => new CoreRepo(repo, true),
  (repo) => repo
)

export const Tag = resource(
  "Tag",
  Schema.typeSchema(CoreTag),
  { uid: Uid, name: Schema.String, digest: Schema.String, deprecated: Schema.Boolean, ...times },
  (tag) => new CoreTag(tag, true),
  (tag) => tag
)

/** How a subscription's deliveries stand (output only). */
const SubscriptionHealth = Schema.Struct({
  state: Schema.Literal("ACTIVE", "FAILING", "STOPPED").annotations({
    description:
      "ACTIVE: delivering, or nothing to deliver; FAILING: its sink fails and is retried; STOPPED: see reason"
  }),
  reason: Schema.optional(Schema.String).annotations({ description: "why deliveries stopped" }),
  lastDeliveredTime: Schema.optional(Time).annotations({ description: "when an entry was last delivered" }),
  failingSince: Schema.optional(Time).annotations({ description: "since when the next entry has failed" }),
  lastError: Schema.optional(Schema.String).annotations({ description: "why the last delivery failed" }),
  nextRetryTime: Schema.optional(Time).annotations({ description: "when the failing entry is tried again" }),
  sendingSince: Schema.optional(Time).annotations({
    description: "since when the entry being sent has waited for its sink's answer; absent when none is in flight"
  }),
  pending: Schema.Number.annotations({ description: "entries waiting to be delivered" })
}).annotations({ identifier: "SubscriptionHealth" })

export const Subscription = resource(
  "Subscription",
  Schema.typeSchema(CoreSubscription),
  {
    uid: Uid,
    sink: Schema.String.annotations({ description: "where entries are delivered: an https URL" }),
    createdBy: Schema.optional(Uid).annotations({
      description: "the identity whose authority its deliveries rest on (absent: the system); output only"
    }),
    health: Schema.optional(SubscriptionHealth).annotations({
      description: "how its deliveries stand; output only"
    }),
    ...times
  },
  ({ createdBy, health, ...subscription }) =>
    new CoreSubscription({
      ...subscription,
      createdBy: createdBy ?? null,
      ...(health === undefined ? {} : { health: new CoreSubscriptionHealth(health, true) })
    }, true),
  ({ createdBy, ...subscription }) => ({ ...subscription, ...(createdBy === null ? {} : { createdBy }) })
)

/** A group's acceptance of a legal document (v2beta1 only; its proto message has no uid, which REST adds). */
export const TermsAcceptance = shape(
  "TermsAcceptance",
  Schema.typeSchema(CoreTermsAcceptance),
  Schema.Struct({
    uid: Uid,
    docId: Schema.String.annotations({ description: "the document's id" }),
    acceptedBy: Schema.String.annotations({ description: "the uid of the identity that accepted it" }),
    orgUid: Uid.annotations({ description: "the group that accepted it" }),
    createTime: Time
  }),
  (acceptance) => new CoreTermsAcceptance(acceptance, true),
  (acceptance) => acceptance
)

/** The caller's own metadata (`UpdateIdentityMetadata`): names from the identity, the rest as the caller set it. */
export const IdentityMetadata = shape(
  "IdentityMetadata",
  Schema.typeSchema(CoreIdentityMetadata),
  Schema.Struct({
    uid: Uid,
    name: Schema.String,
    givenName: Schema.String,
    familyName: Schema.String,
    company: Schema.String,
    updatesOptIn: Schema.Boolean,
    product: Schema.String,
    jobTitle: Schema.String,
    utmCampaign: Schema.String,
    utmContent: Schema.String,
    utmMedium: Schema.String,
    utmSource: Schema.String,
    utmTerm: Schema.String,
    latestFormSubmitUrl: Schema.String,
    latestInternalReferringUrl: Schema.String,
    selfServe: Schema.Boolean
  }),
  (metadata) => new CoreIdentityMetadata(metadata, true),
  (metadata) => metadata
)

/** A repo's README: Markdown. */
export const RepoReadme = shape(
  "RepoReadme",
  Schema.typeSchema(CoreRepoReadme),
  Schema.Struct({
    uid: Uid.annotations({ description: "the repo's uid" }),
    content: Schema.String.annotations({ description: "Markdown; empty when the repo has no README" })
  }),
  (readme) => new CoreRepoReadme(readme, true),
  (readme) => readme
)

/** An identity provider's group mapped to a role at a group (v2beta1 only). */
export const ExternalGroupRoleMapping = shape(
  "ExternalGroupRoleMapping",
  Schema.typeSchema(CoreExternalGroupRoleMapping),
  Schema.Struct({
    uid: Uid,
    identityProviderUid: Uid,
    externalGroupId: Schema.String.annotations({ description: "a value of the provider's groups claim" }),
    roleUid: Uid,
    scope: Uid.annotations({ description: "the group where the role applies" }),
    createTime: Time
  }),
  (mapping) => new CoreExternalGroupRoleMapping(mapping, true),
  (mapping) => mapping
)

/** A duration in whole seconds as protobuf's JSON writes one (`"3600s"`). */
const Seconds = Schema.String.pipe(Schema.pattern(/^\d+s$/)).annotations({ description: "whole seconds: \"3600s\"" })
const secondsOf = (text: string) => Number(text.slice(0, -1))

/** An eligibility (docs/api.md §2): an identity that may elevate to a role at a group, for at most a while. */
export const Eligibility = shape(
  "Eligibility",
  Schema.typeSchema(CoreEligibility),
  Schema.Struct({
    uid: Uid,
    identityUid: Uid,
    roleUid: Uid,
    maxDuration: Seconds.annotations({ description: "the longest one elevation may last" }),
    approverRoleUid: Schema.optionalWith(Uid, { exact: true }).annotations({
      description: "the role whose holders at the group approve its elevations (absent: none needed)"
    }),
    ...times
  }),
  ({ approverRoleUid, maxDuration, ...eligibility }) =>
    new CoreEligibility({
      ...eligibility,
      maxDurationSeconds: secondsOf(maxDuration),
      approverRoleUid: approverRoleUid ?? null
    }, true),
  ({ approverRoleUid, maxDurationSeconds, ...eligibility }) => ({
    ...eligibility,
    maxDuration: `${maxDurationSeconds}s`,
    ...(approverRoleUid === null ? {} : { approverRoleUid })
  })
)

/** An elevation (docs/api.md §2): an identity's request, with a reason, to hold its eligibility's role for a while. */
export const Elevation = shape(
  "Elevation",
  Schema.typeSchema(CoreElevation),
  Schema.Struct({
    uid: Uid,
    eligibilityUid: Uid,
    identityUid: Uid.annotations({ description: "who asked" }),
    roleUid: Uid,
    reason: Schema.String,
    duration: Seconds,
    state: ElevationState,
    approverUid: Schema.optionalWith(Uid, { exact: true }).annotations({ description: "who approved or denied it" }),
    bindingUid: Schema.optionalWith(Uid, { exact: true }).annotations({ description: "the binding it made" }),
    expireTime: Schema.optionalWith(Time, { exact: true }).annotations({ description: "when what it grants ends" }),
    ...times
  }),
  ({ approverUid, bindingUid, duration, expireTime, ...elevation }) =>
    new CoreElevation({
      ...elevation,
      durationSeconds: secondsOf(duration),
      approverUid: approverUid ?? null,
      bindingUid: bindingUid ?? null,
      expireTime: expireTime ?? null
    }, true),
  ({ approverUid, bindingUid, durationSeconds, expireTime, ...elevation }) => ({
    ...elevation,
    duration: `${durationSeconds}s`,
    ...(approverUid === null ? {} : { approverUid }),
    ...(bindingUid === null ? {} : { bindingUid }),
    ...(expireTime === null ? {} : { expireTime })
  })
)

/** A person's request for access to a verified organization, as its change-log entry carries it. */
export const GroupAccessRequest = shape(
  "GroupAccessRequest",
  Schema.typeSchema(CoreGroupAccessRequest),
  Schema.Struct({
    uid: Uid,
    requester: Uid.annotations({ description: "the uid of the person's identity" }),
    email: Schema.String.annotations({ description: "their verified email" }),
    createTime: Time
  }),
  (request) => new CoreGroupAccessRequest(request, true),
  (request) => request
)

/** An account association's check (`CheckAccountAssociationResponse`), its status in the protos' spelling. */
export const AccountAssociationCheckResult = shape(
  "CheckAccountAssociationResponse",
  Schema.typeSchema(AccountAssociationCheck.CheckResult),
  Schema.Struct({
    status: Schema.Literal("CHECK_STATUS_READY", "CHECK_STATUS_NOT_READY"),
    reason: Schema.String.annotations({
      description: "a short reason code: not configured, error exchanging credentials"
    }),
    message: Schema.String.annotations({ description: "the cloud's own words, if any" })
  }),
  (result) =>
    new AccountAssociationCheck.CheckResult({
      ...result,
      status: result.status === "CHECK_STATUS_READY" ? "READY" : "NOT_READY"
    }, true),
  (result) => ({
    reason: result.reason,
    message: result.message,
    status: result.status === "READY" ? "CHECK_STATUS_READY" as const : "CHECK_STATUS_NOT_READY" as const
  })
)

/** A provider's SCIM configuration, as its change-log entries carry it: no digest. */
export const ScimCredentialChange = shape(
  "ScimCredentialChange",
  Schema.typeSchema(ScimCredential.Logged),
  Schema.Struct({
    identityProviderUid: Uid,
    enabled: Schema.Boolean,
    tokenExpireTime: Schema.NullOr(Time),
    previousTokenExpireTime: Schema.NullOr(Time),
    revokeTime: Schema.NullOr(Time),
    etag: Schema.String,
    updateTime: Time
  }),
  (change) => new ScimCredential.Logged(change, true),
  (change) => change
)

/** A user a provider's SCIM client provisioned, as its change-log entries carry it. */
export const ScimUser = shape(
  "ScimUser",
  Schema.typeSchema(CoreScimUser),
  Schema.Struct({
    uid: Uid,
    identityUid: Uid.annotations({ description: "the person's identity: the user's SCIM id" }),
    externalId: Schema.String,
    userName: Schema.String,
    active: Schema.Boolean,
    attributes: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    version: Schema.Int,
    ...times
  }),
  (user) => new CoreScimUser(user, true),
  (user) => user
)

/** A group a provider's SCIM client pushed, as its change-log entries carry it. */
export const ScimGroup = shape(
  "ScimGroup",
  Schema.typeSchema(CoreScimGroup),
  Schema.Struct({
    uid: Uid.annotations({ description: "the group's SCIM id" }),
    displayName: Schema.String,
    externalId: Schema.NullOr(Schema.String),
    members: Schema.Array(Uid).annotations({ description: "the identities of its members: their users' SCIM ids" }),
    version: Schema.Int,
    ...times
  }),
  (group) => new CoreScimGroup(group, true),
  (group) => group
)

/**
 * An organization's decision vocabulary (docs/api.md §14): its subject types, action names and resource types, its
 * `etag` the version a replacement may name.
 */
export const DecisionVocabulary = shape(
  "DecisionVocabulary",
  Schema.typeSchema(CoreDecisionVocabulary.DecisionVocabulary),
  Schema.Struct({
    uid: Uid.annotations({ description: "the organization's" }),
    subjects: Schema.Record({ key: Schema.String, value: CoreDecisionVocabulary.SubjectRule }),
    actions: Schema.Record({ key: Schema.String, value: Capability.Capability }),
    resources: Schema.Record({ key: Schema.String, value: CoreDecisionVocabulary.ResourceRule }),
    etag: Schema.String,
    updateTime: Time
  }),
  ({ etag, ...vocabulary }) =>
    new CoreDecisionVocabulary.DecisionVocabulary({ ...vocabulary, version: Number(etag) }, true),
  ({ version, ...vocabulary }) => ({ ...vocabulary, etag: String(version) })
)

/** An advisory event: its type, its time, and the data of its type under the type's camelCase name. */
const Event = eventOf(Time)

export const Advisory = resource(
  "Advisory",
  Schema.typeSchema(CoreAdvisory),
  {
    uid: Uid,
    advisoryId: Schema.String,
    packageName: Schema.String,
    aliases: Strings,
    events: Schema.Array(Event),
    latestEventType: EventType,
    ...times
  },
  (advisory) => new CoreAdvisory(advisory, true),
  (advisory) => advisory
)

type Fields = ChangeLog.Fields

/** A body re-encoded from one form of a resource to another; as it is, should it not decode. */
const across = <A, X, Y extends Fields>(from: Schema.Schema<A, X>, to: Schema.Schema<A, Y>) => (body: Fields): Fields =>
  Either.getOrElse(Either.flatMap(Schema.decodeUnknownEither(from)(body), Schema.encodeEither(to)), () => body)

/** How a kind's bodies travel: the log keeps the engine's encoded form of its class, the wire its v2 JSON. */
const bodies = <A, I extends Fields, J extends Fields>(engine: Schema.Schema<A, I>, wire: Schema.Schema<A, J>) => ({
  toWire: across(engine, wire),
  fromWire: across(wire, engine)
})

const bodiesByKind: { readonly [K in ChangeLog.ResourceKind]: ReturnType<typeof bodies> } = {
  group: bodies(CoreGroup, Group.v2),
  identity: bodies(CoreIdentity, Identity.v2),
  role: bodies(CoreRole, Role.v2),
  role_binding: bodies(CoreRoleBinding, RoleBinding.v2),
  identity_provider: bodies(CoreIdentityProvider, IdentityProvider.v2),
  account_association: bodies(CoreAccountAssociation, AccountAssociation.v2),
  group_invite: bodies(CoreGroupInvite, GroupInvite.v2),
  repo: bodies(CoreRepo, Repo.v2),
  tag: bodies(CoreTag, Tag.v2),
  advisory: bodies(CoreAdvisory, Advisory.v2),
  subscription: bodies(CoreSubscription, Subscription.v2),
  terms_acceptance: bodies(CoreTermsAcceptance, TermsAcceptance),
  // These two are the same in the engine and on the wire.
  identity_metadata: { toWire: (body) => body, fromWire: (body) => body },
  repo_readme: { toWire: (body) => body, fromWire: (body) => body },
  group_access_request: bodies(CoreGroupAccessRequest, GroupAccessRequest),
  external_group_role_mapping: bodies(CoreExternalGroupRoleMapping, ExternalGroupRoleMapping),
  eligibility: bodies(CoreEligibility, Eligibility),
  elevation: bodies(CoreElevation, Elevation),
  scim_credential: bodies(ScimCredential.Logged, ScimCredentialChange),
  scim_user: bodies(CoreScimUser, ScimUser),
  scim_group: bodies(CoreScimGroup, ScimGroup),
  decision_vocabulary: bodies(CoreDecisionVocabulary.DecisionVocabulary, DecisionVocabulary)
}

/** An entry of the change log (docs/api.md §12): its body the resource's v2 JSON. */
export const ChangeEntry = shape(
  "ChangeEntry",
  Schema.typeSchema(ChangeLog.Entry),
  Schema.Struct({
    id: Schema.String.annotations({ description: "unique; the CloudEvent id of its deliveries" }),
    cursor: Schema.String.annotations({ description: "where the entry stands in the log: watch from it with after=" }),
    type: Schema.String.annotations({ description: "the CloudEvent type (dev.chainguard.api.iam.group.created.v1)" }),
    kind: ChangeLog.ResourceKind,
    subject: Uid.annotations({ description: "the resource's uid" }),
    group: Uid.annotations({ description: "the group the resource lives in; for a group, itself" }),
    time: Time,
    actor: ChangeLog.Actor,
    requestId: Schema.optional(Schema.String.annotations({ description: "the x-request-id of the write's answer" })),
    body: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
      description: "the resource after the write (before it, for a delete), as its v2 JSON"
    }),
    before: Schema.optional(
      Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
        description: "for an update, the resource before it, as body is written: what changed is where they differ"
      })
    )
  }),
  ({ before, cursor, ...entry }) =>
    new ChangeLog.Entry({
      ...entry,
      position: cursor,
      body: bodiesByKind[entry.kind].fromWire(entry.body),
      ...(before === undefined ? {} : { before: bodiesByKind[entry.kind].fromWire(before) })
    }, true),
  ({ before, position, ...entry }) => ({
    ...entry,
    cursor: position,
    body: bodiesByKind[entry.kind].toWire(entry.body),
    ...(before === undefined ? {} : { before: bodiesByKind[entry.kind].toWire(before) })
  })
)

/** An integer as a string, as JSON renders 64-bit integers. */
const Count = Schema.NumberFromString.annotations({
  jsonSchema: { type: "string", pattern: "^[0-9]+$", description: "an integer, as a string" }
})

/** The v2 list envelope: items under the plural, the next token when there are more, counts. */
export const listEnvelope = <const P extends string, A, I>(plural: P, item: Schema.Schema<A, I>) =>
  Schema.Struct({
    ...({ [plural]: Schema.Array(item) } as { readonly [K in P]: Schema.Array$<Schema.Schema<A, I>> }),
    nextPageToken: Schema.optional(Schema.String),
    totalCount: Count,
    skipped: Schema.Number
  })

/** The v1 list envelope: every match under `items`. */
export const itemsEnvelope = <A, I>(item: Schema.Schema<A, I>) => Schema.Struct({ items: Schema.Array(item) })
