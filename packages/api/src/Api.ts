/**
 * The HTTP API: every v2beta1 resource (docs/api.md §3), the v1 compatibility surface (docs/api.md §9), health, and
 * the token exchange with its discovery documents. The server implements it and `HttpApiClient.make(Api)` calls it,
 * with the engine's resource classes as results and the engine's errors as failures. Each resource's endpoints come
 * from its declaration in `Resources`; the custom methods and the token service are declared here.
 */
import * as AccessEvaluation from "@arbor/core/AccessEvaluation"
import * as AccountAssociationCheck from "@arbor/core/AccountAssociationCheck"
import * as Capability from "@arbor/core/Capability"
import * as GroupInvite from "@arbor/core/GroupInvite"
import * as RoleBinding from "@arbor/core/RoleBinding"
import * as ScimCredential from "@arbor/core/ScimCredential"
import * as TermsAcceptance from "@arbor/core/TermsAcceptance"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiSchema,
  HttpClient,
  HttpClientRequest,
  OpenApi
} from "@effect/platform"
import type { OpenApiJsonSchema } from "@effect/platform"
import * as Schema from "effect/Schema"
import * as ErrorBody from "./ErrorBody.js"
import { authenticated, jsonShape, UidPath, unchecked } from "./internal/declaration.js"
import * as ListQuery from "./ListQuery.js"
import * as OAuth from "./OAuth.js"
import * as Resources from "./Resources.js"
import { UpstreamBearer } from "./Security.js"
import * as Wire from "./Wire.js"

export { Authentication, CurrentPrincipal, UpstreamBearer, UpstreamToken } from "./Security.js"

/** `POST /iam/v2beta1/groups`: an organization, a group without a parent. */
export const Organizations = authenticated(
  HttpApiGroup.make("organizations").add(
    HttpApiEndpoint.post("create", "/groups")
      .setPayload(Resources.groups.body.create)
      .addSuccess(Wire.Group.v2)
      .annotate(OpenApi.Summary, "Create an organization (platform admins)")
      .annotate(
        OpenApi.Description,
        "Creates a root group. Only the platform admins (ARBOR_PLATFORM_ADMINS) may; anyone else is PERMISSION_DENIED."
      )
  ),
  "/iam/v2beta1",
  "Organizations: the root groups, created by platform admins."
)

/** `POST /iam/v2beta1/groupInvites:redeem`: the AIP-136 custom method of invites. */
export const InviteCodes = authenticated(
  HttpApiGroup.make("inviteCodes").add(
    // `::` is a literal `:` to the router: the path is `/groupInvites:redeem`.
    HttpApiEndpoint.post("redeem", "/groupInvites::redeem")
      .setPayload(unchecked<typeof GroupInvite.RedeemGroupInvite.Encoded>(
        "RedeemGroupInvite",
        jsonShape(GroupInvite.RedeemGroupInvite)
      ))
      .addSuccess(Wire.RoleBinding.v2)
      .annotate(OpenApi.Summary, "Redeem an invite code")
      .annotate(
        OpenApi.Description,
        "Binds the calling identity to the invite's role in its group. The code works once, before it expires, and " +
          "for the email the invite names, if it names one."
      )
  ),
  "/iam/v2beta1",
  "Invite codes: redeemed by the identity they bind."
)

/**
 * The custom methods that follow a uid (`/groups/<uid>:requestGroupAccess`). The router cannot end a parameter at a
 * colon, so each is declared as a segment of its own (`/groups/:uid/requestGroupAccess`); the server moves it there
 * before routing (`UidPaths`), and clients and the OpenAPI document put the colon back.
 */
export const uidCustomMethods: ReadonlyArray<string> = [
  "requestGroupAccess",
  "generateScimToken",
  "regenerateScimToken",
  "revokeScimToken",
  "setScimEnabled",
  "checkAccountAssociation"
]

const afterUid = new RegExp(`/(${uidCustomMethods.join("|")})$`)

/** A path with a custom method declared as the segment after a uid written as the protos write it. */
const customMethodAfterUid = (path: string) => path.replace(afterUid, ":$1")

/**
 * For a typed client (`HttpApiClient.make(Api, { transformClient })`): the paths of the custom methods
 * (`/roleBindings:batchCreate`, `/identities:updateIdentityMetadata`, …) are declared with `::`, the router's literal
 * colon, which the client would send as it is; this sends one colon.
 */
