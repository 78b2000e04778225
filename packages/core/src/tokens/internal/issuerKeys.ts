/**
 * The public keys of upstream token issuers, found through OIDC discovery (`{issuer}/.well-known/openid-configuration`,
 * then its `jwks_uri`) with `@effect/platform`'s HttpClient, within strict limits: strict https URLs (`IssuerUrl`;
 * plain http on loopback when the settings allow it), public addresses only (`Egress`, the client of `Default`), no
 * redirects, a timeout and a size cap per document. Keys are cached per issuer,
 * refetched when they grow old or a token names an unknown `kid` (at most once per cooldown), and concurrent
 * requests for one issuer share one fetch. A failed refresh keeps serving the keys fetched before. Discovery also
 * names the endpoints a sign-in uses, and other requests to an issuer (redeeming a code) go out within the same limits.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as jose from "jose"
import * as Egress from "../../engine/internal/egress.js"
import { Settings } from "../../engine/Settings.js"
import * as IssuerUrl from "../IssuerUrl.js"

/** Why an issuer's keys could not be had; `reason` is for logs. */
export class IssuerKeysUnavailable extends Schema.TaggedError<IssuerKeysUnavailable>()("IssuerKeysUnavailable", {
  issuer: Schema.String,
  reason: Schema.String,
  detail: Schema.String
}) {}

/** The limits of fetching. */
export const limits = {
  /** Per document, for the whole request and body. */
  timeout: Duration.seconds(5),
  /** Per document. */
  maxBytes: 256 * 1024,
  /** Keys older than this are refetched. */
  maxAge: Duration.minutes(10),
  /** A failed fetch is served from cache, or answered with its failure, for this long before trying again. */
  cooldown: Duration.seconds(30),
  /** Issuers kept in the cache; the least recently fetched are dropped first. */
  maxIssuers: 1000
} as const

/** What an OpenID client reads of an issuer's discovery document, under its names there. */
export interface Metadata {
  readonly jwks_uri: string
  /** Where the issuer's people sign in. */
  readonly authorization_endpoint?: string
  /** Where its codes are redeemed. */
  readonly token_endpoint?: string
  readonly userinfo_endpoint?: string
  readonly id_token_signing_alg_values_supported?: ReadonlyArray<string>
  /** Whether its callbacks carry `iss` (RFC 9207). */
  readonly authorization_response_iss_parameter_supported?: boolean
}

/** An issuer's keys as of one fetch. */
export interface Keys {
  readonly issuer: string
  /** Its discovery document, as far as an OpenID client reads it. */
  readonly metadata: Metadata
  readonly kids: ReadonlySet<string>
  readonly keySet: ReturnType<typeof jose.createLocalJWKSet>
  readonly fetchedAt: number
}

interface Entry {
  keys?: Keys | undefined
  failure?: IssuerKeysUnavailable | undefined
  attemptedAt: number
  inflight?: Deferred.Deferred<Keys, IssuerKeysUnavailable> | undefined
}

const Discovery = Schema.Struct({
  issuer: Schema.String,
  jwks_uri: Schema.String,
  authorization_endpoint: Schema.optionalWith(Schema.String, { exact: true }),
  token_endpoint: Schema.optionalWith(Schema.String, { exact: true }),
  userinfo_endpoint: Schema.optionalWith(Schema.String, { exact: true }),
  id_token_signing_alg_values_supported: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  authorization_response_iss_parameter_supported: Schema.optionalWith(Schema.Boolean, { exact: true })
})

