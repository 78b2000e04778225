/**
 * The sign-in endpoints (docs/api.md §10) on the API's router: the browser flow (`/oauth`, `/oauth/callback`), the
 * headless flow (`/oauth/device/code`, the verification page `/oauth/device`, `/oauth/token`) and revocation
 * (`/oauth/revoke`). They speak OAuth: query strings and form bodies in; redirects, pages, or OAuth's JSON out.
 */
import * as ErrorBody from "@arbor/api/ErrorBody"
import * as OAuth from "@arbor/api/OAuth"
import { RefreshTokens, SignIn, SignIns, Sts, TokenIssuer } from "@arbor/core"
import type { Errors } from "@arbor/core"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { timingSafeEqual } from "node:crypto"
import * as ClientAddress from "./ClientAddress.js"
import * as SignInLimits from "./SignInLimits.js"
import * as Pages from "./SignInPages.js"

/** The cookie that ties a browser to its sign-in in progress. */
export const loginCookie = "arbor_login"

/** The cookie that proves a device confirmation was posted from the confirmation page itself. */
const csrfCookie = "arbor_device"

const queryOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://localhost").searchParams

const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => new URLSearchParams(text))

const optional = (value: string | null) => value === null || value === "" ? undefined : value

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** A redirect that no cache keeps and whose target learns nothing of where it came from. */
const redirect = (location: string) =>
  HttpServerResponse.redirect(location, { status: 302 }).pipe(
    HttpServerResponse.setHeaders({ "cache-control": "no-store", "referrer-policy": "no-referrer" })
  )

/**
 * `callback` with `params` added: to its query for a loopback callback; in its fragment for the console
 * (`ownCallback`), so that a token never reaches a log or a `Referer` of the server's own pages.
 */
const withParams = (callback: string, params: Record<string, string | undefined>, ownCallback: string) => {
  const url = new URL(callback)
  const given = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined) given.set(key, value)
  if (callback === ownCallback) url.hash = given.toString()
  else for (const [key, value] of given) url.searchParams.set(key, value)
  return url.href
}

/** The longest `state` a client may have handed back. */
const maxStateLength = 512

/** OAuth's JSON answer, never cached. */
const oauthJson = (body: unknown, status = 200) =>
  HttpServerResponse.unsafeJson(body, { status }).pipe(
    HttpServerResponse.setHeaders({ "cache-control": "no-store", pragma: "no-cache" })
  )

/**
 * The sign-in endpoints, for a server whose token service is at `authUrl`, each client told by its address (from
 * `clientAddressHeader` when a trusted proxy sets one) for the limits on them.
 */