export const customMethodPaths = HttpClient.mapRequest(HttpClientRequest.updateUrl((url) => {
  const colons = (path: string) => customMethodAfterUid(path.replaceAll("::", ":"))
  // Only the path: an IPv6 host (`http://[::1]:8080`) keeps its colons.
  if (!URL.canParse(url)) return colons(url)
  const parsed = new URL(url)
  parsed.pathname = colons(parsed.pathname)
  return parsed.toString()
}))

/** Verified organizations (docs/api.md §13): found and asked for access by people at their domain. */
export const VerifiedOrganizations = authenticated(
  HttpApiGroup.make("verifiedOrganizations")
    .add(
      // `::` is a literal `:` to the router: the path is `/groups:lookupGroup`.
      HttpApiEndpoint.get("lookup", "/groups::lookupGroup")
        .addSuccess(Schema.Struct({ group: Wire.Group.v2 }))
        .annotate(OpenApi.Summary, "Find the verified organization of your email's domain")
        .annotate(
          OpenApi.Description,
          "The verified organization named by the domain of the caller's email, as the server's own provider " +
            "verified it. NOT_FOUND when there is none, when the caller is not eligible (no verified email, a free " +
            "mail domain, a narrowed token) or anything else: the cases cannot be told apart."
        )
    )
    .add(
      // `::` is a literal `:` to the router: the path is `/groups:checkEligibility`.
      HttpApiEndpoint.get("checkEligibility", "/groups::checkEligibility")
        .addSuccess(Schema.Struct({ eligible: Schema.Boolean }))
        .annotate(OpenApi.Summary, "Whether your email's domain may look for its organization")
        .annotate(
          OpenApi.Description,
          "True when the caller has an email the server's own provider verified, at a domain that is not a free " +
            "mail service, and signed in with a token that is not narrowed. It says nothing of whether an " +
            "organization is found."
        )
    )
    .add(
      // The path is `/groups/<uid>:requestGroupAccess`; the router takes the custom method as a segment.
      HttpApiEndpoint.post("requestAccess", "/groups/:uid/requestGroupAccess")
        .setPath(UidPath)
        .addSuccess(Schema.Struct({}))
        .annotate(OpenApi.Summary, "Ask a verified organization's owners for access")
        .annotate(
          OpenApi.Description,
          "Records the request in the organization's change log, where its owners' subscriptions and audit trail " +
            "see it. NOT_FOUND unless the uid is the verified organization LookupGroup finds for the caller; " +
            "RESOURCE_EXHAUSTED (429) when the caller asked the same organization within the last day."
        )
    ),
  "/iam/v2beta1",
  "Verified organizations: found by people at their domain."
)

/** `GET /iam/v2beta1/identities:lookupIdentity`: a person's uid, before or after their first sign-in. */
export const IdentityLookup = authenticated(
  HttpApiGroup.make("identityLookup").add(
    // `::` is a literal `:` to the router: the path is `/identities:lookupIdentity`.
    HttpApiEndpoint.get("lookup", "/identities::lookupIdentity")
      .setUrlParams(Schema.Struct({
        issuer: Schema.optionalWith(Schema.String, { default: () => "" }).annotations({
          description: "the OpenID issuer the person signs in with"
        }),
        subject: Schema.optionalWith(Schema.String, { default: () => "" }).annotations({
          description: "their subject at that issuer"
        })
      }))
      .addSuccess(Schema.Struct({ uid: Schema.String }))
      .annotate(OpenApi.Summary, "Look up a person's identity uid")
      .annotate(
        OpenApi.Description,
        "The uid of the person who signs in with this issuer and subject: theirs once they have signed in, and the " +
          "one they will get before (a person's uid is derived from the two). Any signed-in caller may ask."
      )
  ),
  "/iam/v2beta1",
  "Identities by their sign-in."
)

/** `PATCH /iam/v2beta1/identities:updateIdentityMetadata`: the caller's own metadata. */
export const OwnMetadata = authenticated(
  HttpApiGroup.make("ownMetadata").add(
    // `::` is a literal `:` to the router: the path is `/identities:updateIdentityMetadata`.
    HttpApiEndpoint.patch("update", "/identities::updateIdentityMetadata")
      .setPayload(Schema.Struct({
        identityMetadata: Schema.optional(Schema.Unknown).annotations({
          description: "the fields to set: company, updatesOptIn, product, jobTitle, utm*, latest*Url, selfServe"
        }),
        updateMask: Schema.optional(Schema.String).annotations({
          description: "the fields to change, comma-separated (`*`: all of them); without it, those present"
        })
      }))
      .addSuccess(Wire.IdentityMetadata)
      .annotate(OpenApi.Summary, "Update your own identity's metadata")
      .annotate(
        OpenApi.Description,
        "Sets profile fields on the calling identity (any identity, on itself only; not with a narrowed token) and " +
          "answers them with the identity's name. Strings up to 256 characters, URLs up to 2048."
      )
  ),
  "/iam/v2beta1",
  "The calling identity's own metadata."
)

