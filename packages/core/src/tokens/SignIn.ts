/**
 * Signing in (docs/api.md §10): what a sign-in keeps between its steps, in the store so that any server may take the
 * next step. A login transaction lives from the redirect to the provider until its callback, once; a device
 * authorization (RFC 8628) from its request until its client collects the token, once.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Errors from "../engine/Errors.js"
import type { Table } from "../engine/Store.js"

/** The paths of the sign-in endpoints, relative to the token service's address. */
export const paths = {
  authorization: "/oauth",
  callback: "/oauth/callback",
  deviceAuthorization: "/oauth/device/code",
  verification: "/oauth/device",
  token: "/oauth/token",
  revocation: "/oauth/revoke"
} as const

/** The grant type of a device's token request (RFC 8628 §3.4). */
export const deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

/** The grant type of a token exchange at the token endpoint (RFC 8693 §2.1), the STS's exchange by another name. */
export const tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

/** RFC 8693's token type URIs: the types of subject token an exchange takes (JWTs all), and what it issues. */
export const tokenTypes = {
  jwt: "urn:ietf:params:oauth:token-type:jwt",
  idToken: "urn:ietf:params:oauth:token-type:id_token",
  accessToken: "urn:ietf:params:oauth:token-type:access_token"
} as const

/**
 * The authorization server metadata (RFC 8414) of the token service at `issuer`: what a generic OAuth client can use
 * of it, no more. Its grant is the device flow (RFC 8628) by public clients; there is no authorization endpoint for
 * other relying parties (`/oauth` starts Arbor's own sign-in, for `arbor` and the console), so no response type.
 */
export const authorizationServerMetadata = (issuer: string) => ({
  issuer,
  jwks_uri: `${issuer}/.well-known/jwks.json`,
  token_endpoint: `${issuer}${paths.token}`,
  device_authorization_endpoint: `${issuer}${paths.deviceAuthorization}`,
  revocation_endpoint: `${issuer}${paths.revocation}`,
  grant_types_supported: [deviceCodeGrant, tokenExchangeGrant],
  response_types_supported: [] as ReadonlyArray<string>,
  token_endpoint_auth_methods_supported: ["none"],
  revocation_endpoint_auth_methods_supported: ["none"]
})

/**
 * The OpenID configuration of the token service at `issuer`: its metadata (`authorizationServerMetadata`), and what a
 * verifier of its tokens reads: the keys, the algorithm, the subjects and claims.
 */
export const openIdConfiguration = (issuer: string) => ({
  ...authorizationServerMetadata(issuer),
  subject_types_supported: ["public"],
  id_token_signing_alg_values_supported: ["ES256"],
  claims_supported: ["iss", "sub", "aud", "iat", "exp", "jti", "act", "email"]
})

/** How long a login transaction waits for its callback. */
export const transactionLifetime = Duration.minutes(10)

/** How long a device code waits for its person and its client. */
export const deviceLifetime = Duration.minutes(10)

/** How long a device's client waits between polls at first; every `slow_down` adds `pollBackoff`. */
export const pollInterval = Duration.seconds(5)

/** What `slow_down` adds to the interval (RFC 8628 §3.5). */
export const pollBackoff = Duration.seconds(5)

/** The letters of user codes: consonants only (no vowels, so no words), none that look alike. */
export const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

/** A login transaction: the browser's cookie names its uid; `state` comes back from the provider. */
export const transactionsTable: Table = {
  name: "login_transactions",
  columns: {
    state: { type: "text" },
    nonce: { type: "text" },
    verifier: { type: "text" },
    /** The organization's identity provider's uid; empty for the server's own. */
    provider: { type: "text" },
    /** The loopback address to return to (browser flow); null for a device's sign-in. */
    callback: { type: "text", nullable: true },
    audience: { type: "text" },
    invite: { type: "text", nullable: true },
    refresh: { type: "boolean" },
    /** The device authorization this sign-in approves (headless flow). */
    device: { type: "text", nullable: true },
    expireTime: { type: "integer" },
    createTime: { type: "integer" },
    /** What the client asked to have back beside its tokens. */
    clientState: { type: "text", nullable: true }
  },
  unique: [],
  indexes: [["expireTime"]]
}

