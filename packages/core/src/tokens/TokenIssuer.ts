/**
 * API tokens: ES256 JWTs issued by this service (docs/api.md §7). The issuer mints them for identities and verifies
 * them on every request: issuer, audience, algorithm, signature (by `kid`) and expiry. Keys rotate: a new key is
 * published (listed in the JWKS) `publicationMillis` before it signs, so that every server and every verifier that
 * caches the JWKS knows it first; the newest key whose time has come signs; retired keys keep verifying until every
 * token they signed has expired.
 */
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as jose from "jose"
import * as Errors from "../engine/Errors.js"
import { unexpectedConflict } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import { orInternal } from "../engine/Repository.js"
import type { Table } from "../engine/Store.js"
import { Store } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import type { Narrowing } from "../iam/Principal.js"

/** One signing key pair. */
export const SigningKey = Schema.Struct({
  kid: Schema.String,
  privateJwk: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  publicJwk: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /**
   * From when it signs (epoch milliseconds): its creation for the first key; for a key rotated in, `publicationMillis`
   * after, the JWKS listing it meanwhile.
   */
  createdAt: Schema.Number,
  /** When a newer key replaced it for signing (epoch milliseconds); it verifies for one token lifetime more. */
  retiredAt: Schema.optional(Schema.Number)
})
export type SigningKey = typeof SigningKey.Type

/** Where signing keys are kept (the data directory, memory in tests). */
export interface SigningKeysService {
  readonly load: Effect.Effect<ReadonlyArray<SigningKey>, Errors.StoreFailure>
  readonly save: (keys: ReadonlyArray<SigningKey>) => Effect.Effect<void, Errors.StoreFailure>
}

/** How signing keys are kept in a `Store`: a row per key, whose uid is the key's `kid`. */
export const signingKeysTable: Table = {
  name: "signing_keys",
  columns: {
    privateJwk: { type: "json" },
    publicJwk: { type: "json" },
    createdAt: { type: "integer" },
    retiredAt: { type: "integer", nullable: true }
  },
  unique: [],
  indexes: []
}

/** The signing-key store. */
export class SigningKeys extends Context.Tag("@arbor/core/SigningKeys")<SigningKeys, SigningKeysService>() {
  /**
   * Keys kept in the engine's store, beside everything else: they survive restarts, every process on the same
   * database signs and verifies with the same keys, and an embedder keeps no key files. A store out of reach is
   * UNAVAILABLE, as on every other path.
   */
  static readonly layerStore: Layer.Layer<SigningKeys, never, Store> = Layer.effect(
    SigningKeys,
    Effect.map(Store, (store) => ({
      load: store.find(signingKeysTable, { order: [{ column: "uid", direction: "asc" }] }).pipe(
        Effect.map((rows) =>
          rows.map((row): SigningKey => ({
            kid: row.uid,
            privateJwk: row.privateJwk as SigningKey["privateJwk"],
            publicJwk: row.publicJwk as SigningKey["publicJwk"],
            createdAt: row.createdAt as number,
            ...(typeof row.retiredAt === "number" ? { retiredAt: row.retiredAt } : {})
          }))
        ),
        orInternal
      ),
      // Merges rather than replaces: a process never drops a key it does not know of that is still signing (another
      // process's new key), only retired ones it leaves out.
      save: (keys) =>
        store.transaction(Effect.gen(function*() {
          const kept = new Set(keys.map((k) => k.kid))
          const stored = yield* store.find(signingKeysTable, { order: [{ column: "uid", direction: "asc" }] })
          const dropped = stored.filter((row) => !kept.has(row.uid) && row.retiredAt !== null).map((row) => row.uid)
          if (dropped.length > 0) {
            yield* store.delete(signingKeysTable, { conditions: [{ _tag: "In", column: "uid", values: dropped }] })
          }
          const present = new Set(stored.map((row) => row.uid))
          for (const key of keys) {
            const row = {
              uid: key.kid,
              parent: null,
              privateJwk: key.privateJwk,
              publicJwk: key.publicJwk,
              createdAt: key.createdAt,
              retiredAt: key.retiredAt ?? null
            }
            if (present.has(key.kid)) yield* store.update(signingKeysTable, row)
            else yield* store.insert(signingKeysTable, row)
          }
        })).pipe(unexpectedConflict, orInternal)
    }))
  )

