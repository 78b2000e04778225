/**
 * The sign-in endpoints' own wire format (docs/api.md §10). They speak OAuth, not the management API: form bodies
 * in, and OAuth's JSON out, errors included (`{"error": "authorization_pending", "error_description": "…"}`).
 */
import { type OpenApi, OpenApiJsonSchema } from "@effect/platform"
import * as Schema from "effect/Schema"

/** The paths of the sign-in endpoints, and the device grant's type: the engine's (`SignIn`). */
import { deviceCodeGrant, paths, tokenExchangeGrant } from "@arbor/core/SignIn"

export { deviceCodeGrant, paths, tokenExchangeGrant }

/** The answer to a device authorization request (RFC 8628 §3.2). */
export const DeviceAuthorization = Schema.Struct({
  device_code: Schema.String,
  /** As shown to the person: `ABCD-EFGH`. */
  user_code: Schema.String,
  verification_uri: Schema.String,
  verification_uri_complete: Schema.String,
  expires_in: Schema.Number,
  interval: Schema.Number
})
export type DeviceAuthorization = typeof DeviceAuthorization.Type

/** The answer to a successful token request (RFC 6749 §5.1): an API token, and a refresh token when asked. */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Number,
  refresh_token: Schema.optional(Schema.String),
  refresh_token_expires_in: Schema.optional(Schema.Number)
})
export type TokenResponse = typeof TokenResponse.Type

/** The answer to a failed token request (RFC 6749 §5.2, RFC 8628 §3.5). */
export const ErrorResponse = Schema.Struct({
  error: Schema.String,
  error_description: Schema.optional(Schema.String)
})
export type ErrorResponse = typeof ErrorResponse.Type

const text = (description: string): OpenApiJsonSchema.JsonSchema => ({ type: "string", description })
const flag = (description: string): OpenApiJsonSchema.JsonSchema => ({ type: "boolean", description })

const form = (
  properties: Record<string, OpenApiJsonSchema.JsonSchema>,
  required: ReadonlyArray<string> = []
): OpenApi.OpenAPISpecRequestBody => ({
  required: true,
  content: {
    "application/x-www-form-urlencoded": {
      schema: { type: "object", properties, required: [...required], additionalProperties: false }
    }
  }
})

const json = (description: string, schema: Schema.Schema.Any): OpenApi.OpenApiSpecResponse => ({
  description,
  content: { "application/json": { schema: OpenApiJsonSchema.make(schema) } }
})

const oauthError = (description: string) => json(description, ErrorResponse)

/** What a sign-in may add to the session, shared by the browser's and the device's start: name, type, meaning. */
const signInOptions = [
  ["idp_id", "string", "an organization whose own identity provider to sign in with"],
  ["invite", "string", "an invite code to redeem at the sign-in"],
  ["create_refresh_token", "boolean", "`true`: hand out a refresh token too (30 days, one use)"]
] as const

const schemaOf = (type: "string" | "boolean", description: string) =>
  type === "string" ? text(description) : flag(description)

/**
 * The sign-in endpoints in OpenAPI's terms, for the API reference (their handlers are the server's own routes, not
 * endpoints of the management API): the browser's start, the device authorization grant (RFC 8628), its token
 * request and refresh-token revocation (RFC 7009).
 */