/** A device authorization: its client holds the device code (kept as a hash), its person types the user code. */
export const devicesTable: Table = {
  name: "device_authorizations",
  columns: {
    deviceCodeHash: { type: "text" },
    userCode: { type: "text" },
    provider: { type: "text" },
    audience: { type: "text" },
    invite: { type: "text", nullable: true },
    refresh: { type: "boolean" },
    status: { type: "text" },
    /** The person who approved it. */
    identity: { type: "text", nullable: true },
    /** Seconds the client must wait between polls. */
    interval: { type: "integer" },
    lastPollTime: { type: "integer", nullable: true },
    expireTime: { type: "integer" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" },
    /** The group mappings their sign-in gave. */
    mappings: { type: "json", nullable: true }
  },
  unique: [["deviceCodeHash"], ["userCode"]],
  indexes: [["expireTime"]]
}

/** The server's own provider, where people sign in when they name no organization's. */
export interface LoginProvider {
  readonly issuer: string
  readonly clientId: string
  /** Empty for a public client (PKCE without a secret). */
  readonly clientSecret: Redacted.Redacted<string>
  /** Scopes asked for beside `openid email profile`. */
  readonly scopes: ReadonlyArray<string>
}

/** How people sign in. */
export interface LoginSettingsService {
  readonly provider?: LoginProvider | undefined
  /**
   * Where providers send people back (registered with every provider as the redirect URI); by default
   * `{auth_url}/oauth/callback`.
   */
  readonly redirectUri?: string | undefined
  /**
   * Pages of the server itself that a browser sign-in may return to beside loopback callbacks (the console's,
   * `{base_url}/console/`): the edge names them, a client never does.
   */
  readonly ownCallbacks?: ReadonlyArray<string> | undefined
}

/** How people sign in: by default with no server-wide provider, only organizations' own. */
export class LoginSettings extends Context.Reference<LoginSettings>()("@arbor/core/SignIn/LoginSettings", {
  defaultValue: (): LoginSettingsService => ({})
}) {}

/** The answers of a device's token request before (or instead of) its tokens, named as RFC 8628 §3.5 names them. */
export class DeviceGrantError extends Schema.TaggedError<DeviceGrantError>()("DeviceGrantError", {
  error: Schema.Literal("authorization_pending", "slow_down", "expired_token", "access_denied", "invalid_grant"),
  description: Schema.String
}) {}

/**
 * A sign-in that failed: the engine's error and, once the callback was proved to belong to this sign-in (its state
 * matched the browser's transaction), the loopback address to report it to.
 */
export class SignInFailed extends Schema.TaggedError<SignInFailed>()("SignInFailed", {
  callback: Schema.optional(Schema.String),
  /** The client's `state`, to be handed back with the failure. */
  state: Schema.optional(Schema.String),
  cause: Errors.ArborError
}) {}

/**
 * True for a callback a browser may be sent back to: plain http on a loopback host with a port (RFC 8252 §7.3),
 * nothing else (no user info, no fragment).
 */
export const isLoopbackCallback = (callback: string): boolean => {
  if (!/^http:\/\/(localhost|127\.0\.0\.1|\[::1\]):\d{1,5}(\/[^#\s]*)?$/.test(callback)) return false
  try {
    const url = new URL(callback)
    return url.protocol === "http:" && url.port !== "" && url.username === "" && url.password === "" &&
      ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname)
  } catch {
    return false
  }
}

/** A user code as people type it, folded: upper case, letters only (`abcd-efgh` is `ABCDEFGH`). */
export const foldUserCode = (typed: string): string => typed.toUpperCase().replace(/[^A-Z]/g, "")

/** A user code as shown: `ABCD-EFGH`. */
export const formatUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`