  /** Keys kept in memory only: tokens do not outlive the process. For tests and throwaway instances. */
  static readonly layerMemory: Layer.Layer<SigningKeys> = Layer.sync(SigningKeys, () => {
    let stored: ReadonlyArray<SigningKey> = []
    return {
      load: Effect.sync(() => stored),
      save: (keys) =>
        Effect.sync(() => {
          stored = keys
        })
    }
  })
}

/** Who issues tokens and for whom. */
export interface TokenSettingsService {
  /** `iss` of every token: the auth URL. */
  readonly issuer: string
  /** `aud` of every token: the base URL of the API. */
  readonly audience: string
  /** More audiences that tokens may be exchanged for, beside `audience`: other services that accept them. */
  readonly audiences?: ReadonlyArray<string>
  /** Token lifetime in seconds (3600). */
  readonly lifetimeSeconds?: number
}

/** The token settings. */
export class TokenSettings extends Context.Tag("@arbor/core/TokenSettings")<TokenSettings, TokenSettingsService>() {}

/** The upstream token a workload exchanged, recorded in the `act` claim. */
export interface Actor {
  readonly iss: string
  readonly sub: string
  readonly aud?: string | ReadonlyArray<string>
}

/** A verified API token. */
export interface Verified {
  readonly identity: Uid.Uid
  readonly claims: jose.JWTPayload
}

const alg = "ES256"

/**
 * What a webhook delivery's token vouches for (its `webhook` claim): the subscription it is for, the CloudEvent's
 * `id`, `type`, `subject`, `group` and `time` (RFC 3339, as `ce-time`), and the body's digest (`sha256:<hex>`).
 */
export interface DeliveryClaims {
  readonly subscription: Uid.Uid
  readonly id: string
  readonly type: string
  readonly subject: string
  readonly group: string
  readonly time: string
  readonly digest: string
}

/**
 * How long a rotated-in key is published before it signs: every server takes up the stored keys each minute (and its
 * JWKS reads them afresh), and a verifier that caches the JWKS refreshes it within a minute or on an unknown `kid`.
 */
export const publicationMillis = 120_000

/** How often at most the JWKS reads the stored keys afresh. */
const jwksReloadMillis = 1_000

/** How often at most tokens of unknown keys make the issuer reload the stored keys. */
const reloadCooldownMillis = 10_000

/** How far `iat` may be in the future, and `exp` in the past. */
const clockToleranceMillis = 60_000

/** How many verified tokens are remembered. */
const maxCachedTokens = 10_000

/** A new ES256 key pair, its `kid` the RFC 7638 thumbprint of the public key. */
export const generateKey = (createdAt: number): Effect.Effect<SigningKey> =>
  Effect.promise(async () => {
    const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true })
    const publicJwk = await jose.exportJWK(publicKey)
    const kid = await jose.calculateJwkThumbprint(publicJwk)
    return {
      kid,
      privateJwk: { ...(await jose.exportJWK(privateKey)), kid, alg },
      publicJwk: { ...publicJwk, kid, alg, use: "sig" },
      createdAt
    }
  })

const rejected = (why: string, reason: string) => new Errors.Unauthenticated({ why, reason })

/**
 * The key that signs at `at`: of those not retired by then, the newest whose time to sign has come (else, should
 * every one be still to come, the first of them).
 */
const signingKeyAt = (keys: ReadonlyArray<SigningKey>, at: number): SigningKey => {
  const current = keys.filter((k) => k.retiredAt === undefined || k.retiredAt > at)
  const due = current.filter((k) => k.createdAt <= at)
  const pick = (from: ReadonlyArray<SigningKey>, newest: boolean) =>
    from.reduce((a, b) => (newest ? b.createdAt > a.createdAt : b.createdAt < a.createdAt) ? b : a)
  return due.length > 0 ? pick(due, true) : current.length > 0 ? pick(current, false) : pick(keys, true)
}