/** `POST /iam/v2beta1/roleBindings:batchCreate`: the AIP-233 batch create of role bindings. */
export const RoleBindingBatches = authenticated(
  HttpApiGroup.make("roleBindingBatches").add(
    // `::` is a literal `:` to the router: the path is `/roleBindings:batchCreate`.
    HttpApiEndpoint.post("create", "/roleBindings::batchCreate")
      .setPayload(unchecked<typeof RoleBinding.BatchCreateRoleBindings.Encoded>(
        "BatchCreateRoleBindings",
        jsonShape(RoleBinding.BatchCreateRoleBindings)
      ))
      .addSuccess(Schema.Struct({ roleBindings: Schema.Array(Wire.RoleBinding.v2) }))
      .annotate(OpenApi.Summary, "Create up to 25 role bindings in one group, all or none")
      .annotate(
        OpenApi.Description,
        "Binds each request's identity to its role (or to the batch's roleUid) in the batch's parent group, in the " +
          "order given, each as CreateRoleBinding would: the caller holds every capability of each role there. One " +
          "that fails makes none. A request's parent, when set, is the batch's; its roleUid, when set, the batch's."
      )
  ),
  "/iam/v2beta1",
  "Role bindings made together."
)

/** The legal documents a group has accepted (the protos' TermsService; docs/api.md §13). */
export const Terms = authenticated(
  HttpApiGroup.make("terms")
    .add(
      HttpApiEndpoint.post("accept", "/terms/:uid")
        .setPath(UidPath)
        .setPayload(unchecked<typeof TermsAcceptance.AcceptTerms.Encoded>(
          "AcceptTerms",
          jsonShape(TermsAcceptance.AcceptTerms)
        ))
        .addSuccess(Schema.Struct({ group: Wire.Uid, documentIds: Schema.Array(Schema.String) }))
        .annotate(OpenApi.Summary, "Accept legal documents for a group")
        .annotate(
          OpenApi.Description,
          "Records that the group accepts each document (`terms.accept` there). A document the group has accepted " +
            "stays accepted as it was; the answer names every document of the request."
        )
    )
    .add(
      HttpApiEndpoint.get("list", "/terms/:uid")
        .setPath(UidPath)
        .setUrlParams(ListQuery.ListQuery)
        .addSuccess(Wire.listEnvelope("termsAcceptances", Wire.TermsAcceptance))
        .annotate(OpenApi.Summary, "List the documents a group has accepted")
        .annotate(
          OpenApi.Description,
          "The acceptances of the group and of the groups above it (`terms.list` at the group), oldest first."
        )
    ),
  "/iam/v2beta1",
  "Terms: the legal documents each group has accepted."
)

/** A SCIM token as handed out, once: `GenerateScimTokenResponse`. */
export const ScimTokenIssued = Schema.Struct({
  token: Schema.String.annotations({ description: "the token, shown this once: cgscim_ and 64 hex characters" }),
  endpointUrl: Schema.String.annotations({ description: "where the provider's SCIM client sends its requests" }),
  expireTime: Schema.optionalWith(Wire.Time, { exact: true }).annotations({
    description: "when the token stops working; absent for one that never expires"
  }),
  identityProviderUid: Wire.Uid,
  etag: Schema.String
}).annotations({ identifier: "GenerateScimTokenResponse" })

/** A replacement SCIM token, once: `RegenerateScimTokenResponse`. */
export const ScimTokenRegenerated = Schema.Struct({
  ...ScimTokenIssued.fields,
  previousTokenExpireTime: Schema.optionalWith(Wire.Time, { exact: true }).annotations({
    description: "until when the previous token works; absent when it already did not, or overlap was 0s"
  }),
  requestedOverlap: Schema.optionalWith(Wire.Duration, { exact: true }).annotations({
    description: "the overlap asked for, after the default"
  })
}).annotations({ identifier: "RegenerateScimTokenResponse" })

/** `RevokeScimTokenResponse`. */
export const ScimTokenRevoked = Schema.Struct({
  identityProviderUid: Wire.Uid,
  etag: Schema.String,
  enabled: Schema.Boolean,
  revokeTime: Wire.Time
}).annotations({ identifier: "RevokeScimTokenResponse" })

