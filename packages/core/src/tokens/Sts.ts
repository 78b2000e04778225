/**
 * The token exchange (docs/api.md §8): a workload presents its own OIDC token and receives an API token for an
 * identity whose claim match the token satisfies, or whose static keys signed it. Every verification failure and
 * mismatch is one `PermissionDenied` (the caller learns nothing of why, nor whether the identity exists); the
 * specific reason is in its `logDetail`.
 */
import * as Clock from "effect/Clock"
import type * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as jose from "jose"
import * as Errors from "../engine/Errors.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import { Settings } from "../engine/Settings.js"
import * as Uid from "../engine/Uid.js"
import * as ClaimMatch from "../iam/ClaimMatch.js"
import * as Identity from "../iam/Identity.js"
import { IssuerKeys } from "./internal/issuerKeys.js"
import { LastSeen } from "./internal/lastSeen.js"
import * as Narrowing from "./internal/narrowing.js"
import * as IssuerUrl from "./IssuerUrl.js"
import { TokenIssuer } from "./TokenIssuer.js"

/** What a workload asks for. */
export interface ExchangeRequest extends Narrowing.Request {
  /** The workload's own OIDC token (the bearer of the request). */
  readonly token: string
  /** The audience of the API token: the API's base URL or another configured audience. */
  readonly audience: string | undefined
  /** The uid of the identity to assume. */
  readonly identity: string | undefined
}

/** The API token an exchange gives. */
export interface Exchanged {
  readonly token: string
  readonly expiry: DateTime.Utc
  readonly identity: Uid.Uid
}

/** Upstream signature algorithms: asymmetric only, never `none` or HMAC. */
export const algorithms = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"] as const

/** How far `iat` and `nbf` may be in the future, in seconds (an exchange checks `exp` with none). */
export const clockToleranceSeconds = 60

/**
 * How long a refused exchange takes at least, whatever refused it: the answer's timing reveals neither whether the
 * identity exists nor how far the token got.
 */
export const denialFloor = Duration.millis(50)

const reasonOf = (e: unknown): string => {
  if (e instanceof jose.errors.JWTExpired) return "TOKEN_EXPIRED"
  if (e instanceof jose.errors.JWTClaimValidationFailed) {
    return e.reason === "missing" ? "MISSING_CLAIM" : e.claim === "nbf" ? "TOKEN_NOT_YET_VALID" : "INVALID_CLAIM"
  }
  if (e instanceof jose.errors.JOSEAlgNotAllowed) return "ALGORITHM_NOT_ALLOWED"
  if (e instanceof jose.errors.JWKSNoMatchingKey) return "UNKNOWN_KEY"
  if (e instanceof jose.errors.JWSSignatureVerificationFailed) return "BAD_SIGNATURE"
  return "INVALID_TOKEN"
}

/** Holds a PermissionDenied back until `denialFloor` has passed since the effect started. */
const atDenialFloor = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    Clock.currentTimeMillis,
    (started) =>
      Effect.tapError(effect, (e) =>
        (e as { _tag?: unknown })._tag === "PermissionDenied"
          ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.sleep(Duration.millis(Math.max(0, Duration.toMillis(denialFloor) - (now - started)))))
          : Effect.void)
  )

/** Token exchanges, by `outcome` (`issued`, `denied`, `invalid`, `unauthenticated`, `error`) and, when denied, `reason`. */
export const exchanges = Metric.counter("arbor_token_exchanges", {
  description: "token exchanges, by outcome and, when denied, the reason kept from the caller",
  incremental: true
})
const issued = exchanges.pipe(Metric.tagged("outcome", "issued"))

const counted = (error: Errors.ListFailure | Errors.Unauthenticated | Errors.PermissionDenied) => {
  const outcome = {
    InvalidArgument: "invalid",
    Unauthenticated: "unauthenticated",
    PermissionDenied: "denied",
    Internal: "error",
    Unavailable: "error"
  }[error._tag]
  const reason = error._tag === "PermissionDenied" ? (error.logDetail ?? "").split(":")[0]! : ""
  return Metric.increment(Metric.tagged(Metric.tagged(exchanges, "outcome", outcome), "reason", reason))
}

/** The Sts service: the token exchange (DECISIONS §8). */
export interface StsService {
  /** Exchanges a workload's OIDC token for an API token of `identity`. */
  readonly exchange: (
    request: ExchangeRequest
  ) => Effect.Effect<Exchanged, Errors.ListFailure | Errors.Unauthenticated | Errors.PermissionDenied>
}