/** The TokenIssuer service: this server's own tokens (API tokens, webhook deliveries', canaries'), their keys. */
export interface TokenIssuerService {
  /** `iss` of this service's tokens: the auth URL. */
  readonly issuer: string
  /** The API's own audience (its base URL): a token's audience when none is asked for. */
  readonly audience: string
  /** The audiences tokens may be minted for: the API's own first. */
  readonly audiences: ReadonlyArray<string>
  /**
   * A token for `identity`, valid for the token lifetime, recording the upstream token it was exchanged for.
   * Its audience is the API's unless another of `audiences` is given; a person's carries their verified email; a
   * narrowed one its capabilities (`cap`) and groups (`scopes`); a sign-in's, the group mappings it gave
   * (`mappings`) and the organization's identity provider it came through (`idp`).
   */
  readonly mint: (
    identity: Uid.Uid,
    actor: Actor,
    audience?: string,
    extra?: {
      readonly email?: string | undefined
      readonly narrowed?: Narrowing | undefined
      readonly mappings?: ReadonlyArray<Uid.Uid> | undefined
      readonly provider?: Uid.Uid | undefined
    }
  ) => Effect.Effect<{ readonly token: string; readonly expiry: DateTime.Utc }>
  /**
   * Verifies a token of this issuer; any failure is Unauthenticated (the specific reason in `reason`), but the store
   * out of reach when a token of a key not yet seen makes it read the stored keys.
   */
  readonly verify: (token: string) => Effect.Effect<Verified, Errors.Unauthenticated | Errors.StoreFailure>
  /** True when `token` claims to come from this issuer (unverified): such tokens are never upstream tokens. */
  readonly isOwn: (token: string) => boolean
  /**
   * The public keys that verify this issuer's tokens, as a JWKS: those published to sign soon included, read
   * afresh (at most once a second), so that a key rotated in by another process is listed at once.
   */
  readonly jwks: Effect.Effect<{ readonly keys: ReadonlyArray<Record<string, unknown>> }, Errors.StoreFailure>
  /**
   * The bearer token of a webhook delivery (docs/api.md §12): `iss` this issuer, `aud` `customer`, `sub`
   * `webhook:<the subscription's group>`, five minutes, and the claim `webhook` naming the subscription, the
   * CloudEvent's `id`, `type`, `subject`, `group` and `time`, and the body's SHA-256: a receiver that checks them
   * against its own subscription and the event's headers cannot be handed a delivery meant for another, or one
   * relabelled. Its audience and subject keep it from ever passing as an API token.
   */
  readonly signDelivery: (delivery: DeliveryClaims) => Effect.Effect<string>
  /**
   * The token of an account association's check (docs/api.md §13): `iss` this issuer, `sub` `canary:<group>`,
   * `aud` the cloud's (`amazon`, `google`, or Azure's token exchange), five minutes, as the cloud's canary role
   * trusts. Its audience and subject keep it from ever passing as an API token.
   */
  readonly signCanary: (group: Uid.Uid, audience: string) => Effect.Effect<string>
  /**
   * Publishes a new key, which signs `publicationMillis` from now, when the signing key retires; tokens of the
   * retired key verify until they expire. Starts from the stored keys, so a rotation made by another process is
   * kept. Answers the new key's `kid`.
   */
  readonly rotate: Effect.Effect<string, Errors.StoreFailure>
  /** Rotates when the signing key is older than `maxAge`; returns whether it did. */
  readonly rotateIfOlderThan: (maxAge: Duration.DurationInput) => Effect.Effect<boolean, Errors.StoreFailure>
  /** Takes up the stored keys: those another process (the admin command) rotated in. */
  readonly reload: Effect.Effect<void, Errors.StoreFailure>
}