/** `SetScimEnabledResponse`. */
export const ScimEnabledSet = Schema.Struct({
  identityProviderUid: Wire.Uid,
  enabled: Schema.Boolean,
  etag: Schema.String
}).annotations({ identifier: "SetScimEnabledResponse" })

/**
 * An identity provider's SCIM credential and switch (the protos' four SCIM methods of IdentityProvidersService;
 * docs/api.md §13): `identity_providers.scim.manage` and `identity_providers.list` at the provider's group.
 */
export const ScimCredentials = authenticated(
  HttpApiGroup.make("scimCredentials")
    .add(
      // The path is `/identityProviders/<uid>:generateScimToken`; the router takes the custom method as a segment.
      HttpApiEndpoint.post("generate", "/identityProviders/:uid/generateScimToken")
        .setPath(UidPath)
        .setPayload(unchecked<typeof ScimCredential.GenerateScimToken.Encoded>(
          "GenerateScimToken",
          jsonShape(ScimCredential.GenerateScimToken)
        ))
        .addSuccess(ScimTokenIssued)
        .annotate(OpenApi.Summary, "Generate an identity provider's first SCIM token")
        .annotate(
          OpenApi.Description,
          "The token is shown once and kept only as its SHA-256. It expires in a year unless expireTime (at most two " +
            "years ahead) or neverExpires says otherwise. Provisioning stays off until SetScimEnabled. " +
            "FAILED_PRECONDITION when the provider has had a token: regenerate it instead."
        )
    )
    .add(
      HttpApiEndpoint.post("regenerate", "/identityProviders/:uid/regenerateScimToken")
        .setPath(UidPath)
        .setPayload(unchecked<typeof ScimCredential.RegenerateScimToken.Encoded>(
          "RegenerateScimToken",
          jsonShape(ScimCredential.RegenerateScimToken)
        ))
        .addSuccess(ScimTokenRegenerated)
        .annotate(OpenApi.Summary, "Replace an identity provider's SCIM token")
        .annotate(
          OpenApi.Description,
          "A new token, shown once. The previous one keeps working for overlap (\"3600s\" by default, a day at " +
            "most, never past its own expiry) when it still worked. NOT_FOUND when the provider never had a token; " +
            "ABORTED when etag is not the configuration's current one."
        )
    )
    .add(
      HttpApiEndpoint.post("revoke", "/identityProviders/:uid/revokeScimToken")
        .setPath(UidPath)
        .setPayload(Schema.Struct({}))
        .addSuccess(ScimTokenRevoked)
        .annotate(OpenApi.Summary, "Revoke an identity provider's SCIM tokens")
        .annotate(
          OpenApi.Description,
          "The current and the previous token stop working at once; whether provisioning is enabled does not " +
            "change. NOT_FOUND when the provider never had a token."
        )
    )
    .add(
      HttpApiEndpoint.post("setEnabled", "/identityProviders/:uid/setScimEnabled")
        .setPath(UidPath)
        .setPayload(unchecked<typeof ScimCredential.SetScimEnabled.Encoded>(
          "SetScimEnabled",
          jsonShape(ScimCredential.SetScimEnabled)
        ))
        .addSuccess(ScimEnabledSet)
        .annotate(OpenApi.Summary, "Start or pause an identity provider's SCIM provisioning")
        .annotate(
          OpenApi.Description,
          "Enabling needs at least two owner bindings at the organization of identities this provider does not " +
            "provision (FAILED_PRECONDITION otherwise); it needs no live token. ABORTED when etag is not current."
        )
    ),
  "/iam/v2beta1",
  "SCIM provisioning: an identity provider's credential and switch."
)

/** `CheckAccountAssociation` (docs/api.md §13): whether a cloud accepts this server's canary token. */
export const AccountAssociationChecks = authenticated(
  HttpApiGroup.make("accountAssociationChecks").add(
    // The path is `/accountAssociations/<uid>:checkAccountAssociation`; the router takes the method as a segment.
    HttpApiEndpoint.post("check", "/accountAssociations/:uid/checkAccountAssociation")
      .setPath(UidPath)
      .setPayload(unchecked<typeof AccountAssociationCheck.CheckAccountAssociation.Encoded>(
        "CheckAccountAssociationRequest",
        jsonShape(AccountAssociationCheck.CheckAccountAssociation)
      ))
      .addSuccess(Wire.AccountAssociationCheckResult)
      .annotate(OpenApi.Summary, "Check a cloud account association with a live credential exchange")
      .annotate(
        OpenApi.Description,
        "Signs a token of this server (subject canary:<group>) and exchanges it at the cloud's token service for " +
          "the association's canary role (AWS: role chainguard-canary; Google Cloud: pool chainguard-pool, provider " +
          "chainguard-provider, service account chainguard-canary; Azure: the client id named canary). " +
          "CHECK_STATUS_READY when the cloud accepts it; CHECK_STATUS_NOT_READY with the reason otherwise. " +
          "`account_associations.list` at the group."
      )
  ),
  "/iam/v2beta1",
  "Account association checks."
)

