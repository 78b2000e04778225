/**
 * The change log's entries on the wire (`Wire`), each body the v2 JSON of its resource, and the list envelopes.
 */
import { AccountAssociation as CoreAccountAssociation } from "@arbor/core/AccountAssociation"
import { Advisory as CoreAdvisory } from "@arbor/core/Advisory"
import * as ChangeLog from "@arbor/core/ChangeLog"
import * as CoreDecisionVocabulary from "@arbor/core/DecisionVocabulary"
import { Elevation as CoreElevation } from "@arbor/core/Elevation"
import { Eligibility as CoreEligibility } from "@arbor/core/Eligibility"
import { ExternalGroupRoleMapping as CoreExternalGroupRoleMapping } from "@arbor/core/ExternalGroupRoleMapping"
import { Group as CoreGroup } from "@arbor/core/Group"
import { GroupAccessRequest as CoreGroupAccessRequest } from "@arbor/core/GroupAccessRequest"
import { GroupInvite as CoreGroupInvite } from "@arbor/core/GroupInvite"
import { Identity as CoreIdentity } from "@arbor/core/Identity"
import { IdentityProvider as CoreIdentityProvider } from "@arbor/core/IdentityProvider"
import { Repo as CoreRepo } from "@arbor/core/Repo"
import { Role as CoreRole } from "@arbor/core/Role"
import { RoleBinding as CoreRoleBinding } from "@arbor/core/RoleBinding"
import * as ScimCredential from "@arbor/core/ScimCredential"
import { ScimGroup as CoreScimGroup } from "@arbor/core/ScimGroup"
import { ScimUser as CoreScimUser } from "@arbor/core/ScimUser"
import { Subscription as CoreSubscription } from "@arbor/core/Subscription"
import { Tag as CoreTag } from "@arbor/core/Tag"
import { TermsAcceptance as CoreTermsAcceptance } from "@arbor/core/TermsAcceptance"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import {
  AccountAssociation,
  DecisionVocabulary,
  Elevation,
  Eligibility,
  ExternalGroupRoleMapping,
  Group,
  GroupAccessRequest,
  GroupInvite,
  Identity,
  IdentityProvider,
  Role,
  RoleBinding,
  ScimCredentialChange,
  ScimGroup,
  ScimUser,
  Subscription,
  TermsAcceptance
} from "./iam.js"
import { Advisory, Repo, Tag } from "./registry.js"
import { shape, Time, Uid } from "./shapes.js"

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
