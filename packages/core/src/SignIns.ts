/**
 * The SignIns service (docs/api.md §10): people sign in through an OpenID provider, the server's own or an
 * organization's `IdentityProvider`, with the authorization code flow (PKCE S256, `state`, `nonce`), from a browser
 * that returns to a loopback callback or, headless, through a device authorization (RFC 8628). Every step is kept in
 * the store, so any server may take the next one.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as jose from "jose"
import { createHash, timingSafeEqual } from "node:crypto"
import type { ArborError } from "./Errors.js"
import {
  FailedPrecondition,
  InvalidArgument,
  NotFound,
  PermissionDenied,
  PreconditionViolation,
  Unavailable
} from "./Errors.js"
import * as Group from "./Group.js"
import * as Identity from "./Identity.js"
import * as IdentityProvider from "./IdentityProvider.js"
import { unexpectedConflict } from "./internal/operations.js"
import { operation } from "./internal/tracing.js"
import { IssuerKeys } from "./IssuerKeys.js"
import * as IssuerUrl from "./IssuerUrl.js"
import { People } from "./People.js"
import { RefreshTokens } from "./RefreshTokens.js"
import * as Repository from "./Repository.js"
import * as Sealing from "./Sealing.js"
import { Secrets } from "./Secrets.js"
import { Settings } from "./Settings.js"
import * as SignIn from "./SignIn.js"
import type { Row } from "./Store.js"
import { Store } from "./Store.js"
import { algorithms, clockToleranceSeconds } from "./Sts.js"
import { TokenIssuer } from "./TokenIssuer.js"
import * as Uid from "./Uid.js"

/** What a sign-in asks for. */
export interface SignInRequest {
  /** `idp_id`: an identity provider's uid, or an organization's uid or name; absent for the server's own. */
  readonly provider?: string | undefined
  /** The audience of the API token; the API's own by default. */
  readonly audience?: string | undefined
  /** The loopback address the browser returns to. */
  readonly callback?: string | undefined
  /** An invite code to redeem at sign-in. */
  readonly invite?: string | undefined
  /** Whether to hand out a refresh token too. */
  readonly refresh?: boolean | undefined
}

/** What a finished sign-in hands out. */
export interface Tokens {
  readonly token: string
  readonly expiry: DateTime.Utc
  readonly refreshToken?: { readonly token: string; readonly expiry: DateTime.Utc } | undefined
}

/** A finished browser sign-in: the tokens for its callback, or, for a device's, nothing (its client collects). */
export type Completed =
  | { readonly _tag: "Browser"; readonly callback: string; readonly tokens: Tokens }
  | { readonly _tag: "Device" }

/** What a device's client is given (RFC 8628 §3.2). */
export interface DeviceAuthorization {
  readonly deviceCode: string
  /** As shown: `ABCD-EFGH`. */
  readonly userCode: string
  readonly expiresIn: number
  readonly interval: number
}

interface Provider {
  /** The identity provider's uid; empty for the server's own. */
  readonly id: string
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  readonly scopes: ReadonlyArray<string>
  readonly record?: IdentityProvider.Record | undefined
}

const random = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url")

const sha256 = (text: string) => createHash("sha256").update(text).digest()

const same = (a: string, b: string) => {
  const x = sha256(a)
  const y = sha256(b)
  return timingSafeEqual(x, y)
}

const newUserCode = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => SignIn.userCodeAlphabet[b % 20]).join("")

const refused = (type: string, summary: string) =>
  new FailedPrecondition({
    summary,
    violations: [new PreconditionViolation({ type, subject: "", description: summary })]
  })

const deviceError = (error: SignIn.DeviceGrantError["error"], description: string) =>
  new SignIn.DeviceGrantError({ error, description })