/** A grant as an explanation names it: the binding or mapping, its role and group; or that the caller may not see it. */
const GrantedBy = Schema.Union(
  Schema.Struct({
    group: Wire.Uid,
    role: Wire.Uid,
    binding: Schema.optionalWith(Wire.Uid, { exact: true }),
    mapping: Schema.optionalWith(Wire.Uid, { exact: true })
  }),
  Schema.Struct({ description: Schema.Literal("granted by a binding you cannot see") })
)

/**
 * A decision as AuthZEN answers it; with `explain`, `context.grantedBy` names what granted it (as far as the caller
 * may list it).
 */
export const AccessDecision = Schema.transform(
  Schema.Struct({
    decision: Schema.Boolean,
    context: Schema.optionalWith(Schema.Struct({ grantedBy: Schema.Array(GrantedBy) }), { exact: true })
  }),
  Schema.typeSchema(AccessEvaluation.Decision),
  {
    strict: true,
    decode: ({ context, decision }) =>
      new AccessEvaluation.Decision({
        decision,
        ...(context === undefined
          ? {}
          : {
            grantedBy: context.grantedBy.map((g) =>
              "description" in g ? AccessEvaluation.UnseenGrant.instance : new AccessEvaluation.Grant(g, true)
            )
          })
      }),
    encode: ({ decision, grantedBy }) => ({
      decision,
      ...(grantedBy === undefined ? {} : { context: { grantedBy: grantedBy.map((g) => ({ ...g })) } })
    })
  }
).annotations({ identifier: "AccessEvaluationResponse" })

/** The AuthZEN endpoints: where they are, for policy enforcement points that discover them. */
export const authzenPaths = {
  evaluation: "/access/v1/evaluation",
  evaluations: "/access/v1/evaluations",
  searchAction: "/access/v1/search/action"
} as const

/**
 * Decisions for other services (DECISIONS §16, docs/api.md §14): the OpenID AuthZEN Authorization API 1.0. A false
 * decision is 200 `{"decision": false}`; 403 is only for asking about another identity without
 * `role_bindings.list` at the resource's group.
 */
export const Decisions = authenticated(
  HttpApiGroup.make("decisions")
    .add(
      HttpApiEndpoint.post("evaluate", "/evaluation")
        .setPayload(unchecked<typeof AccessEvaluation.Evaluation.Encoded>(
          "AccessEvaluationRequest",
          jsonShape(AccessEvaluation.Evaluation)
        ))
        .addSuccess(AccessDecision)
        .annotate(OpenApi.Summary, "May this identity do this here?")
        .annotate(
          OpenApi.Description,
          "subject {type: identity, id: <uid>}, action {name: <capability>}, resource {type: group|identity|role|" +
            "role_binding|identity_provider|account_association|group_invite|external_group_role_mapping|repo|tag|" +
            "subscription, id: <uid>}, context {explain: true} to name the bindings that granted it. The decision is " +
            "the API's own, from the current bindings."
        )
    )
    .add(
      HttpApiEndpoint.post("evaluateMany", "/evaluations")
        .setPayload(unchecked<typeof AccessEvaluation.Evaluations.Encoded>(
          "AccessEvaluationsRequest",
          jsonShape(AccessEvaluation.Evaluations)
        ))
        .addSuccess(Schema.Union(Schema.Struct({ evaluations: Schema.Array(AccessDecision) }), AccessDecision))
        .annotate(OpenApi.Summary, "Many decisions at once")
        .annotate(
          OpenApi.Description,
          `Up to ${AccessEvaluation.maxEvaluations} evaluations, each with the batch's subject, action, resource and ` +
            "context unless it names its own; options.evaluations_semantic execute_all (the default), " +
            "deny_on_first_deny or permit_on_first_permit. Without evaluations, one decision."
        )
    )
    .add(
      HttpApiEndpoint.post("searchActions", "/search/action")
        .setPayload(unchecked<typeof AccessEvaluation.ActionSearch.Encoded>(
          "ActionSearchRequest",
          jsonShape(AccessEvaluation.ActionSearch)
        ))
        .addSuccess(Schema.Struct({ results: Schema.Array(Schema.Struct({ name: Capability.Capability })) }))
        .annotate(OpenApi.Summary, "What may this identity do here?")
        .annotate(OpenApi.Description, "Every capability the subject holds at the resource, in the canonical order.")
    ),
  "/access/v1",
  "Decisions for other services: the OpenID AuthZEN Authorization API 1.0."
)

