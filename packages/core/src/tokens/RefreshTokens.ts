/**
 * The RefreshTokens service: issue a refresh token to a person, exchange one for a new API token and its successor
 * (rotation), and revoke one. Every failure to exchange is one `Unauthenticated`, its reason for the log.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import * as Errors from "../engine/Errors.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import type { Row } from "../engine/Store.js"
import { Store } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Identity from "../iam/Identity.js"
import { ScimUsers } from "../provisioning/ScimUsers.js"
import * as Narrowing from "./internal/narrowing.js"
import * as RefreshToken from "./internal/refreshToken.js"
import { TokenIssuer } from "./TokenIssuer.js"

/** A refresh token as handed out: the secret, once, and when it expires. */
export interface Issued {
  readonly token: string
  readonly expiry: DateTime.Utc
}

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex")

const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")

const refused = (reason: string) => new Errors.Unauthenticated({ why: "the refresh token is not valid", reason })

/** The RefreshTokens service: a person's refresh tokens, rotated at each use, a replayed one revoking its family. */
export interface RefreshTokensService {
  /** A new refresh token for `identity`, bound to `audience` (and to the provider its sign-in came through). */
  readonly issue: (
    identity: Uid.Uid,
    audience: string,
    provider?: Uid.Uid | undefined
  ) => Effect.Effect<Issued, Errors.StoreFailure>
  /**
   * Exchanges a refresh token for an API token of its person for `audience` (its own; the API's when absent),
   * narrowed as `narrowing` asks, and the token that replaces it. A token presented after its rotation revokes
   * its whole family. A bad narrowing is refused before the refresh token is touched.
   */
  readonly exchange: (
    token: string,
    audience?: string,
    narrowing?: Narrowing.Request
  ) => Effect.Effect<
    { readonly token: Issued; readonly refreshToken: Issued },
    Errors.ListFailure | Errors.Unauthenticated
  >
  /** Revokes one refresh token (RFC 7009: unknown tokens are no error). */
  readonly revoke: (token: string) => Effect.Effect<void, Errors.StoreFailure>
}

/** Refresh tokens. */
export class RefreshTokens extends Effect.Service<RefreshTokens>()("@arbor/core/RefreshTokens", {
  effect: Effect.gen(function*() {
    const store = yield* Store
    const tokens = yield* TokenIssuer
    const identities = yield* Repository.make(Identity.table, Identity.Identity)
    const scim = yield* ScimUsers

    /** A new token for `identity` and `audience`, in `family` (a new one when absent). */
    const insert = (identity: string, audience: string, provider: string | null, family?: string) =>
      Effect.gen(function*() {
        const token = secret()
        const now = (yield* DateTime.now).epochMillis
        const uid = Uid.makeRoot()
        const expireTime = now + Duration.toMillis(RefreshToken.lifetime)
        yield* store.insert(RefreshToken.table, {
          uid,
          parent: identity,
          hash: hashOf(token),
          family: family ?? uid,
          audience,
          expireTime,
          rotatedTime: null,
          revoked: false,
          createTime: now,
          updateTime: now,
          provider
        })
        return { token, expiry: DateTime.unsafeMake(expireTime) } satisfies Issued
      })

    const find = (token: string) =>
      Effect.map(
        store.find(RefreshToken.table, {
          conditions: [{ _tag: "Equals", column: "hash", value: hashOf(token) }],
          order: [{ column: "uid", direction: "asc" }],
          limit: 1
        }),
        (rows): Row | undefined => rows[0]
      )

    /** Every token of a family revoked: a rotated token was presented again, so one of them was stolen. */
    const revokeFamily = (family: string, now: number) =>
      Effect.gen(function*() {
        const members = yield* store.find(RefreshToken.table, {
          conditions: [{ _tag: "Equals", column: "family", value: family }],
          order: [{ column: "uid", direction: "asc" }]
        })
        for (const member of members) {
          yield* store.update(RefreshToken.table, { ...member, revoked: true, updateTime: now })
        }
      })

    const service: RefreshTokensService = {
      issue: (
        identity: Uid.Uid,
        audience: string,
        provider?: Uid.Uid | undefined
      ): Effect.Effect<Issued, Errors.StoreFailure> =>
        operation("RefreshTokens.issue")(
          Repository.orInternal(
            store.transaction(insert(identity, audience, provider ?? null)).pipe(
              Effect.catchTag("UniqueViolation", Effect.die)
            )
          )
        ),

      exchange: (token: string, audience: string = tokens.audience, narrowing: Narrowing.Request = {}) =>
        operation("RefreshTokens.exchange")(
          Effect.flatMap(Narrowing.read(narrowing), (narrowed) =>
            store.transaction(Effect.gen(function*() {
              const row = yield* find(token)
              const now = (yield* DateTime.now).epochMillis
              if (row === undefined) return yield* Effect.fail(refused("REFRESH_TOKEN_UNKNOWN"))
              if (row.revoked === true) return yield* Effect.fail(refused("REFRESH_TOKEN_REVOKED"))
              if (row.rotatedTime !== null) {
                yield* revokeFamily(String(row.family), now)
                return yield* Effect.succeed(refused("REFRESH_TOKEN_REUSED"))
              }
              if (Number(row.expireTime) <= now) return yield* Effect.fail(refused("REFRESH_TOKEN_EXPIRED"))
              if (row.audience !== audience) return yield* Effect.fail(refused("REFRESH_TOKEN_AUDIENCE"))
              yield* store.update(RefreshToken.table, { ...row, rotatedTime: now, updateTime: now })
              const person = yield* identities.get(String(row.parent))
              if (Option.isNone(person)) return yield* Effect.fail(refused("REFRESH_TOKEN_UNKNOWN"))
              const identity = person.value
              const provider = Uid.isUid(row.provider) ? row.provider : undefined
              if (provider !== undefined && (yield* scim.refuses(provider, identity.subject))) {
                return yield* Effect.fail(refused("DEPROVISIONED"))
              }
              const next = yield* insert(identity.uid, audience, provider ?? null, String(row.family))
              const minted = yield* tokens.mint(
                identity.uid,
                { iss: identity.issuer, sub: identity.subject },
                audience,
                { email: identity.email, narrowed, provider }
              )
              return { token: minted, refreshToken: next }
            }))).pipe(
              // A reuse is refused only after its family's revocation has committed.
              Effect.flatMap((result) =>
                result instanceof Errors.Unauthenticated ? Effect.fail(result) : Effect.succeed(result)
              ),
              Effect.catchTag("UniqueViolation", Effect.die),
              // A store out of reach, or a race lost past every retry: UNAVAILABLE, as on every other path.
              Repository.orInternal
            )
        ),

      revoke: (token: string): Effect.Effect<void, Errors.StoreFailure> =>
        operation("RefreshTokens.revoke")(
          store.transaction(Effect.gen(function*() {
            const row = yield* find(token)
            if (row !== undefined) {
              yield* store.update(RefreshToken.table, {
                ...row,
                revoked: true,
                updateTime: (yield* DateTime.now).epochMillis
              })
            }
          })).pipe(Effect.catchTag("UniqueViolation", Effect.die), Repository.orInternal)
        )
    }
    return service
  })
}) {}