/** Sign-ins. */
export class SignIns extends Effect.Service<SignIns>()("@arbor/core/SignIns", {
  effect: Effect.gen(function*() {
    const store = yield* Store
    const tokens = yield* TokenIssuer
    const refreshTokens = yield* RefreshTokens
    const people = yield* People
    const issuerKeys = yield* IssuerKeys
    const login = yield* SignIn.LoginSettings
    const settings = yield* Settings
    const providers = yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)
    const groups = yield* Repository.make(Group.table, Group.Group)
    const redirectUri = login.redirectUri ?? `${tokens.issuer}/oauth/callback`
    const identities = yield* Repository.make(Identity.table, Identity.Identity)
    const stored = Repository.orInternal

    const { sealing } = yield* Secrets
    const providerOf = (record: IdentityProvider.Record) =>
      Effect.map(Sealing.open(sealing, record.oidc.clientSecret), (clientSecret): Provider => ({
        id: record.uid,
        issuer: record.oidc.issuer,
        clientId: record.oidc.clientId,
        clientSecret,
        scopes: record.oidc.additionalScopes,
        record
      }))

    /** The provider `idp_id` names: an identity provider, an organization's (by uid or name), or the server's. */
    const resolve = (idp: string | undefined) =>
      Effect.gen(function*() {
        if (idp === undefined || idp === "") {
          const own = login.provider
          if (own === undefined) {
            return yield* refused("NO_PROVIDER", "this server has no sign-in provider; name an organization's (idp_id)")
          }
          return {
            id: "",
            issuer: own.issuer,
            clientId: own.clientId,
            clientSecret: Redacted.value(own.clientSecret),
            scopes: own.scopes
          } satisfies Provider
        }
        const notFound = new NotFound({ resourceType: "identity provider", uid: idp })
        if (Uid.isUid(idp) && Uid.parentOrNull(idp) !== null) {
          const record = yield* providers.get(idp)
          return Option.isSome(record) ? yield* providerOf(record.value) : yield* notFound
        }
        let organization: string | undefined = Uid.isUid(idp) ? idp : undefined
        if (organization === undefined) {
          const [named] = yield* groups.find({
            conditions: [{ _tag: "Equals", column: "parent", value: null }, {
              _tag: "Equals",
              column: "name",
              value: idp
            }],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          })
          if (named === undefined) return yield* notFound
          organization = named.uid
        }
        const [record] = yield* providers.find({
          conditions: [{ _tag: "Equals", column: "parent", value: organization }],
          order: [{ column: "name", direction: "asc" }, { column: "uid", direction: "asc" }],
          limit: 1
        })
        return record === undefined ? yield* notFound : yield* providerOf(record)
      })

    const unreachable = (e: { readonly reason: string; readonly detail: string }) =>
      new Unavailable({
        description: "the sign-in provider cannot be reached",
        reason: "PROVIDER_UNAVAILABLE",
        logDetail: `${e.reason}: ${e.detail}`
      })

    const audienceOf = (audience: string | undefined) =>
      audience === undefined || audience === ""
        ? Effect.succeed(tokens.audience)
        : tokens.audiences.includes(audience)
        ? Effect.succeed(audience)
        : Effect.fail(InvalidArgument.field("audience", "must be the API's base URL or another configured audience"))

    /** Drops sign-ins in progress that have expired (a few at a time, whenever a new one starts). */
    const sweep = (now: number) =>
      Effect.forEach([SignIn.transactionsTable, SignIn.devicesTable], (table) =>
        Effect.gen(function*() {
          const oldest = yield* store.find(table, {
            order: [{ column: "expireTime", direction: "asc" }, {
              column: "uid",
              direction: "asc"
            }],
            limit: 20
          })
          const expired = oldest.filter((row) => Number(row.expireTime) <= now).map((row) => row.uid)
          if (expired.length > 0) {
            yield* store.delete(table, { conditions: [{ _tag: "In", column: "uid", values: expired }] })
          }
        }), { discard: true })

    /** Starts a sign-in: a transaction kept for its callback, and the provider's address to send the browser to. */
    const begin = (request: SignInRequest & { readonly device?: string | undefined }) =>
      Effect.gen(function*() {
        const audience = yield* audienceOf(request.audience)
        if (request.device === undefined && !SignIn.isLoopbackCallback(request.callback ?? "")) {
          return yield* InvalidArgument.field(
            "redirect",
            "must be a loopback address: http://localhost:<port>/…, http://127.0.0.1:<port>/… or http://[::1]:<port>/…"
          )
        }
        const provider = yield* resolve(request.provider)
        const keys = yield* issuerKeys.get(provider.issuer).pipe(Effect.mapError(unreachable))
        const endpoint = keys.endpoints.authorization
        const insecure = endpoint === undefined ||
          IssuerUrl.error(endpoint, { allowLoopback: settings.allowLoopbackHttpIssuers, allowQuery: true }) !==
            undefined
        if (insecure) {
          return yield* unreachable({ reason: "INSECURE_AUTHORIZATION_ENDPOINT", detail: String(endpoint) })
        }
        const now = (yield* DateTime.now).epochMillis
        const transaction = Uid.makeRoot()
        const state = random(32)
        const nonce = random(32)
        const verifier = random(32)
        yield* stored(store.transaction(Effect.zipRight(
          sweep(now),
          unexpectedConflict(store.insert(SignIn.transactionsTable, {
            uid: transaction,
            parent: null,
            state,
            nonce,
            verifier,
            provider: provider.id,
            callback: request.device === undefined ? request.callback! : null,
            audience,
            invite: request.invite ?? null,
            refresh: request.refresh === true,
            device: request.device ?? null,
            expireTime: now + Duration.toMillis(SignIn.transactionLifetime),
            createTime: now
          }))
        )))
        const location = new URL(endpoint!)
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
            state,
            nonce,
            code_challenge: sha256(verifier).toString("base64url"),
            code_challenge_method: "S256"
          })
        ) location.searchParams.set(key, value)
        return { transaction, location: location.href }
      })

    /** Takes a transaction out of the store: it is used once, whatever happens next. */
    const take = (uid: string) =>
      stored(store.transaction(Effect.gen(function*() {
        const row = yield* store.get(SignIn.transactionsTable, uid)
        if (Option.isSome(row)) yield* store.delete(SignIn.transactionsTable, { ranges: [Uid.only(uid)] })
        return Option.getOrUndefined(row)
      })))

    /** Redeems the code at the provider and verifies the ID token it answers with. */
    const redeem = (provider: Provider, code: string, transaction: Row) =>
      Effect.gen(function*() {
        const keys = yield* issuerKeys.get(provider.issuer).pipe(Effect.mapError(unreachable))
        const endpoint = keys.endpoints.token
        if (endpoint === undefined) return yield* unreachable({ reason: "NO_TOKEN_ENDPOINT", detail: provider.issuer })
        const form = {
          grant_type: "authorization_code",
          code,
          redirect_uri: redirectUri,
          code_verifier: String(transaction.verifier),
          ...(provider.clientSecret === "" ? { client_id: provider.clientId } : {})
        }
        const basic = (s: string) => encodeURIComponent(s).replace(/%20/g, "+")
        const answer = yield* issuerKeys.requestJson(
          provider.issuer,
          HttpClientRequest.post(endpoint).pipe(
            HttpClientRequest.bodyUrlParams(form),
            provider.clientSecret === ""
              ? (r) => r
              : HttpClientRequest.basicAuth(basic(provider.clientId), basic(provider.clientSecret))
          )
        ).pipe(Effect.mapError((e) =>
          new PermissionDenied({
            capability: "sign_in",
            resource: provider.issuer,
            reason: "CODE_REJECTED",
            logDetail: `${e.reason}: ${e.detail}`
          })
        ))
        const idToken = (answer as { id_token?: unknown } | null)?.id_token
        const deny = (reason: string, detail: string) =>
          new PermissionDenied({ capability: "sign_in", resource: provider.issuer, reason, logDetail: detail })
        if (typeof idToken !== "string") return yield* deny("NO_ID_TOKEN", "the token endpoint gave no id_token")
        const kid = Option.liftThrowable(jose.decodeProtectedHeader)(idToken).pipe(Option.flatMapNullable((h) => h.kid))
        const verifiedKeys = yield* issuerKeys.get(provider.issuer, Option.getOrUndefined(kid)).pipe(
          Effect.mapError(unreachable)
        )
        const at = (yield* DateTime.now).epochMillis
        const { payload } = yield* Effect.tryPromise({
          try: () =>
            jose.jwtVerify(idToken, verifiedKeys.keySet, {
              algorithms: [...algorithms],
              issuer: provider.issuer,
              audience: provider.clientId,
              requiredClaims: ["exp", "iat", "sub"],
              clockTolerance: clockToleranceSeconds,
              currentDate: new Date(at)
            }),
          catch: (e) => deny("INVALID_ID_TOKEN", e instanceof Error ? e.message : String(e))
        })
        if (typeof payload.nonce !== "string" || !same(payload.nonce, String(transaction.nonce))) {
          return yield* deny("NONCE_MISMATCH", "the ID token's nonce is not this sign-in's")
        }
        // Providers that keep the ID token small give the email and name at their userinfo endpoint instead.
        const accessToken = (answer as { access_token?: unknown }).access_token
        const userinfo = keys.endpoints.userinfo
        const profile = payload.email !== undefined || typeof accessToken !== "string" || userinfo === undefined
          ? payload
          : yield* issuerKeys.requestJson(
            provider.issuer,
            HttpClientRequest.get(userinfo).pipe(HttpClientRequest.bearerToken(accessToken))
          ).pipe(
            Effect.map((info) => info as Record<string, unknown> | null),
            Effect.map((info) => info?.sub === payload.sub ? info! : payload),
            Effect.catchAll((e) => Effect.as(Effect.logInfo("no userinfo", e.reason, e.detail), payload))
          )
        const email = typeof profile.email === "string" && profile.email.length <= 320 ? profile.email : undefined
        return {
          issuer: provider.issuer,
          subject: payload.sub!,
          email,
          emailVerified: email !== undefined && profile.email_verified === true,
          name: typeof profile.name === "string" ? profile.name.slice(0, 256) : undefined
        }
      })

    /**
     * The API token of a person (recording the provider's issuer and their subject there, and carrying their
     * verified email) and, when asked, a refresh token.
     */
    const handOut = (identity: Identity.Identity, audience: string, refresh: boolean) =>
      Effect.gen(function*() {
        const minted = yield* tokens.mint(
          identity.uid,
          { iss: identity.issuer, sub: identity.subject },
          audience,
          { email: identity.email }
        )
        const refreshToken = refresh ? yield* refreshTokens.issue(identity.uid, audience) : undefined
        return { ...minted, refreshToken } satisfies Tokens
      })

    /**
     * Decides a device authorization, once: a compare-and-set in one transaction, so the first approval or denial
     * stands and a later one (a second person's sign-in through the same code finishing late) changes nothing.
     * False when it was already decided, or is gone.
     */
    const decideDevice = (
      uid: string,
      decision: { readonly status: "approved"; readonly identity: string } | { readonly status: "denied" }
    ) =>
      stored(store.transaction(Effect.gen(function*() {
        const row = yield* store.get(SignIn.devicesTable, uid)
        if (Option.isNone(row) || row.value.status !== "pending") return false
        const updateTime = (yield* DateTime.now).epochMillis
        yield* unexpectedConflict(store.update(SignIn.devicesTable, { ...row.value, ...decision, updateTime }))
        return true
      })))

    const alreadyDecided = () =>
      refused("DEVICE_ALREADY_DECIDED", "this device's sign-in was already approved or refused; start again on it")

    /** A device authorization still waiting for its person, by the user code they typed. */
    const pendingDevice = (userCode: string) =>
      Effect.gen(function*() {
        const code = SignIn.foldUserCode(userCode)
        const notFound = new NotFound({ resourceType: "device code", uid: SignIn.formatUserCode(code) })
        if (code.length !== 8) return yield* notFound
        const [row] = yield* stored(store.find(SignIn.devicesTable, {
          conditions: [{ _tag: "Equals", column: "userCode", value: code }],
          order: [{ column: "uid", direction: "asc" }],
          limit: 1
        }))
        const now = (yield* DateTime.now).epochMillis
        if (row === undefined || row.status !== "pending" || Number(row.expireTime) <= now) return yield* notFound
        return row
      })

    return {
      begin: (request: SignInRequest) => operation("SignIns.begin")(begin({ ...request, device: undefined })),

      /**
       * Finishes a sign-in at the provider's callback: the transaction the browser's cookie names, its `state` as
       * the provider returned it, then the code redeemed, the person signed in and the tokens handed out. Fails
       * with `SignInFailed`, which names the callback only once `state` matched.
       */
      complete: (callback: {
        readonly transaction?: string | undefined
        readonly state?: string | undefined
        readonly code?: string | undefined
        readonly error?: string | undefined
      }): Effect.Effect<Completed, SignIn.SignInFailed> =>
        operation("SignIns.complete")(Effect.gen(function*() {
          const fail = (cause: ArborError, to?: string) =>
            Effect.fail(new SignIn.SignInFailed({ cause, ...(to === undefined ? {} : { callback: to }) }))
          if (callback.transaction === undefined || callback.transaction === "") {
            return yield* fail(
              InvalidArgument.field("state", "belongs to no sign-in started in this browser (its cookie is missing)")
            )
          }
          const transaction = yield* take(callback.transaction).pipe(
            Effect.mapError((cause) => new SignIn.SignInFailed({ cause }))
          )
          if (transaction === undefined || !same(callback.state ?? "", String(transaction.state))) {
            return yield* fail(InvalidArgument.field("state", "belongs to no sign-in in progress in this browser"))
          }
          const to = transaction.callback === null ? undefined : String(transaction.callback)
          const device = transaction.device === null ? undefined : String(transaction.device)
          const steps = Effect.gen(function*() {
            if (Number(transaction.expireTime) <= (yield* DateTime.now).epochMillis) {
              return yield* refused("SIGN_IN_EXPIRED", "the sign-in took longer than 10 minutes; start again")
            }
            if (callback.error !== undefined) {
              return yield* new PermissionDenied({
                capability: "sign_in",
                resource: "provider",
                reason: "PROVIDER_REFUSED",
                logDetail: callback.error
              })
            }
            if (callback.code === undefined || callback.code === "") {
              return yield* InvalidArgument.field("code", "is required")
            }
            const provider = yield* resolve(String(transaction.provider) || undefined)
            const claims = yield* redeem(provider, callback.code, transaction)
            const person = yield* people.signIn(claims, {
              provider: provider.record,
              invite: transaction.invite === null ? undefined : String(transaction.invite)
            })
            if (device !== undefined) {
              if (!(yield* decideDevice(device, { status: "approved", identity: person.uid }))) {
                return yield* alreadyDecided()
              }
              return { _tag: "Device" } as const
            }
            const handed = yield* handOut(person, String(transaction.audience), transaction.refresh === true)
            return { _tag: "Browser", callback: to!, tokens: handed } as const
          })
          return yield* steps.pipe(
            Effect.tapError(() =>
              device === undefined
                ? Effect.void
                : Effect.ignore(decideDevice(device, { status: "denied" }))
            ),
            Effect.catchAll((cause) => fail(cause, to))
          )
        })),

      /** Starts a headless sign-in: a device code for the client to poll with, a user code for its person. */
      authorizeDevice: Effect.fnUntraced(function*(request: Omit<SignInRequest, "callback">) {
        const audience = yield* audienceOf(request.audience)
        const provider = yield* resolve(request.provider)
        const deviceCode = random(32)
        const now = (yield* DateTime.now).epochMillis
        for (let attempt = 0;; attempt++) {
          const userCode = newUserCode()
          const inserted = yield* stored(
            store.transaction(Effect.zipRight(
              sweep(now),
              store.insert(SignIn.devicesTable, {
                uid: Uid.makeRoot(),
                parent: null,
                deviceCodeHash: sha256(deviceCode).toString("hex"),
                userCode,
                provider: provider.id,
                audience,
                invite: request.invite ?? null,
                refresh: request.refresh === true,
                status: "pending",
                identity: null,
                interval: Duration.toSeconds(SignIn.pollInterval),
                lastPollTime: null,
                expireTime: now + Duration.toMillis(SignIn.deviceLifetime),
                createTime: now,
                updateTime: now
              })
            )).pipe(
              Effect.as(true),
              Effect.catchTag("UniqueViolation", (e) => attempt < 5 ? Effect.succeed(false) : Effect.die(e))
            )
          )
          if (inserted) {
            return {
              deviceCode,
              userCode: SignIn.formatUserCode(userCode),
              expiresIn: Duration.toSeconds(SignIn.deviceLifetime),
              interval: Duration.toSeconds(SignIn.pollInterval)
            } satisfies DeviceAuthorization
          }
        }
      }, operation("SignIns.authorizeDevice")),

      /** The user code of a device authorization still waiting for its person, as shown; NotFound otherwise. */
      pendingDevice: (userCode: string) =>
        operation("SignIns.pendingDevice")(
          Effect.map(pendingDevice(userCode), (row) => SignIn.formatUserCode(String(row.userCode)))
        ),

      /** Starts the sign-in of the person who confirmed a device's user code. */
      beginDevice: (userCode: string) =>
        operation("SignIns.beginDevice")(Effect.flatMap(pendingDevice(userCode), (row) =>
          begin({
            provider: String(row.provider) || undefined,
            audience: String(row.audience),
            invite: row.invite === null ? undefined : String(row.invite),
            refresh: row.refresh === true,
            device: row.uid
          }))),

      /** The person refused a device's sign-in: its client gets `access_denied`. */
      denyDevice: (userCode: string) =>
        operation("SignIns.denyDevice")(Effect.flatMap(
          pendingDevice(userCode),
          (row) =>
            Effect.flatMap(decideDevice(row.uid, { status: "denied" }), (denied) =>
              denied ? Effect.void : Effect.fail(alreadyDecided()))
        )),

      /**
       * A device's poll (RFC 8628 §3.4): the tokens once its person has signed in (once), else why not yet or not at
       * all; a poll sooner than the interval after the last one slows the client down.
       */
      poll: Effect.fnUntraced(function*(deviceCode: string) {
        const outcome = yield* stored(store.transaction(Effect.gen(function*() {
          const [row] = yield* store.find(SignIn.devicesTable, {
            conditions: [{ _tag: "Equals", column: "deviceCodeHash", value: sha256(deviceCode).toString("hex") }],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          })
          const now = (yield* DateTime.now).epochMillis
          if (row === undefined) return deviceError("invalid_grant", "the device code is not known")
          if (Number(row.expireTime) <= now) {
            yield* store.delete(SignIn.devicesTable, { ranges: [Uid.only(row.uid)] })
            return deviceError("expired_token", "the device code has expired; start again")
          }
          if (row.status === "denied") {
            yield* store.delete(SignIn.devicesTable, { ranges: [Uid.only(row.uid)] })
            return deviceError("access_denied", "the sign-in was refused")
          }
          if (row.status === "approved") {
            yield* store.delete(SignIn.devicesTable, { ranges: [Uid.only(row.uid)] })
            return row
          }
          const interval = Number(row.interval)
          const early = row.lastPollTime !== null && now - Number(row.lastPollTime) < interval * 1000
          yield* unexpectedConflict(store.update(SignIn.devicesTable, {
            ...row,
            lastPollTime: now,
            interval: early ? interval + Duration.toSeconds(SignIn.pollBackoff) : interval,
            updateTime: now
          }))
          return early
            ? deviceError(
              "slow_down",
              `poll at most every ${interval + Duration.toSeconds(SignIn.pollBackoff)} seconds`
            )
            : deviceError("authorization_pending", "the person has not signed in yet")
        })))
        if (outcome instanceof SignIn.DeviceGrantError) return yield* outcome
        const person = yield* identities.get(String(outcome.identity))
        if (Option.isNone(person)) return yield* deviceError("access_denied", "the person's identity is gone")
        return yield* handOut(person.value, String(outcome.audience), outcome.refresh === true)
      }, operation("SignIns.poll"))
    }
  }),
  dependencies: [IssuerKeys.Default]
}) {}