/** `/.well-known/authzen-configuration`: the decision point's metadata (AuthZEN §9), for anyone. */
export const DecisionsMetadata = HttpApiGroup.make("decisionsMetadata").annotate(
  OpenApi.Description,
  "Where the AuthZEN endpoints are, for policy enforcement points that discover them."
).add(
  HttpApiEndpoint.get("configuration", "/.well-known/authzen-configuration")
    .addSuccess(Schema.Struct({
      policy_decision_point: Schema.String,
      access_evaluation_endpoint: Schema.String,
      access_evaluations_endpoint: Schema.String,
      search_action_endpoint: Schema.String
    }))
    .annotate(OpenApi.Summary, "Where this decision point's AuthZEN endpoints are")
)

/** A repo's README (the protos' `RepoReadme`, a singleton sub-resource of the repo; docs/api.md §13). */
export const RepoReadmes = authenticated(
  HttpApiGroup.make("repoReadmes")
    .add(
      HttpApiEndpoint.get("get", "/repos/:uid/readme")
        .setPath(UidPath)
        .addSuccess(Wire.RepoReadme)
        .annotate(OpenApi.Summary, "Get a repo's README")
        .annotate(OpenApi.Description, "The repo's Markdown README (`repo.list`); empty content when it has none.")
    )
    .add(
      HttpApiEndpoint.patch("update", "/repos/:uid/readme")
        .setPath(UidPath)
        .setUrlParams(Schema.Struct({
          updateMask: Schema.optional(Schema.String).annotations({
            description: "`content` (or `*`); without it, the content present in the body"
          })
        }))
        .setPayload(Schema.Struct({
          content: Schema.optional(Schema.String).annotations({ description: "Markdown, at most 256 KiB" })
        }))
        .addSuccess(Wire.RepoReadme)
        .annotate(OpenApi.Summary, "Replace a repo's README")
        .annotate(
          OpenApi.Description,
          "Replaces the README (`repo.update`). It must be Markdown whose HTML a sanitizer leaves as it is: no " +
            "scripts, styles, frames, event handlers or javascript: links (else INVALID_ARGUMENT naming content)."
        )
    ),
  "/registry/v2beta1",
  "READMEs: the Markdown that describes a repo."
)

/** `POST /iam/v2beta1/externalGroupRoleMappings:batchDelete`: the AIP-235 batch delete of a provider's mappings. */
export const MappingBatches = authenticated(
  HttpApiGroup.make("mappingBatches").add(
    // `::` is a literal `:` to the router: the path is `/externalGroupRoleMappings:batchDelete`.
    HttpApiEndpoint.post("delete", "/externalGroupRoleMappings::batchDelete")
      .setPayload(Schema.Struct({
        parent: Schema.String.annotations({ description: "the identity provider's uid" }),
        names: Schema.Array(Schema.String).annotations({ description: "the uids of its mappings to delete (1 to 100)" })
      }))
      .addSuccess(Schema.Struct({
        parent: Wire.Uid,
        externalGroupRoleMappings: Schema.Array(Wire.ExternalGroupRoleMapping)
      }))
      .annotate(OpenApi.Summary, "Delete several mappings of an identity provider at once")
      .annotate(
        OpenApi.Description,
        "Deletes the named mappings of the provider (`identity_providers.delete`) and answers those deleted; names " +
          "already gone are skipped, a name of another provider is INVALID_ARGUMENT and deletes nothing."
      )
  ),
  "/iam/v2beta1",
  "External group role mappings deleted together."
)

