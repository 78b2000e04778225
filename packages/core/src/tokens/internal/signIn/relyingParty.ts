/**
 * The OpenID relying party of sign-ins, on `oauth4webapi` (a certified OpenID client): the authorization request with
 * PKCE (S256), `state` and `nonce`; the callback's parameters checked (RFC 9207's `iss` where the provider sends
 * it); the code redeemed and the ID token validated (issuer, audience, `azp`, times, nonce), its signature verified
 * against the provider's published keys besides; the email from userinfo when the ID token lacks it. Every request to
 * the provider goes through `IssuerKeys`, within its limits and `Egress`'s address checks.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as jose from "jose"
import * as oauth from "oauth4webapi"
import { PermissionDenied, Unavailable } from "../../../engine/Errors.js"
import { Settings } from "../../../engine/Settings.js"
import * as IssuerUrl from "../../IssuerUrl.js"
import { algorithms, clockToleranceSeconds } from "../../Sts.js"
import { IssuerKeys, IssuerKeysUnavailable } from "../issuerKeys.js"
import type { Keys } from "../issuerKeys.js"
import type { Claims } from "./person.js"
import type { Provider } from "./providers.js"

/** What a sign-in keeps between its start and its callback. */
export interface Secrets {
  readonly state: string
  readonly nonce: string
  readonly verifier: string
}

/** The callback's parameters, as the provider sent them to the browser. */
export interface Callback {
  readonly state?: string | undefined
  readonly code?: string | undefined
  readonly error?: string | undefined
  readonly iss?: string | undefined
}

/** Fresh random values for a sign-in: `state`, `nonce` and the PKCE verifier. */
export const secrets = (): Secrets => ({
  state: oauth.generateRandomState(),
  nonce: oauth.generateRandomNonce(),
  verifier: oauth.generateRandomCodeVerifier()
})

const unreachable = (reason: string, detail: string) =>
  new Unavailable({
    description: "the sign-in provider cannot be reached",
    reason: "PROVIDER_UNAVAILABLE",
    logDetail: `${reason}: ${detail}`
  })

const message = (error: unknown) => error instanceof Error ? error.message : String(error)

