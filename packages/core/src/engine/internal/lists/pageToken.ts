/**
 * Page tokens: opaque, tamper-proof cursors. A token carries the sort position of the last item served, a digest
 * of the query it belongs to and its issue time, authenticated with HMAC-SHA256 under the server's key.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import { InvalidArgument } from "../../Errors.js"
import type { SecretsService } from "../../Secrets.js"
import type { Scalar } from "../../Store.js"

/** How long a token stays valid; an older one restarts the query from the beginning. */
export const lifetimeMillis = 3 * 24 * 60 * 60 * 1000

interface Payload {
  /** Query digest. */
  readonly q: string
  /** Sort-key values of the last item served. */
  readonly a: ReadonlyArray<Scalar>
  /** Issue time, epoch milliseconds. */
  readonly t: number
}

/** A short digest of a query's canonical description (filters and order). */
export const digest = (query: unknown): string =>
  createHash("sha256").update(JSON.stringify(query)).digest("base64url").slice(0, 22)

/** True for unpadded base64url that decodes and encodes back to itself (no padding, stray characters or bits). */
const isCanonical = (s: string) => /^[A-Za-z0-9_-]+$/.test(s) && Buffer.from(s, "base64url").toString("base64url") === s

const sign = (key: Uint8Array, body: string) => createHmac("sha256", key).update(body).digest()

const invalid = (description: string) => InvalidArgument.field("page_token", description)

const isScalar = (x: unknown): x is Scalar =>
  x === null || typeof x === "string" || typeof x === "number" || typeof x === "boolean"

const parse = (body: string): Payload | undefined => {
  try {
    const p = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
    return typeof p === "object" && p !== null && typeof p.q === "string" && typeof p.t === "number" &&
        Array.isArray(p.a) && p.a.every(isScalar)
      ? p
      : undefined
  } catch {
    return undefined
  }
}

/** Issues a token for the position `after` within the query with digest `query`. */
export const issue = (secrets: SecretsService, query: string, after: ReadonlyArray<Scalar>): Effect.Effect<string> =>
  Effect.gen(function*() {
    const key = Redacted.value(secrets.pageTokenKey)
    const payload: Payload = { q: query, a: after, t: yield* Clock.currentTimeMillis }
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url")
    return `${body}.${sign(key, body).toString("base64url")}`
  })

/**
 * Reads a token for the query with digest `query`: the position to continue after, or none when the token has
 * expired (the query restarts). Fails when the token is malformed, forged, or belongs to another query.
 */
export const read = (
  secrets: SecretsService,
  token: string,
  query: string
): Effect.Effect<Option.Option<ReadonlyArray<Scalar>>, InvalidArgument> =>
  Effect.gen(function*() {
    const key = Redacted.value(secrets.pageTokenKey)
    const [body, mac, ...rest] = token.split(".")
    if (
      body === undefined || mac === undefined || rest.length > 0 || token.length > 4096 || !isCanonical(body) ||
      !isCanonical(mac)
    ) {
      return yield* invalid("is not a page token issued by this service")
    }
    const expected = sign(key, body)
    const given = Buffer.from(mac, "base64url")
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return yield* invalid("is not a page token issued by this service")
    }
    const payload = parse(body)
    if (payload === undefined) return yield* invalid("is not a page token issued by this service")
    if (payload.q !== query) {
      return yield* invalid("belongs to a different query: keep the filters and order_by of the first page")
    }
    const now = yield* Clock.currentTimeMillis
    return now - payload.t > lifetimeMillis ? Option.none() : Option.some(payload.a)
  })
