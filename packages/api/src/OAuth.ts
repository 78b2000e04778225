/**
 * The sign-in endpoints' own wire format (docs/api.md §10). They speak OAuth, not the management API: form bodies
 * in, and OAuth's JSON out, errors included (`{"error": "authorization_pending", "error_description": "…"}`).
 */
import * as Schema from "effect/Schema"

/** The paths of the sign-in endpoints, and the device grant's type: the engine's (`SignIn`). */
export { deviceCodeGrant, paths } from "@arbor/core/SignIn"

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