export const make = Effect.gen(function*() {
  const issuerKeys = yield* IssuerKeys
  const settings = yield* Settings
  const runtime = yield* Effect.runtime<never>()
  const run = Runtime.runPromise(runtime)

  /** The provider's keys and metadata, or why it cannot be reached. */
  const keysOf = (issuer: string, kid?: string) =>
    Effect.mapError(issuerKeys.get(issuer, kid), (e) => unreachable(e.reason, e.detail))

  /** The provider as `oauth4webapi` describes an authorization server. */
  const server = (keys: Keys): oauth.AuthorizationServer => {
    const { id_token_signing_alg_values_supported: algorithms, ...metadata } = keys.metadata
    return {
      ...metadata,
      issuer: keys.issuer,
      ...(algorithms === undefined ? {} : { id_token_signing_alg_values_supported: [...algorithms] })
    }
  }

  /** How `oauth4webapi` reaches the provider: through `IssuerKeys`, whose failures it rethrows as they are. */
  const fetchVia =
    (issuer: string) =>
    async (url: string, options: oauth.CustomFetchOptions<"GET" | "POST", URLSearchParams | undefined>) => {
      const request = HttpClientRequest.make(options.method === "POST" ? "POST" : "GET")(url).pipe(
        HttpClientRequest.setHeaders(options.headers),
        options.body instanceof URLSearchParams
          ? HttpClientRequest.bodyText(options.body.toString(), "application/x-www-form-urlencoded")
          : (r) => r
      )
      const answer = await run(Effect.either(issuerKeys.request(issuer, request)))
      if (Either.isLeft(answer)) throw answer.left
      return new Response(answer.right.body, { status: answer.right.status, headers: answer.right.headers })
    }

  /** The options of every request to the provider, and its clock as the engine's. */
  const options = (issuer: string) => ({
    [oauth.customFetch]: fetchVia(issuer),
    [oauth.allowInsecureRequests]: settings.allowLoopbackHttpIssuers
  })

  const clientOf = (provider: Provider) =>
    Effect.map(Clock.currentTimeMillis, (now): oauth.Client => ({
      client_id: provider.clientId,
      [oauth.clockSkew]: Math.round((now - Date.now()) / 1000),
      [oauth.clockTolerance]: clockToleranceSeconds
    }))

  /** Where to send the person's browser: the provider's authorization endpoint, with this sign-in's values. */
  const authorizationUrl = (provider: Provider, values: Secrets, redirectUri: string) =>
    Effect.gen(function*() {
      const keys = yield* keysOf(provider.issuer)
      const endpoint = keys.metadata.authorization_endpoint
      if (
        endpoint === undefined ||
        IssuerUrl.error(endpoint, { allowLoopback: settings.allowLoopbackHttpIssuers, allowQuery: true }) !== undefined
      ) {
        return yield* unreachable("INSECURE_AUTHORIZATION_ENDPOINT", String(endpoint))
      }
      const challenge = yield* Effect.promise(() => oauth.calculatePKCECodeChallenge(values.verifier))
      const location = new URL(endpoint)
      const scopes = [
        "openid",
        "email",
        "profile",
        ...provider.scopes.filter((s) => !["openid", "email", "profile"].includes(s))
      ]
      for (
        const [key, value] of Object.entries({
          response_type: "code",
          client_id: provider.clientId,
          redirect_uri: redirectUri,
          scope: scopes.join(" "),
          state: values.state,
          nonce: values.nonce,
          code_challenge: challenge,
          code_challenge_method: "S256"
        })
      ) location.searchParams.set(key, value)
      return location.href
    })

  /**
   * Redeems the callback's code for the person's claims: the parameters checked against the sign-in's `state` (and
   * `iss`), the code exchanged with the sign-in's PKCE verifier, the ID token validated and its signature verified.
   */
  const redeem = (provider: Provider, callback: Callback, values: Secrets, redirectUri: string) =>
    Effect.gen(function*() {
      const deny = (reason: string, detail: string) =>
        new PermissionDenied({ capability: "sign_in", resource: provider.issuer, reason, logDetail: detail })
      const keys = yield* keysOf(provider.issuer)
      const as = server(keys)
      const client = yield* clientOf(provider)
      const auth = provider.clientSecret === "" ? oauth.None() : oauth.ClientSecretBasic(provider.clientSecret)
      const parameters = new URLSearchParams()
      for (const [key, value] of Object.entries(callback)) if (typeof value === "string") parameters.set(key, value)
      const attempt = <A>(step: () => Promise<A>, reason: string) =>
        Effect.tryPromise({
          try: step,
          catch: (error) =>
            error instanceof IssuerKeysUnavailable
              ? unreachable(error.reason, error.detail)
              : deny(reason, message(error))
        })
      const checked = yield* Effect.try({
        try: () => oauth.validateAuthResponse(as, client, parameters, values.state),
        catch: (error) =>
          deny(
            error instanceof oauth.AuthorizationResponseError ? "PROVIDER_REFUSED" : "INVALID_CALLBACK",
            message(error)
          )
      })
      const response = yield* attempt(
        () =>
          oauth.authorizationCodeGrantRequest(
            as,
            client,
            auth,
            checked,
            redirectUri,
            values.verifier,
            options(provider.issuer)
          ),
        "CODE_REJECTED"
      )
      const result = yield* attempt(
        () =>
          oauth.processAuthorizationCodeResponse(as, client, response, {
            expectedNonce: values.nonce,
            requireIdToken: true
          }),
        "INVALID_ID_TOKEN"
      )
      const claims = oauth.getValidatedIdTokenClaims(result)
      if (claims === undefined || result.id_token === undefined) {
        return yield* deny("NO_ID_TOKEN", "the token endpoint gave no id_token")
      }
      // The token endpoint answered over a checked connection; its signature is verified all the same.
      const idToken = result.id_token
      const kid = Option.liftThrowable(jose.decodeProtectedHeader)(idToken).pipe(Option.flatMapNullable((h) => h.kid))
      const signed = yield* keysOf(provider.issuer, Option.getOrUndefined(kid))
      yield* Effect.tryPromise({
        try: () => jose.compactVerify(idToken, signed.keySet, { algorithms: [...algorithms] }),
        catch: (error) => deny("INVALID_ID_TOKEN", message(error))
      })
      // Providers that keep the ID token small give the email and name at their userinfo endpoint instead.
      const profile: Record<string, unknown> = claims.email !== undefined || as.userinfo_endpoint === undefined
        ? claims
        : yield* attempt(
          () =>
            oauth.userInfoRequest(as, client, result.access_token, options(provider.issuer)).then((answer) =>
              oauth.processUserInfoResponse(as, client, claims.sub, answer)
            ),
          "NO_USERINFO"
        ).pipe(Effect.catchAll((error) => Effect.as(Effect.logInfo("no userinfo", error.message), claims)))
      const email = typeof profile.email === "string" && profile.email.length <= 320 ? profile.email : undefined
      const groupsClaim = provider.record?.oidc.groupsClaim ?? ""
      return {
        issuer: provider.issuer,
        subject: claims.sub,
        email,
        emailVerified: email !== undefined && profile.email_verified === true,
        name: typeof profile.name === "string" ? profile.name.slice(0, 256) : undefined,
        ...(groupsClaim === "" ? {} : { groups: groupsOf(claims[groupsClaim] ?? profile[groupsClaim]) })
      } satisfies Claims
    })

  return { authorizationUrl, redeem }
})

/** The values of a groups claim: its strings (one string is one group), at most 1,000 of at most 256 characters. */
const groupsOf = (claim: unknown): ReadonlyArray<string> =>
  (Array.isArray(claim) ? claim : [claim])
    .filter((group): group is string => typeof group === "string" && group.length > 0 && group.length <= 256)
    .slice(0, 1000)
