import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { Arbor, Groups, Identities, Principal, RefreshTokens, Store, TokenIssuer } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import * as RefreshToken from "../src/tokens/internal/refreshToken.js"

const audience = "https://api.arbor.invalid"

const engine = RefreshTokens.RefreshTokens.Default.pipe(
  Layer.provideMerge(
    TokenIssuer.TokenIssuer.Default.pipe(
      Layer.provide(TokenIssuer.SigningKeys.layerMemory),
      Layer.provide(Layer.succeed(TokenIssuer.TokenSettings, { issuer: "https://auth.arbor.invalid", audience }))
    )
  ),
  Layer.provideMerge(Arbor.layerMemory)
)

/** An identity to hand refresh tokens to. */
const someone = Effect.gen(function*() {
  const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "acme" })
  return yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
    name: "ada",
    claimMatch: { issuer: "https://login.example.com", subject: "ada" }
  })
})

const reasonOf = <A>(effect: Effect.Effect<A, { readonly reason?: string | undefined }>) =>
  Effect.map(Refusal.of(effect), (e) => e.reason)

describe("RefreshTokens", () => {
  it.effect("rotate on every use; a rotated token presented again revokes its whole family", () =>
    Effect.gen(function*() {
      const refresh = yield* RefreshTokens.RefreshTokens
      const tokens = yield* TokenIssuer.TokenIssuer
      const { uid } = yield* someone
      const first = yield* refresh.issue(uid, audience)
      const exchanged = yield* refresh.exchange(first.token, audience)
      assert.strictEqual((yield* tokens.verify(exchanged.token.token)).identity, uid)
      assert.notStrictEqual(exchanged.refreshToken.token, first.token)
      const second = yield* refresh.exchange(exchanged.refreshToken.token, audience)
      // The first token again: a theft is assumed, and every token of the family stops working.
      assert.strictEqual(yield* reasonOf(refresh.exchange(first.token, audience)), "REFRESH_TOKEN_REUSED")
      assert.strictEqual(
        yield* reasonOf(refresh.exchange(second.refreshToken.token, audience)),
        "REFRESH_TOKEN_REVOKED"
      )
    }).pipe(Effect.provide(engine)))

  it.effect("expire after 30 days, are bound to their audience, and are revoked one by one", () =>
    Effect.gen(function*() {
      const refresh = yield* RefreshTokens.RefreshTokens
      const { uid } = yield* someone
      const kept = yield* refresh.issue(uid, audience)
      assert.strictEqual(
        yield* reasonOf(refresh.exchange(kept.token, "https://other.invalid")),
        "REFRESH_TOKEN_AUDIENCE"
      )
      const revoked = yield* refresh.issue(uid, audience)
      yield* refresh.revoke(revoked.token)
      yield* refresh.revoke("not a token")
      assert.strictEqual(yield* reasonOf(refresh.exchange(revoked.token, audience)), "REFRESH_TOKEN_REVOKED")
      assert.strictEqual(yield* reasonOf(refresh.exchange("not a token", audience)), "REFRESH_TOKEN_UNKNOWN")
      yield* TestClock.adjust("30 days")
      assert.strictEqual(yield* reasonOf(refresh.exchange(kept.token, audience)), "REFRESH_TOKEN_EXPIRED")
    }).pipe(Effect.provide(engine)))

  it.effect("are kept only as hashes, and go with their identity", () =>
    Effect.gen(function*() {
      const refresh = yield* RefreshTokens.RefreshTokens
      const store = yield* Store.Store
      const { uid } = yield* someone
      const issued = yield* refresh.issue(uid, audience)
      const rows = yield* store.find(RefreshToken.table, { order: [{ column: "uid", direction: "asc" }] })
      assert.strictEqual(rows.length, 1)
      assert.notInclude(JSON.stringify(rows), issued.token)
      yield* (yield* Identities.Identities).delete(Principal.system, uid)
      assert.strictEqual(yield* store.count(RefreshToken.table, {}), 0)
      assert.strictEqual(yield* reasonOf(refresh.exchange(issued.token, audience)), "REFRESH_TOKEN_UNKNOWN")
    }).pipe(Effect.provide(engine)))

  it.effect("of two exchanges of one token at once, one succeeds and the family is revoked", () =>
    Effect.gen(function*() {
      const refresh = yield* RefreshTokens.RefreshTokens
      const { uid } = yield* someone
      const issued = yield* refresh.issue(uid, audience)
      const outcomes = yield* Effect.all(
        [refresh.exchange(issued.token, audience), refresh.exchange(issued.token, audience)].map(Effect.either),
        { concurrency: "unbounded" }
      )
      const won = outcomes.flatMap((o) => o._tag === "Right" ? [o.right] : [])
      assert.strictEqual(won.length, 1)
      assert.strictEqual(
        yield* reasonOf(refresh.exchange(won[0]!.refreshToken.token, audience)),
        "REFRESH_TOKEN_REVOKED"
      )
    }).pipe(Effect.provide(engine)))
})
