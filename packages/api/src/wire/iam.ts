/**
 * The IAM resources on the wire (`Wire`): groups, identities, roles, bindings, providers and the rest.
 */
import { AccountAssociation as CoreAccountAssociation, Amazon, Azure, Google } from "@arbor/core/AccountAssociation"
import * as AccountAssociationCheck from "@arbor/core/AccountAssociationCheck"
import * as Capability from "@arbor/core/Capability"
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
import { Role as CoreRole } from "@arbor/core/Role"
import { RoleBinding as CoreRoleBinding, stateAt as bindingStateAt } from "@arbor/core/RoleBinding"
import * as ScimCredential from "@arbor/core/ScimCredential"
import { ScimGroup as CoreScimGroup } from "@arbor/core/ScimGroup"
import { ScimUser as CoreScimUser } from "@arbor/core/ScimUser"
import { Health as CoreSubscriptionHealth, Subscription as CoreSubscription } from "@arbor/core/Subscription"
import { TermsAcceptance as CoreTermsAcceptance } from "@arbor/core/TermsAcceptance"
import * as DateTime from "effect/DateTime"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"

import { Reference, type Resource, resource, shape, Time, times, Uid, type V1Fields, v1Fields } from "./shapes.js"

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
    elevationUid: Schema.optionalWith(Uid, { exact: true }).annotations({
      description: "output only: the elevation that made it, through which alone it changes (absent: none); " +
        "Arbor's own, field 1004 in gRPC"
    }),
    createTime: Time
  },
  ({ condition, elevationUid, expireTime, startTime, state: _, ...binding }) =>
    new CoreRoleBinding({
      ...binding,
      startTime: startTime ?? null,
      expireTime: expireTime ?? null,
      condition: condition === undefined ? null : new CoreCondition(condition, true),
      elevationUid: elevationUid ?? null,
      updateTime: binding.createTime
    }, true),
  ({ condition, elevationUid, expireTime, startTime, ...binding }) => {
    // Read only from times (a value that holds something else is refused by the encoding after this).
    const time = (value: unknown) => DateTime.isDateTime(value) && DateTime.isUtc(value) ? value : null
    const state = bindingStateAt({ expireTime: time(expireTime), startTime: time(startTime) }, Date.now())
    return {
      ...binding,
      ...(startTime === null ? {} : { startTime }),
      ...(expireTime === null ? {} : { expireTime }),
      ...(state === "ACTIVE" ? {} : { state }),
      ...(condition === null ? {} : { condition: { ...condition } }),
      ...(elevationUid === null ? {} : { elevationUid })
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