/** An issuer's answer: its status, headers and body, read within the limits. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** Upstream issuers' keys. */
export class IssuerKeys extends Effect.Service<IssuerKeys>()("@arbor/core/IssuerKeys", {
  effect: Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const settings = yield* Settings
    const entries = new Map<string, Entry>()

    const unavailable = (issuer: string, reason: string, detail: string) =>
      new IssuerKeysUnavailable({ issuer, reason, detail })

    /** Sends `request` to a URL of the issuer and reads its answer, whatever its status, within the limits. */
    const request = (
      issuer: string,
      outgoing: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<Answer, IssuerKeysUnavailable> =>
      Effect.gen(function*() {
        const url = outgoing.url
        const insecure = IssuerUrl.error(url, { allowLoopback: settings.allowLoopbackHttpIssuers, allowQuery: true })
        if (insecure !== undefined) return yield* unavailable(issuer, "INSECURE_URL", `${url} ${insecure}`)
        const response = yield* client.execute(HttpClientRequest.acceptJson(outgoing)).pipe(
          Effect.mapError((e) =>
            unavailable(
              issuer,
              (e.cause as { code?: unknown } | undefined)?.code === Egress.refusedCode
                ? "ADDRESS_REFUSED"
                : "FETCH_FAILED",
              `${url}: ${e.cause instanceof Error ? e.cause.message : e.message}`
            )
          )
        )
        const declared = Number(response.headers["content-length"] ?? "0")
        if (declared > limits.maxBytes) {
          return yield* unavailable(issuer, "DOCUMENT_TOO_LARGE", `${url} declares ${declared} bytes`)
        }
        const body = yield* readCapped(response, issuer, url)
        return { status: response.status, headers: response.headers, body }
      }).pipe(
        Effect.timeoutFail({
          duration: limits.timeout,
          onTimeout: () =>
            unavailable(issuer, "TIMEOUT", `${outgoing.url} did not answer within ${Duration.format(limits.timeout)}`)
        }),
        // A fetch-based client follows redirects unless told not to; Node's clients never do.
        Effect.provideService(FetchHttpClient.RequestInit, { redirect: "error" })
      )

    /** The JSON document at a URL of the issuer. */
    const fetchJson = (issuer: string, url: string) =>
      Effect.flatMap(request(issuer, HttpClientRequest.get(url)), ({ body, status }) =>
        status !== 200
          ? Effect.fail(unavailable(issuer, "FETCH_FAILED", `${url} answered ${status}: ${body.slice(0, 200)}`))
          : Effect.try({
            try: () => JSON.parse(body) as unknown,
            catch: () => unavailable(issuer, "MALFORMED_DOCUMENT", `${url} is not JSON`)
          }))

    const readCapped = (response: HttpClientResponse.HttpClientResponse, issuer: string, url: string) =>
      response.stream.pipe(
        Stream.mapError((e) => unavailable(issuer, "FETCH_FAILED", `${url}: ${e.message}`)),
        Stream.runFoldEffect({ chunks: [] as Array<Uint8Array>, size: 0 }, (read, chunk) => {
          const size = read.size + chunk.length
          if (size > limits.maxBytes) {
            return Effect.fail(
              unavailable(issuer, "DOCUMENT_TOO_LARGE", `${url} is larger than ${limits.maxBytes} bytes`)
            )
          }
          read.chunks.push(chunk)
          return Effect.succeed({ chunks: read.chunks, size })
        }),
        Effect.map(({ chunks }) => Buffer.concat(chunks).toString("utf8"))
      )

    /** Discovery, then the JWKS it names; nothing is fetched for an issuer that is not a strict URL. */
    const fetchKeys = (issuer: string) =>
      Effect.gen(function*() {
        const invalid = IssuerUrl.error(issuer, { allowLoopback: settings.allowLoopbackHttpIssuers })
        if (invalid !== undefined) return yield* unavailable(issuer, "INVALID_ISSUER", `${issuer} ${invalid}`)
        const discoveryUrl = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`
        const discovery = yield* Effect.flatMap(
          fetchJson(issuer, discoveryUrl),
          (json) =>
            Effect.mapError(
              Schema.decodeUnknown(Discovery)(json),
              () => unavailable(issuer, "MALFORMED_DOCUMENT", `${discoveryUrl} lacks issuer or jwks_uri`)
            )
        )
        const { issuer: named, ...metadata } = discovery
        if (named !== issuer) {
          return yield* unavailable(issuer, "ISSUER_MISMATCH", `${discoveryUrl} names the issuer ${named}`)
        }
        const jwks = yield* fetchJson(issuer, discovery.jwks_uri)
        const keys = (jwks as { keys?: unknown })?.keys
        if (!Array.isArray(keys)) {
          return yield* unavailable(issuer, "MALFORMED_DOCUMENT", `${discovery.jwks_uri} is not a JWKS`)
        }
        const keySet = yield* Effect.try({
          try: () => jose.createLocalJWKSet({ keys: keys as Array<jose.JWK> }),
          catch: () => unavailable(issuer, "MALFORMED_DOCUMENT", `${discovery.jwks_uri} is not a JWKS`)
        })
        const kids = new Set(keys.flatMap((k: { kid?: unknown }) => typeof k?.kid === "string" ? [k.kid] : []))
        return {
          issuer,
          metadata,
          kids,
          keySet,
          fetchedAt: yield* Clock.currentTimeMillis
        } satisfies Keys
      })

    const remember = (issuer: string, entry: Entry) => {
      entries.delete(issuer)
      entries.set(issuer, entry)
      if (entries.size > limits.maxIssuers) entries.delete(entries.keys().next().value!)
    }

    /** Starts a fetch in its own fiber (a caller that goes away does not cancel it for the others) and joins it. */
    const refresh = (issuer: string, entry: Entry, at: number) => {
      const done = Deferred.unsafeMake<Keys, IssuerKeysUnavailable>(FiberId.none)
      entry.inflight = done
      entry.attemptedAt = at
      remember(issuer, entry)
      const run = Effect.exit(fetchKeys(issuer)).pipe(
        Effect.flatMap((exit) =>
          Effect.sync(() => {
            entry.inflight = undefined
            if (exit._tag === "Success") {
              entry.keys = exit.value
              entry.failure = undefined
            } else {
              entry.failure = exit.cause._tag === "Fail"
                ? exit.cause.error
                : unavailable(issuer, "FETCH_FAILED", "the fetch failed unexpectedly")
            }
            return exit
          })
        ),
        Effect.flatMap((exit) => Deferred.done(done, exit))
      )
      return Effect.zipRight(Effect.forkDaemon(run), Deferred.await(done))
    }

    return {
      /** Sends a request to a URL of `issuer` and reads its answer, within the same limits as its keys. */
      request,

      /**
       * The keys of `issuer`, fresh enough to hold `kid` if the issuer publishes it: from cache, or fetched when the
       * cache is empty, old, or lacks `kid` (at most once per cooldown); a failed refetch falls back to the cache.
       */
      get: (issuer: string, kid?: string): Effect.Effect<Keys, IssuerKeysUnavailable> =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const entry = entries.get(issuer) ?? { attemptedAt: 0 }
          if (entry.inflight !== undefined) return Deferred.await(entry.inflight)
          const cached = entry.keys
          const coolingDown = at - entry.attemptedAt < Duration.toMillis(limits.cooldown)
          const stale = cached === undefined || at - cached.fetchedAt >= Duration.toMillis(limits.maxAge) ||
            (kid !== undefined && !cached.kids.has(kid))
          if (!stale) return Effect.succeed(cached)
          if (coolingDown) {
            if (cached !== undefined) return Effect.succeed(cached)
            if (entry.failure !== undefined) return Effect.fail(entry.failure)
          }
          const fetched = refresh(issuer, entry, at)
          return cached === undefined ? fetched : Effect.orElseSucceed(fetched, () => cached)
        })
    }
  }),
  dependencies: [Egress.layer]
}) {}