/** Mints and verifies API tokens. */
export class TokenIssuer extends Effect.Service<TokenIssuer>()("@arbor/core/TokenIssuer", {
  effect: Effect.gen(function*() {
    const store = yield* SigningKeys
    const settings = yield* TokenSettings
    const lifetime = settings.lifetimeSeconds ?? 3600
    const now = yield* Clock.currentTimeMillis

    // At the start, a store out of reach is a defect: without keys there is no issuer to build.
    let initial = yield* Effect.orDie(store.load)
    if (!initial.some((k) => k.retiredAt === undefined)) {
      yield* Effect.orDie(store.save([...initial, yield* generateKey(now)]))
      // Processes starting together each add a key; reading back, each signs with the first the store holds.
      initial = yield* Effect.orDie(store.load)
    }
    const keys = yield* Ref.make(initial)

    /** The signing key, imported once per key. */
    let imported: { readonly kid: string; readonly key: Awaited<ReturnType<typeof jose.importJWK>> } | undefined
    const signing = Effect.flatMap(Effect.zip(Ref.get(keys), Clock.currentTimeMillis), ([all, at]) => {
      const key = signingKeyAt(all, at)
      if (imported?.kid === key.kid) return Effect.succeed({ kid: key.kid, privateKey: imported.key })
      return Effect.promise(async () => {
        const privateKey = await jose.importJWK(key.privateJwk as jose.JWK, alg)
        imported = { kid: key.kid, key: privateKey }
        return { kid: key.kid, privateKey }
      })
    })

    /** Keys that may still verify: the current one and those retired less than a token lifetime ago. */
    const verifying = Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      return (yield* Ref.get(keys)).filter((k) => k.retiredAt === undefined || at - k.retiredAt <= lifetime * 1000)
    })

    /** The key set that verifies, rebuilt only when the keys change (jose caches imported keys inside it). */
    let keySet: { readonly kids: string; readonly jwks: ReturnType<typeof jose.createLocalJWKSet> } | undefined
    const keySetOf = (candidates: ReadonlyArray<SigningKey>) => {
      const kids = candidates.map((k) => k.kid).join()
      if (keySet?.kids !== kids) {
        keySet = { kids, jwks: jose.createLocalJWKSet({ keys: candidates.map((k) => k.publicJwk as jose.JWK) }) }
      }
      return keySet.jwks
    }

    /** Takes up the stored keys; keeps the current ones if the store holds no signing key. */
    const reload = Effect.flatMap(
      store.load,
      (stored) => stored.some((k) => k.retiredAt === undefined) ? Ref.set(keys, stored) : Effect.void
    )

    /** When the JWKS last read the stored keys. */
    let jwksReadAt = 0

    /** Reloads at most once per `reloadCooldown` for tokens of unknown keys. */
    let reloadedAt = 0
    const reloadForUnknown = (token: string, candidates: ReadonlyArray<SigningKey>, at: number) =>
      Effect.gen(function*() {
        let kid: string | undefined
        try {
          kid = jose.decodeProtectedHeader(token).kid
        } catch {
          return candidates
        }
        if (kid === undefined || candidates.some((k) => k.kid === kid) || at - reloadedAt < reloadCooldownMillis) {
          return candidates
        }
        reloadedAt = at
        yield* reload
        return yield* verifying
      })

    /** Verifies a token against the keys that verify now: the result, the key that signed it, how long it holds. */
    const verifyAfresh = (token: string) =>
      Effect.gen(function*() {
        const candidates = yield* verifying
        const at = yield* Clock.currentTimeMillis
        const jwks = keySetOf(yield* reloadForUnknown(token, candidates, at))
        const checked = yield* Effect.tryPromise({
          try: () =>
            jose.jwtVerify(token, jwks, {
              issuer: settings.issuer,
              audience: settings.audience,
              algorithms: [alg],
              requiredClaims: ["exp", "iat", "sub"],
              currentDate: new Date(at),
              clockTolerance: clockToleranceMillis / 1000
            }),
          catch: (e) =>
            rejected(
              e instanceof jose.errors.JWTExpired ? "the token has expired" : "the token is not valid",
              e instanceof jose.errors.JOSEError ? e.code : "ERR_INVALID_TOKEN"
            )
        })
        const { exp, iat, sub } = checked.payload
        if (!Uid.isUid(sub)) return yield* rejected("the token is not valid", "ERR_INVALID_SUBJECT")
        if (iat! * 1000 > at + clockToleranceMillis) {
          return yield* rejected("the token is not valid", "ERR_IAT_IN_FUTURE")
        }
        if (exp! - iat! > lifetime) {
          return yield* rejected("the token is not valid", "ERR_LIFETIME_TOO_LONG")
        }
        const result: Verified = { identity: sub, claims: checked.payload }
        return { result, kid: checked.protectedHeader.kid ?? "", validMillis: exp! * 1000 - at }
      })

    /**
     * Tokens already verified, until their own expiry: a client sends the same token on every request. Bounded (the
     * least recently used go first); failures are not kept.
     */
    const verified = yield* Cache.makeWith({
      capacity: maxCachedTokens,
      lookup: verifyAfresh,
      timeToLive: Exit.match({
        onFailure: () => Duration.zero,
        onSuccess: ({ validMillis }) => Duration.millis(Math.max(0, validMillis))
      })
    })

    const self: TokenIssuerService = {
      issuer: settings.issuer,

      audience: settings.audience,

      audiences: [settings.audience, ...(settings.audiences ?? [])] as ReadonlyArray<string>,

      mint: (
        identity: Uid.Uid,
        actor: Actor,
        audience: string = settings.audience,
        extra: {
          readonly email?: string | undefined
          readonly narrowed?: Narrowing | undefined
          readonly mappings?: ReadonlyArray<Uid.Uid> | undefined
          readonly provider?: Uid.Uid | undefined
        } = {}
      ) =>
        operation("TokenIssuer.mint")(Effect.gen(function*() {
          const { kid, privateKey } = yield* signing
          const issuedAt = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const token = yield* Effect.promise(() =>
            new jose.SignJWT({
              act: { ...actor },
              ...(extra.email === undefined ? {} : { email: extra.email }),
              ...(extra.narrowed?.capabilities === undefined ? {} : { cap: extra.narrowed.capabilities }),
              ...(extra.narrowed?.scopes === undefined ? {} : { scopes: extra.narrowed.scopes }),
              ...(extra.mappings === undefined || extra.mappings.length === 0 ? {} : { mappings: extra.mappings }),
              ...(extra.provider === undefined ? {} : { idp: extra.provider })
            })
              .setProtectedHeader({ alg, kid, typ: "JWT" })
              .setIssuer(settings.issuer)
              .setSubject(identity)
              .setAudience(audience)
              .setIssuedAt(issuedAt)
              .setExpirationTime(issuedAt + lifetime)
              .setJti(crypto.randomUUID())
              .sign(privateKey)
          )
          return { token, expiry: DateTime.unsafeMake((issuedAt + lifetime) * 1000) }
        })),

      verify: (token: string) =>
        operation("TokenIssuer.verify")(Effect.gen(function*() {
          const known = yield* verified.get(token)
          if ((yield* verifying).some((k) => k.kid === known.kid)) return known.result
          // Its key stopped verifying (a reload dropped it): verify afresh, which now fails.
          yield* verified.invalidate(token)
          return (yield* verified.get(token)).result
        })),

      isOwn: (token: string): boolean => {
        try {
          return jose.decodeJwt(token).iss === settings.issuer
        } catch {
          return false
        }
      },

      jwks: Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        if (at - jwksReadAt >= jwksReloadMillis) {
          jwksReadAt = at
          yield* reload
        }
        return { keys: (yield* verifying).map((k) => k.publicJwk) }
      }),

      signDelivery: (delivery: DeliveryClaims) =>
        Effect.gen(function*() {
          const { kid, privateKey } = yield* signing
          const issuedAt = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          return yield* Effect.promise(() =>
            new jose.SignJWT({ webhook: delivery })
              .setProtectedHeader({ alg, kid, typ: "JWT" })
              .setIssuer(settings.issuer)
              .setSubject(`webhook:${Uid.parentOrNull(delivery.subscription) ?? delivery.subscription}`)
              .setAudience("customer")
              .setIssuedAt(issuedAt)
              .setExpirationTime(issuedAt + 300)
              .sign(privateKey)
          )
        }),

      signCanary: (group: Uid.Uid, audience: string) =>
        Effect.gen(function*() {
          const { kid, privateKey } = yield* signing
          const issuedAt = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          return yield* Effect.promise(() =>
            new jose.SignJWT({})
              .setProtectedHeader({ alg, kid, typ: "JWT" })
              .setIssuer(settings.issuer)
              .setSubject(`canary:${group}`)
              .setAudience(audience)
              .setIssuedAt(issuedAt)
              .setExpirationTime(issuedAt + 300)
              .setJti(crypto.randomUUID())
              .sign(privateKey)
          )
        }),

      rotate: operation("TokenIssuer.rotate")(Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const from = at + publicationMillis
        const fresh = yield* generateKey(from)
        const next = [
          ...(yield* store.load)
            .filter((k) => k.retiredAt === undefined || at - k.retiredAt <= lifetime * 1000)
            .map((k) => k.retiredAt === undefined ? { ...k, retiredAt: from } : k),
          fresh
        ]
        yield* store.save(next)
        yield* Ref.set(keys, next)
        return fresh.kid
      })),

      rotateIfOlderThan: (maxAge: Duration.DurationInput) =>
        Effect.gen(function*() {
          yield* reload
          const at = yield* Clock.currentTimeMillis
          const current = (yield* Ref.get(keys)).find((k) => k.retiredAt === undefined)!
          if (at - current.createdAt < Duration.toMillis(maxAge)) return false
          yield* self.rotate
          return true
        }),

      reload
    }
    return self
  })
}) {}
