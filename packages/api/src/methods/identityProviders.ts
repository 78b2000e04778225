/**
 * The custom methods of identity providers: SCIM credentials, and the batch delete of group mappings.
 */
import * as ScimCredential from "@arbor/core/ScimCredential"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated, jsonShape, UidPath, unchecked } from "../internal/declaration.js"
import * as Wire from "../Wire.js"

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