export const layer = (options: {
  readonly authUrl: string
  /** The console's address, where `exit=console` returns (`Console.addressOf`). */
  readonly consoleUrl: string
  readonly errorDomain: string
  readonly clientAddressHeader: string | undefined
}) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const signIns = yield* SignIns.SignIns
      const refreshTokens = yield* RefreshTokens.RefreshTokens
      const sts = yield* Sts.Sts
      const tokens = yield* TokenIssuer.TokenIssuer
      const limits = SignInLimits.make()
      // The server as each page names it.
      const server = new URL(options.authUrl).host
      const addressOf = (request: HttpServerRequest.HttpServerRequest) =>
        ClientAddress.of(request, options.clientAddressHeader)
      /** A refusal for too many requests: 429 with `Retry-After`, on a page or as OAuth's JSON. */
      const tooMany = (error: Errors.ResourceExhausted, as: "page" | "json") =>
        Effect.as(
          logged(error),
          HttpServerResponse.setHeader(
            as === "page"
              ? Pages.error(server, 429, error.message)
              : oauthJson({ error: "temporarily_unavailable", error_description: error.message }, 429),
            "retry-after",
            String(error.retryAfterSeconds)
          )
        )
      const secure = options.authUrl.startsWith("https:")
      const cookie = (path: string, sameSite: "lax" | "strict") => ({
        path,
        httpOnly: true,
        secure,
        sameSite,
        maxAge: "10 minutes" as const
      })
      const setLogin = (transaction: string) =>
        HttpServerResponse.unsafeSetCookie(loginCookie, transaction, cookie(OAuth.paths.authorization, "lax"))
      const clearLogin = HttpServerResponse.unsafeSetCookie(loginCookie, "", {
        ...cookie(OAuth.paths.authorization, "lax"),
        maxAge: 0
      })
      const statusOf = (error: Errors.ArborError) => ErrorBody.render(error, options.errorDomain).status
      const logged = (error: Errors.ArborError) =>
        Effect.logInfo("sign-in refused").pipe(
          Effect.annotateLogs({
            reason: error.reason ?? error._tag,
            ...("logDetail" in error && error.logDetail !== undefined ? { detail: error.logDetail } : {})
          })
        )
      /**
       * RFC 8693's token exchange at the token endpoint: the STS's exchange (the same rules, the same API token) in
       * the shape a generic client sends it. `subject_token` is the workload's JWT (`subject_token_type` jwt,
       * id_token or access_token), `audience` (or `resource`, which must agree) the API token's audience, by default
       * the API's base URL, no `actor_token` (RFC 8693 §2.1: refused, as no delegated token is issued), `scope` narrows it to groups (space-separated uids), and `identity`, this server's extension parameter,
       * names the identity to assume. Errors are RFC 6749 §5.2's: a missing or unsupported parameter
       * `invalid_request`, an audience not served `invalid_target`, a subject token that does not verify or match
       * `invalid_grant`.
       */
      const tokenExchange = (
        form: URLSearchParams,
        invalid: (description: string) => HttpServerResponse.HttpServerResponse
      ) =>
        Effect.gen(function*() {
          const subjectToken = form.get("subject_token") ?? ""
          if (subjectToken === "") return invalid("subject_token is required")
          const subjectType = form.get("subject_token_type") ?? ""
          const jwt = [
            SignIn.tokenTypes.jwt,
            SignIn.tokenTypes.idToken,
            SignIn.tokenTypes.accessToken
          ] as ReadonlyArray<string>
          if (!jwt.includes(subjectType)) return invalid(`subject_token_type must be one of ${jwt.join(", ")}`)
          const requested = form.get("requested_token_type") ?? ""
          if (requested !== "" && requested !== SignIn.tokenTypes.jwt && requested !== SignIn.tokenTypes.accessToken) {
            return invalid(`requested_token_type must be ${SignIn.tokenTypes.jwt} or ${SignIn.tokenTypes.accessToken}`)
          }
          // RFC 8693 §2.1: an actor token is processed or refused; Arbor issues no delegated tokens.
          if (form.has("actor_token") || form.has("actor_token_type")) {
            return invalid("actor_token is not supported: this server issues no delegated (act-as) tokens")
          }
          // The audience, named once: `audience` and `resource` (each repeatable) must agree.
          const audiences = [...new Set([...form.getAll("audience"), ...form.getAll("resource")])]
          if (audiences.length > 1) {
            return oauthJson({
              error: "invalid_target",
              error_description: `audience and resource name more than one audience (${audiences.join(", ")}): ` +
                "name the one this token is for"
            }, 400)
          }
          const identity = form.get("identity") ?? ""
          if (identity === "") return invalid("identity is required: the uid of the identity to assume")
          const scope = (form.get("scope") ?? "").split(" ").filter((s) => s !== "")
          const now = yield* DateTime.now
          return yield* sts.exchange({
            token: subjectToken,
            audience: audiences[0] ?? tokens.audience,
            identity,
            ...(scope.length === 0 ? {} : { scopes: scope })
          }).pipe(
            Effect.map((exchanged) =>
              oauthJson({
                access_token: exchanged.token,
                issued_token_type: requested === "" ? SignIn.tokenTypes.jwt : requested,
                token_type: "Bearer",
                expires_in: Math.round((exchanged.expiry.epochMillis - now.epochMillis) / 1000)
              })
            ),
            Effect.catchAll((error) => {
              switch (error._tag) {
                case "InvalidArgument": {
                  const field = error.violations[0].field
                  return Effect.succeed(
                    oauthJson({
                      error: field === "aud" ? "invalid_target" : "invalid_request",
                      error_description: error.message
                    }, 400)
                  )
                }
                case "Unauthenticated":
                case "PermissionDenied":
                  return Effect.as(
                    logged(error),
                    oauthJson({ error: "invalid_grant", error_description: "the subject token was refused" }, 400)
                  )
                case "Unavailable":
                  return Effect.succeed(
                    oauthJson({ error: "temporarily_unavailable", error_description: error.message }, 503)
                  )
                default:
                  return Effect.as(
                    logged(error),
                    oauthJson({ error: "server_error", error_description: error.message }, 500)
                  )
              }
            })
          )
        })

      /** A failure reported to the loopback callback when there is one, else on an error page. */
      const failed = (error: Errors.ArborError, callback: string | undefined, state?: string | undefined) =>
        Effect.as(
          logged(error),
          callback === undefined
            ? Pages.error(server, statusOf(error), error.message)
            : redirect(withParams(
              callback,
              { error: error.message, status_code: String(statusOf(error)), state },
              options.consoleUrl
            ))
        )
      const verificationUri = `${options.authUrl}${OAuth.paths.verification}`

      yield* router.get(
        OAuth.paths.authorization,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const query = queryOf(request)
          const exit = query.get("exit")
          if (exit !== null && exit !== "redirect" && exit !== "console") {
            return Pages.error(server, 400, "Invalid argument: exit: must be redirect or console")
          }
          // The console's sign-in returns to the console, at the address the server was configured with.
          const callback = exit === "console" ? options.consoleUrl : optional(query.get("redirect"))
          const state = optional(query.get("state"))
          if (state !== undefined && state.length > maxStateLength) {
            return Pages.error(server, 400, `Invalid argument: state: must be at most ${maxStateLength} characters`)
          }
          const refused = limits.start(addressOf(request))
          if (refused !== undefined) {
            return yield* tooMany(refused, "page")
          }
          return yield* signIns.begin({
            provider: optional(query.get("idp_id")),
            audience: optional(query.get("audience")),
            callback,
            invite: optional(query.get("invite")),
            refresh: query.get("create_refresh_token") === "true",
            state
          }).pipe(
            Effect.map(({ location, transaction }) => setLogin(transaction)(redirect(location))),
            Effect.catchAll((error) =>
              failed(
                error,
                callback !== undefined && (SignIn.isLoopbackCallback(callback) || callback === options.consoleUrl)
                  ? callback
                  : undefined,
                state
              )
            )
          )
        })
      )

      yield* router.get(
        OAuth.paths.callback,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const query = queryOf(request)
          const response = yield* signIns.complete({
            transaction: request.cookies[loginCookie],
            state: optional(query.get("state")),
            code: optional(query.get("code")),
            error: optional(query.get("error")),
            iss: optional(query.get("iss"))
          }).pipe(
            Effect.map((done) =>
              done._tag === "Device" ? Pages.signedIn(server, done.account) : redirect(withParams(done.callback, {
                token: done.tokens.token,
                refresh_token: done.tokens.refreshToken?.token,
                state: done.state
              }, options.consoleUrl))
            ),
            Effect.catchAll((failure) => failed(failure.cause, failure.callback, failure.state))
          )
          return clearLogin(response)
        })
      )

      yield* router.post(
        OAuth.paths.deviceAuthorization,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const refused = limits.start(addressOf(request))
          if (refused !== undefined) return yield* tooMany(refused, "json")
          const form = yield* formOf(request)
          return yield* signIns.authorizeDevice({
            provider: optional(form.get("idp_id")),
            audience: optional(form.get("audience")),
            invite: optional(form.get("invite")),
            refresh: form.get("create_refresh_token") === "true"
          }).pipe(
            Effect.map((device) =>
              oauthJson(
                {
                  device_code: device.deviceCode,
                  user_code: device.userCode,
                  verification_uri: verificationUri,
                  verification_uri_complete: `${verificationUri}?user_code=${device.userCode}`,
                  expires_in: device.expiresIn,
                  interval: device.interval
                } satisfies OAuth.DeviceAuthorization
              )
            ),
            Effect.catchAll((error) =>
              Effect.as(
                logged(error),
                oauthJson({ error: "invalid_request", error_description: error.message }, statusOf(error))
              )
            )
          )
        })
      )

      yield* router.get(
        OAuth.paths.verification,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const typed = optional(queryOf(request).get("user_code"))
          if (typed === undefined) return Pages.enterCode(server, OAuth.paths.verification)
          const address = addressOf(request)
          const blocked = limits.checkUserCode(address)
          if (blocked !== undefined) return yield* tooMany(blocked, "page")
          return yield* signIns.pendingDevice(typed).pipe(
            Effect.map((userCode) => {
              const csrf = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")
              return HttpServerResponse.unsafeSetCookie(csrfCookie, csrf, cookie(OAuth.paths.verification, "strict"))(
                Pages.confirmCode(server, OAuth.paths.verification, userCode, csrf)
              )
            }),
            Effect.catchAll((error) =>
              error._tag === "NotFound"
                ? Effect.sync(() => limits.wrongUserCode(address)).pipe(Effect.as(
                  Pages.enterCode(
                    server,
                    OAuth.paths.verification,
                    "That code is not valid or has expired. Check it and try again."
                  )
                ))
                : failed(error, undefined)
            )
          )
        })
      )

      yield* router.post(
        OAuth.paths.verification,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const form = yield* formOf(request)
          const userCode = form.get("user_code") ?? ""
          const expected = request.cookies[csrfCookie] ?? ""
          if (expected === "" || !sameText(expected, form.get("csrf") ?? "")) {
            return Pages.error(
              server,
              400,
              "This confirmation did not come from this page. Open the sign-in address again."
            )
          }
          const address = addressOf(request)
          const refused = limits.checkUserCode(address) ??
            (form.get("action") === "deny" ? undefined : limits.start(address))
          if (refused !== undefined) return yield* tooMany(refused, "page")
          const done = form.get("action") === "deny"
            ? Effect.as(signIns.denyDevice(userCode), Pages.refused(server))
            : Effect.map(
              signIns.beginDevice(userCode),
              ({ location, transaction }) => setLogin(transaction)(Pages.continueTo(server, location))
            )
          return yield* done.pipe(
            Effect.tapErrorTag("NotFound", () => Effect.sync(() => limits.wrongUserCode(address))),
            Effect.catchAll((error) => failed(error, undefined))
          )
        })
      )

      yield* router.post(
        OAuth.paths.token,
        Effect.gen(function*() {
          const form = yield* formOf(yield* HttpServerRequest.HttpServerRequest)
          // RFC 6749 §5.2: a missing or repeated parameter is `invalid_request`; a grant type not served here is
          // `unsupported_grant_type`; a device code that is not one is `invalid_grant` (from `poll`).
          const invalid = (description: string) =>
            oauthJson({ error: "invalid_request", error_description: description }, 400)
          const repeated = [...new Set(form.keys())].find((name) => form.getAll(name).length > 1)
          if (repeated !== undefined) return invalid(`${repeated} is given more than once`)
          const grantType = form.get("grant_type") ?? ""
          if (grantType === "") return invalid("grant_type is required")
          if (grantType === SignIn.tokenExchangeGrant) return yield* tokenExchange(form, invalid)
          if (grantType !== OAuth.deviceCodeGrant) {
            return oauthJson({
              error: "unsupported_grant_type",
              error_description: `grant_type must be ${OAuth.deviceCodeGrant} or ${SignIn.tokenExchangeGrant}`
            }, 400)
          }
          const deviceCode = form.get("device_code") ?? ""
          if (deviceCode === "") return invalid("device_code is required")
          const now = yield* DateTime.now
          return yield* signIns.poll(deviceCode).pipe(
            Effect.map((tokens) =>
              oauthJson(
                {
                  access_token: tokens.token,
                  token_type: "Bearer",
                  expires_in: Math.round((tokens.expiry.epochMillis - now.epochMillis) / 1000),
                  ...(tokens.refreshToken === undefined ? {} : {
                    refresh_token: tokens.refreshToken.token,
                    refresh_token_expires_in: Math.round(
                      (tokens.refreshToken.expiry.epochMillis - now.epochMillis) / 1000
                    )
                  })
                } satisfies OAuth.TokenResponse
              )
            ),
            Effect.catchAll((error) =>
              error._tag === "DeviceGrantError"
                ? Effect.succeed(oauthJson({ error: error.error, error_description: error.description }, 400))
                : Effect.as(logged(error), oauthJson({ error: "server_error", error_description: error.message }, 500))
            )
          )
        })
      )

      yield* router.post(
        OAuth.paths.revocation,
        Effect.gen(function*() {
          const form = yield* formOf(yield* HttpServerRequest.HttpServerRequest)
          const token = form.get("token")
          if (token === null || token === "") {
            return oauthJson({ error: "invalid_request", error_description: "token is required" }, 400)
          }
          yield* refreshTokens.revoke(token)
          return HttpServerResponse.empty({ status: 200 }).pipe(
            HttpServerResponse.setHeader("cache-control", "no-store")
          )
        })
      )
    })
  )
