/**
 * Health, and the token exchange with the documents that let others verify its tokens.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import * as ListQuery from "../ListQuery.js"
import { KnownParameters, UpstreamBearer } from "../Security.js"
import * as Wire from "../Wire.js"

/** Liveness and readiness, without authentication. */
export const Health = HttpApiGroup.make("health")
  .annotate(OpenApi.Description, "Liveness and readiness probes, without authentication.")
  .middleware(KnownParameters)
  .add(
    HttpApiEndpoint.get("live", "/healthz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(
        OpenApi.Description,
        "Answers while the process serves requests, whatever the store's state: for an orchestrator's liveness " +
          "probe (restart when it stops answering). No token."
      )
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .annotate(OpenApi.Summary, "Readiness: the store answers")
      .annotate(
        OpenApi.Description,
        "Answers ready once the engine is started and its store answers a query; UNAVAILABLE (503) while it starts or " +
          "when the store does not answer: for a load balancer's readiness check. No token."
      )
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
  .middleware(KnownParameters)
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
      .annotate(
        OpenApi.Description,
        "The discovery document (OpenID Connect Discovery 1.0) of the issuer of this server's API tokens: its `issuer`, " +
          "`jwks_uri` and signing algorithms, which libraries such as `jose` read to verify them. No token."
      )
  )
  .add(
    HttpApiEndpoint.get("authorizationServer", "/.well-known/oauth-authorization-server")
      .addSuccess(JsonObject)
      .annotate(OpenApi.Summary, "OAuth authorization server metadata")
      .annotate(
        OpenApi.Description,
        "The metadata (RFC 8414) a generic OAuth client discovers the token, device authorization and revocation " +
          "endpoints by, with the grants and client authentication they take. No token."
      )
  )
  .add(
    HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
      .addSuccess(Schema.Struct({ keys: Schema.Array(JsonObject) }))
      .annotate(OpenApi.Summary, "The public keys that verify this issuer's tokens")
      .annotate(
        OpenApi.Description,
        "A JSON Web Key Set (RFC 7517): the public keys that verify the API tokens and webhook deliveries this " +
          "server signs. No token."
      )
  )