export const openApiPaths: OpenApi.OpenAPISpecPaths = {
  [paths.authorization]: {
    get: {
      tags: ["Sign-in"],
      security: [],
      operationId: "signIn.browser",
      summary: "Sign a person in from a browser",
      description: "Sends the browser to the sign-in provider; afterwards it returns to `redirect` (a loopback " +
        "address) with `?token=<API token>` (and `&refresh_token=` when asked). Limited per client address.",
      parameters: [
        {
          name: "exit",
          in: "query",
          required: true,
          schema: { type: "string", enum: ["redirect"] },
          description: "how the tokens leave: `redirect`"
        },
        {
          name: "redirect",
          in: "query",
          required: true,
          schema: { type: "string" },
          description: "where the browser returns: an http URL on localhost or a loopback address"
        },
        ...signInOptions.map(([name, type, description]): OpenApi.OpenAPISpecParameter => ({
          name,
          in: "query",
          required: false,
          schema: schemaOf(type, description),
          description
        }))
      ],
      responses: {
        "302": { description: "to the sign-in provider" },
        "400": { description: "a page saying what is wrong with the request" },
        "429": { description: "a page: too many sign-ins from this address; retry after Retry-After seconds" }
      }
    }
  },
  [paths.deviceAuthorization]: {
    post: {
      tags: ["Sign-in"],
      security: [],
      operationId: "signIn.deviceAuthorization",
      summary: "Start a device's sign-in",
      description: "For a program without a browser (RFC 8628): answers a code for the person to enter at " +
        "`verification_uri` on any device, and a `device_code` for the program to poll `/oauth/token` with.",
      parameters: [],
      requestBody: form({
        ...Object.fromEntries(signInOptions.map(([name, type, description]) => [name, schemaOf(type, description)])),
        audience: text("the API the token is for")
      }),
      responses: {
        "200": json("the codes, where to enter the user code, and how often to poll", DeviceAuthorization),
        "400": oauthError("`invalid_request`, described"),
        "429": oauthError("`temporarily_unavailable`: too many sign-ins; retry after Retry-After seconds")
      }
    }
  },
  [paths.token]: {
    post: {
      tags: ["Sign-in"],
      security: [],
      operationId: "signIn.token",
      summary: "Collect a device's tokens, or exchange a token",
      description: "Polled by the program every `interval` seconds with its `device_code` until the person has " +
        "signed in (RFC 8628 §3.4): `authorization_pending` until then, `slow_down` when polled too often, " +
        "`access_denied` when refused, `expired_token` after `expires_in`. With the token-exchange grant " +
        "(RFC 8693), the STS's exchange: `subject_token` (a JWT), `subject_token_type`, `audience` (by default the " +
        "API's base URL), `scope` (group uids) and `identity` (the uid to assume) give " +
        "`{access_token, issued_token_type, token_type, expires_in}`; a refused subject token is `invalid_grant`, an " +
        "audience not served `invalid_target`.",
      parameters: [],
      requestBody: form({
        grant_type: text(`\`${deviceCodeGrant}\` or \`${tokenExchangeGrant}\``),
        device_code: text("the device code of `/oauth/device/code` (device grant)"),
        subject_token: text("the workload's own OIDC token (token exchange)"),
        subject_token_type: text("`urn:ietf:params:oauth:token-type:jwt`, `…:id_token` or `…:access_token`"),
        audience: text("the API token's audience (token exchange; default the API's base URL)"),
        scope: text("group uids the API token is narrowed to, space-separated (token exchange)"),
        identity: text("the uid of the identity to assume (token exchange)")
      }, ["grant_type"]),
      responses: {
        "200": json("the API token, and a refresh token when asked", TokenResponse),
        "400": oauthError(
          "not yet, or never: `authorization_pending`, `slow_down`, `access_denied`, `expired_token`; " +
            "`invalid_grant` for a code that is not one, `invalid_request` for a missing or repeated parameter, " +
            "`unsupported_grant_type` for another grant"
        )
      }
    }
  },
  [paths.revocation]: {
    post: {
      tags: ["Sign-in"],
      security: [],
      operationId: "signIn.revoke",
      summary: "Revoke a refresh token",
      description: "Ends a refresh token (RFC 7009), and every one rotated from the same sign-in. Answers 200 " +
        "whether or not the token was known.",
      parameters: [],
      requestBody: form({ token: text("the refresh token") }, ["token"]),
      responses: {
        "200": { description: "revoked, or unknown" },
        "400": oauthError("`invalid_request`: no token")
      }
    }
  }
}