/** The audit trail (docs/api.md §12): the change log, listed and followed. */
export const AuditTrail = authenticated(
  HttpApiGroup.make("auditTrail")
    .add(
      HttpApiEndpoint.get("list", "/events")
        .setUrlParams(ListQuery.EntryListQuery)
        .addSuccess(Wire.listEnvelope("events", Wire.ChangeEntry))
        .annotate(OpenApi.Summary, "List change-log entries")
        .annotate(
          OpenApi.Description,
          "Every committed write's entries, oldest first (order_by=time desc: newest first), of the groups where the " +
            "caller holds `subscriptions.list` and of the groups below them. totalCount counts only those."
        )
    )
    .add(
      // `::` is a literal `:` to the router: the path is `/events:watch`.
      HttpApiEndpoint.get("watch", "/events::watch")
        .setUrlParams(ListQuery.WatchQuery)
        .addSuccess(
          Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" }))
            .annotations({ description: "Server-Sent Events: `id: <cursor>`, `event: <type>`, `data: <entry JSON>`" })
        )
        .annotate(OpenApi.Summary, "Follow the change log")
        .annotate(
          OpenApi.Description,
          "The entries after the cursor given as Last-Event-ID (or after=), then each new one as it commits on any " +
            "server sharing the database, as Server-Sent Events. Reconnecting with the last id received misses " +
            "nothing and repeats nothing. Same filters and visibility as the list."
        )
    ),
  "/events/v2beta1",
  "The audit trail: who changed what, when, in answer to which request."
)

/** Liveness and readiness, without authentication. */
export const Health = HttpApiGroup.make("health")
  .annotate(OpenApi.Description, "Liveness and readiness probes, without authentication.")
  .add(
    HttpApiEndpoint.get("live", "/healthz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Summary, "Liveness")
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .annotate(OpenApi.Summary, "Readiness: the store answers")
  )

/** What narrows an exchange's API token (docs/api.md §8). */
const narrowingParams = {
  cap: Schema.optional(ListQuery.Repeated).annotations({
    description: "narrows the API token to these capabilities (repeatable; groups.list or CAP_IAM_GROUPS_LIST)"
  }),
  scope: Schema.optional(ListQuery.Repeated).annotations({
    description: "narrows the API token to these groups and those below them (repeatable; group uids)"
  })
}

const ExchangeParams = Schema.Struct({
  aud: Schema.optional(Schema.String).annotations({
    description: "the audience of the API token: the API's base URL or another configured audience"
  }),
  identity: Schema.optional(Schema.String).annotations({ description: "the uid of the identity to assume" }),
  ...narrowingParams
})

/** The answer of the token exchange: an API token and when it expires. */
export const Exchanged = Schema.Struct({
  token: Schema.String.annotations({ description: "the API token, valid for one hour" }),
  expiry: Wire.Time.annotations({ description: "when the API token expires (RFC 3339)" })
}).annotations({ identifier: "ExchangedToken" })

const exchangeDescription = "Exchanges the workload's own OIDC token (the bearer) for an API token of an identity " +
  "whose claim match it satisfies. Every failure to verify or match is one 403, whether or not the identity exists."

/** The answer of a refresh: an API token, and the refresh token that replaces the one presented. */
export const Refreshed = Schema.Struct({
  token: Exchanged,
  refreshToken: Schema.Struct({
    token: Schema.String.annotations({ description: "the next refresh token; the one presented no longer works" }),
    expiry: Wire.Time.annotations({ description: "when it expires (RFC 3339), 30 days after it was issued" })
  }).annotations({ identifier: "RefreshToken" })
}).annotations({ identifier: "RefreshedTokens" })

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The token exchange and the documents that let others verify its tokens. */
export const TokenService = HttpApiGroup.make("sts")
  .annotate(OpenApi.Description, "The token exchange (STS), and this issuer's OpenID configuration and keys.")
  .add(
    HttpApiEndpoint.get("exchange", "/sts/exchange")
      .setUrlParams(ExchangeParams)
      .addSuccess(Exchanged)
      .annotate(OpenApi.Description, exchangeDescription)
      .annotate(OpenApi.Summary, "Exchange a token")
  )
  .add(
    HttpApiEndpoint.post("exchangePost", "/sts/exchange")
      .setUrlParams(ExchangeParams)
      .addSuccess(Exchanged)
      .annotate(OpenApi.Description, exchangeDescription)
      .annotate(OpenApi.Summary, "Exchange a token (POST)")
  )
  .add(
    HttpApiEndpoint.post("exchangeRefreshToken", "/sts/exchange_refresh_token")
      .setUrlParams(Schema.Struct({
        aud: Schema.optional(Schema.String).annotations({
          description: "the audience the refresh token is bound to (default: the API's base URL)"
        }),
        ...narrowingParams
      }))
      .addSuccess(Refreshed)
      .annotate(
        OpenApi.Description,
        "Exchanges a person's refresh token (the bearer) for an API token and the refresh token that replaces it. " +
          "A refresh token works once: presenting one again revokes every token rotated from the same sign-in."
      )
      .annotate(OpenApi.Summary, "Exchange a refresh token")
  )
  .middlewareEndpoints(UpstreamBearer)
  .add(
    HttpApiEndpoint.get("configuration", "/.well-known/openid-configuration")
      .addSuccess(JsonObject)
      .annotate(OpenApi.Summary, "OpenID configuration of this token issuer")
  )
  .add(
    HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
      .addSuccess(Schema.Struct({ keys: Schema.Array(JsonObject) }))
      .annotate(OpenApi.Summary, "The public keys that verify this issuer's tokens")
  )

/**
 * What the generated document says, made true and whole: every error body is a google.rpc.Status (the framework's
 * own decode-error body never reaches a client), a read never answers a write's conflict (409), the custom method's
 * path keeps its literal colon, and the sign-in endpoints, which speak OAuth, are there beside the API's.
 */
const truthful = (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => {
  const paths: OpenApi.OpenAPISpecPaths = {}
  for (const [path, item] of Object.entries(spec.paths)) {
    delete item.get?.responses?.["409"]
    for (const operation of Object.values(item)) {
      const bad = (operation as OpenApi.OpenAPISpecOperation).responses?.["400"]
      const schema = bad?.content?.["application/json"]?.schema
      if (bad !== undefined && schema !== undefined && "anyOf" in schema && Array.isArray(schema.anyOf)) {
        const kept = (schema.anyOf as ReadonlyArray<OpenApiJsonSchema.JsonSchema>).filter((s) =>
          !("$ref" in s && s.$ref === "#/components/schemas/HttpApiDecodeError")
        )
        bad.content!["application/json"]!.schema = kept.length === 1 ? kept[0]! : { anyOf: kept }
        bad.description = "invalid argument (code 3) or failed precondition (code 9)"
      }
    }
    // `/groupInvites::redeem` (a literal colon to the router) reaches here as `/groupInvites:{redeem}`.
    paths[customMethodAfterUid(path.replace(/:\{(\w+)\}$/, ":$1"))] = item
  }
  const schemas = { ...spec.components.schemas }
  for (const internal of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete schemas[internal]
  return withoutIds({
    ...spec,
    paths: { ...paths, ...OAuth.openApiPaths },
    components: { ...spec.components, schemas },
    tags: [...(spec.tags ?? []), {
      name: "Sign-in",
      description: "People signing in: OAuth's endpoints, form bodies in and OAuth's JSON out."
    }]
  })
}

/** Drops the `$id`s the schema generator gives `unknown` (the same id many times over). */
const withoutIds = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map(withoutIds) as A
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== "$id").map(([k, v]) => [k, withoutIds(v)])) as A
}