/** The token exchange. */
export class Sts extends Effect.Service<Sts>()("@arbor/core/Sts", {
  effect: Effect.gen(function*() {
    const lastSeen = yield* LastSeen
    const tokens = yield* TokenIssuer
    const issuerKeys = yield* IssuerKeys
    const identities = yield* Repository.make(Identity.table, Identity.Identity)
    const settings = yield* Settings
    const authUrl = tokens.issuer
    const defaultAudiences = [authUrl, new URL(authUrl).hostname]

    /** Static keys as key sets, parsed once per document. */
    const staticKeySets = new Map<string, ReturnType<typeof jose.createLocalJWKSet>>()
    const staticKeySet = (jwks: string) => {
      let keySet = staticKeySets.get(jwks)
      if (keySet === undefined) {
        keySet = jose.createLocalJWKSet(JSON.parse(jwks) as jose.JSONWebKeySet)
        if (staticKeySets.size >= 1000) staticKeySets.delete(staticKeySets.keys().next().value!)
        staticKeySets.set(jwks, keySet)
      }
      return keySet
    }

    const verify = (token: string, keySet: ReturnType<typeof jose.createLocalJWKSet>, at: number) =>
      Effect.tryPromise({
        try: () =>
          jose.jwtVerify(token, keySet, {
            algorithms: [...algorithms],
            requiredClaims: ["exp", "iss", "sub"],
            clockTolerance: clockToleranceSeconds,
            currentDate: new Date(at)
          }),
        catch: (e) => ({ reason: reasonOf(e), detail: e instanceof Error ? e.message : String(e) })
      })

    const service: StsService = {
      exchange: (request: ExchangeRequest) =>
        operation("Sts.exchange")(
          Effect.gen(function*() {
            const token = request.token.trim()
            if (token === "") {
              return yield* new Errors.Unauthenticated({ why: "a bearer token is required", reason: "MISSING_TOKEN" })
            }
            const audience = request.audience ?? ""
            if (!tokens.audiences.includes(audience)) {
              return yield* Errors.InvalidArgument.field(
                "aud",
                audience === "" ? "is required" : "must be the API's base URL or another configured audience"
              )
            }
            if (!Uid.isUid(request.identity)) {
              return yield* Errors.InvalidArgument.field("identity", "must be the uid of an identity")
            }
            const narrowed = yield* Narrowing.read(request)
            const uid = request.identity
            const deny = (reason: string, detail: string) =>
              new Errors.PermissionDenied({
                capability: "identity.assume",
                resource: uid,
                logDetail: `${reason}: ${detail}`
              })

            let header: jose.ProtectedHeaderParameters
            let payload: jose.JWTPayload
            try {
              header = jose.decodeProtectedHeader(token)
              payload = jose.decodeJwt(token)
            } catch {
              return yield* new Errors.Unauthenticated({
                why: "the bearer token is not a JWT",
                reason: "MALFORMED_TOKEN"
              })
            }
            if (tokens.isOwn(token)) {
              return yield* deny("OWN_TOKEN", "an API token of this service is not an upstream token")
            }
            if (!(algorithms as ReadonlyArray<string>).includes(header.alg ?? "none")) {
              return yield* deny("ALGORITHM_NOT_ALLOWED", `alg ${header.alg}`)
            }
            const iss = payload.iss
            if (typeof iss !== "string") return yield* deny("MISSING_CLAIM", "the token has no iss")
            const invalidIssuer = IssuerUrl.error(iss, { allowLoopback: settings.allowLoopbackHttpIssuers })
            if (invalidIssuer !== undefined) return yield* deny("INVALID_ISSUER", `iss ${invalidIssuer}`)

            const found = yield* identities.get(uid)
            if (Option.isNone(found)) return yield* deny("UNKNOWN_IDENTITY", "no such identity")
            const identity = found.value
            const at = yield* Clock.currentTimeMillis

            const match: ClaimMatch.ClaimMatch = identity.staticKeys === undefined
              ? identity.claimMatch ?? {}
              : { issuer: identity.staticKeys.issuer, subject: identity.staticKeys.subject }
            if (!ClaimMatch.issuerMatches(match, iss)) {
              return yield* deny("CLAIM_MISMATCH", `iss ${iss} does not match`)
            }
            let keySet: ReturnType<typeof jose.createLocalJWKSet>
            if (identity.staticKeys !== undefined) {
              if (at >= identity.staticKeys.expirationTime.epochMillis) {
                return yield* deny("STATIC_KEYS_EXPIRED", "the identity's static keys have expired")
              }
              const parsed = Option.liftThrowable(staticKeySet)(identity.staticKeys.issuerKeys)
              if (Option.isNone(parsed)) return yield* deny("INVALID_STATIC_KEYS", "the stored keys do not parse")
              keySet = parsed.value
            } else {
              keySet = (yield* issuerKeys.get(iss, header.kid).pipe(
                Effect.mapError((e) => deny(e.reason, e.detail))
              )).keySet
            }
            const verified = yield* verify(token, keySet, at).pipe(Effect.mapError((e) => deny(e.reason, e.detail)))
            const claims = verified.payload
            if (typeof claims.sub !== "string") return yield* deny("INVALID_CLAIM", "sub is not a string")
            if (
              claims.aud !== undefined && typeof claims.aud !== "string" &&
              !(Array.isArray(claims.aud) && claims.aud.every((a) => typeof a === "string"))
            ) {
              return yield* deny("INVALID_CLAIM", "aud is neither a string nor an array of strings")
            }
            // The leeway is for `iat` and `nbf` (a clock a little ahead), never past `exp` (DECISIONS §8).
            if (typeof claims.exp === "number" && claims.exp * 1000 <= at) {
              return yield* deny("TOKEN_EXPIRED", "exp has passed")
            }
            if (typeof claims.iat === "number" && claims.iat * 1000 > at + clockToleranceSeconds * 1000) {
              return yield* deny("TOKEN_NOT_YET_VALID", "iat is in the future")
            }
            const rejected = ClaimMatch.mismatch(match, claims, defaultAudiences)
            if (rejected !== undefined) return yield* deny("CLAIM_MISMATCH", `claim ${rejected} does not match`)

            yield* lastSeen.note(uid, at)
            const minted = yield* tokens.mint(
              uid,
              { iss, sub: claims.sub, ...(claims.aud ? { aud: claims.aud } : {}) },
              audience,
              { narrowed }
            )
            return { ...minted, identity: uid }
          }).pipe(atDenialFloor, Effect.tapBoth({ onFailure: counted, onSuccess: () => Metric.increment(issued) }))
        )
    }
    return service
  }),
  dependencies: [IssuerKeys.Default]
}) {}