/** Every path of the API, with the errors any endpoint may answer. */
export const Api = ErrorBody.declareErrors(
  HttpApi.make("arbor")
    .add(Resources.groups.group)
    .add(Organizations)
    .add(VerifiedOrganizations)
    .add(Resources.identities.group)
    .add(IdentityLookup)
    .add(OwnMetadata)
    .add(Resources.roles.group)
    .add(Resources.roleBindings.group)
    .add(RoleBindingBatches)
    .add(Resources.identityProviders.group)
    .add(ScimCredentials)
    .add(Resources.accountAssociations.group)
    .add(AccountAssociationChecks)
    .add(Resources.groupInvites.group)
    .add(Resources.externalGroupRoleMappings.group)
    .add(MappingBatches)
    .add(InviteCodes)
    .add(Resources.repos.group)
    .add(RepoReadmes)
    .add(Resources.tags.group)
    .add(Resources.advisories.group)
    .add(AuditTrail)
    .add(Decisions)
    .add(DecisionsMetadata)
    .add(Resources.subscriptions.group)
    .add(Terms)
    .add(Resources.groupsV1.group)
    .add(Resources.identitiesV1.group)
    .add(Resources.rolesV1.group)
    .add(Resources.roleBindingsV1.group)
    .add(Resources.reposV1.group)
    .add(Resources.tagsV1.group)
    .add(TokenService)
    .add(Health)
)
  .annotate(OpenApi.Title, "Arbor management API")
  .annotate(OpenApi.Version, "2.0.0-beta.1")
  .annotate(
    OpenApi.Description,
    "Groups, identities, roles, role bindings, identity providers, account associations and group invites; " +
      "registry repos and tags; vulnerability advisories. Errors are google.rpc.Status bodies. Query parameters are " +
      "snake_case; each is also accepted in camelCase (pageSize, uidp.descendantsOf, …)."
  )
  .annotate(OpenApi.Servers, [{ url: "/", description: "this server" }])
  .annotate(OpenApi.License, { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" })
  .annotate(OpenApi.Transform, (spec) => truthful(spec as OpenApi.OpenAPISpec))
