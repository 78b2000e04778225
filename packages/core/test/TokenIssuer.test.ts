import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as jose from "jose"
import { MemoryStore, Secrets, TokenIssuer, Uid } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"

const settings = Layer.succeed(TokenIssuer.TokenSettings, {
  issuer: "https://auth.arbor.invalid",
  audience: "https://api.arbor.invalid"
})
const identity = Uid.unsafeMake("0123456789abcdef0123456789abcdef01234567")
const actor = { iss: "https://ci.invalid", sub: "job" }

/** An issuer over `keys`; two issuers over one store behave as two processes sharing a data directory. */
const issuerOver = (keys: Layer.Layer<TokenIssuer.SigningKeys>) =>
  Effect.map(
    Layer.build(TokenIssuer.TokenIssuer.Default.pipe(Layer.provide(Layer.merge(keys, settings)))),
    Context.get(TokenIssuer.TokenIssuer)
  )

const kidOf = (token: string) => jose.decodeProtectedHeader(token).kid

describe("TokenIssuer", () => {
  it.scoped("tokens carry the claims of DECISIONS §7 and verify", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
      const issuer = yield* issuerOver(TokenIssuer.SigningKeys.layerMemory)
      const { expiry, token } = yield* issuer.mint(identity, actor)
      const claims = jose.decodeJwt(token)
      assert.strictEqual(claims.iss, "https://auth.arbor.invalid")
      assert.strictEqual(claims.aud, "https://api.arbor.invalid")
      assert.strictEqual(claims.sub, identity)
      assert.strictEqual(claims.exp! - claims.iat!, 3600)
      assert.deepStrictEqual(claims.act, actor)
      assert.strictEqual(expiry.epochMillis, claims.exp! * 1000)
      assert.strictEqual((yield* issuer.verify(token)).identity, identity)
      yield* TestClock.adjust("3661 seconds")
      assert.strictEqual((yield* Refusal.of(issuer.verify(token))).reason, "ERR_JWT_EXPIRED")
    }))

  it.scoped("tokens issued in the future, or living longer than an hour, are refused though signed with its key", () =>
    Effect.gen(function*() {
      const start = Date.parse("2026-11-22T00:00:00Z")
      yield* TestClock.setTime(start)
      const store = Context.get(yield* Layer.build(TokenIssuer.SigningKeys.layerMemory), TokenIssuer.SigningKeys)
      const issuer = yield* issuerOver(Layer.succeed(TokenIssuer.SigningKeys, store))
      yield* issuer.mint(identity, actor)
      const [key] = yield* store.load
      const privateKey = yield* Effect.promise(() => jose.importJWK(key!.privateJwk as jose.JWK, "ES256"))
      const now = start / 1000
      const forge = (iat: number, exp: number) =>
        Effect.promise(() =>
          new jose.SignJWT({ act: actor }).setProtectedHeader({ alg: "ES256", kid: key!.kid })
            .setIssuer("https://auth.arbor.invalid").setAudience("https://api.arbor.invalid").setSubject(identity)
            .setIssuedAt(iat).setExpirationTime(exp).sign(privateKey)
        )
      const reason = (token: string) => Effect.map(Refusal.of(issuer.verify(token)), (e) => e.reason)
      assert.strictEqual(yield* reason(yield* forge(now + 600, now + 600 + 3600)), "ERR_IAT_IN_FUTURE")
      assert.strictEqual(yield* reason(yield* forge(now, now + 7200)), "ERR_LIFETIME_TOO_LONG")
      assert.strictEqual((yield* issuer.verify(yield* forge(now + 30, now + 30 + 3600))).identity, identity)
    }))

  it.scoped("after a rotation new tokens carry the new kid, once published; old tokens verify until they expire", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
      const issuer = yield* issuerOver(TokenIssuer.SigningKeys.layerMemory)
      const before = (yield* issuer.mint(identity, actor)).token
      yield* TestClock.adjust("30 minutes")
      const kid = yield* issuer.rotate
      assert.strictEqual((yield* issuer.jwks).keys.length, 2, "published at once")
      assert.strictEqual(kidOf((yield* issuer.mint(identity, actor)).token), kidOf(before), "the old key still signs")
      yield* TestClock.adjust(TokenIssuer.publicationMillis)
      const after = (yield* issuer.mint(identity, actor)).token
      assert.strictEqual(kidOf(after), kid)
      assert.notStrictEqual(kidOf(before), kid)
      assert.strictEqual((yield* issuer.verify(before)).identity, identity)
      assert.strictEqual((yield* issuer.jwks).keys.length, 2)
      // The retired key is dropped once every token it signed has expired.
      yield* TestClock.adjust("61 minutes")
      assert.deepStrictEqual((yield* issuer.jwks).keys.map((k) => k.kid), [kid])
      assert.strictEqual((yield* Refusal.of(issuer.verify(before))).reason, "ERR_JWKS_NO_MATCHING_KEY")
    }))

  it.scoped("an issuer takes up a rotation made by another process sharing its key store", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
      const shared = yield* Layer.build(TokenIssuer.SigningKeys.layerMemory)
      const keys = Layer.succeedContext(shared)
      const server = yield* issuerOver(keys)
      const admin = yield* issuerOver(keys)
      const kid = yield* admin.rotate
      yield* TestClock.adjust(TokenIssuer.publicationMillis)
      // A token of the new key is verified at once: the unknown kid makes the server reload.
      const fresh = (yield* admin.mint(identity, actor)).token
      assert.strictEqual(kidOf(fresh), kid)
      assert.strictEqual((yield* server.verify(fresh)).identity, identity)
      assert.strictEqual(kidOf((yield* server.mint(identity, actor)).token), kid)
    }))

  it.scoped("a rotated-in key is in every sharing issuer's JWKS before any of them signs with it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
      const keys = Layer.succeedContext(yield* Layer.build(TokenIssuer.SigningKeys.layerMemory))
      const [a, b] = [yield* issuerOver(keys), yield* issuerOver(keys)]
      const old = kidOf((yield* b.mint(identity, actor)).token)
      const kid = yield* a.rotate
      yield* TestClock.adjust("1 second")
      for (const issuer of [a, b]) {
        assert.include((yield* issuer.jwks).keys.map((k) => k.kid), kid, "listed at once, on the other issuer too")
      }
      yield* TestClock.adjust(TokenIssuer.publicationMillis - 2_000)
      for (const issuer of [a, b]) assert.strictEqual(kidOf((yield* issuer.mint(identity, actor)).token), old)
      yield* TestClock.adjust("1 second")
      for (const issuer of [a, b]) assert.strictEqual(kidOf((yield* issuer.mint(identity, actor)).token), kid)
    }))

  it.scoped("rotateIfOlderThan rotates only a key older than the limit", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
      const issuer = yield* issuerOver(TokenIssuer.SigningKeys.layerMemory)
      assert.isFalse(yield* issuer.rotateIfOlderThan("30 days"))
      yield* TestClock.adjust("30 days")
      assert.isTrue(yield* issuer.rotateIfOlderThan("30 days"))
      assert.isFalse(yield* issuer.rotateIfOlderThan("30 days"))
    }))

  it.scoped("tokens of another issuer, audience or algorithm are refused", () =>
    Effect.gen(function*() {
      const issuer = yield* issuerOver(TokenIssuer.SigningKeys.layerMemory)
      const { privateKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
      const now = Math.floor(Date.now() / 1000)
      const forged = yield* Effect.promise(() =>
        new jose.SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "x" }).setIssuer("https://auth.arbor.invalid")
          .setAudience("https://api.arbor.invalid").setSubject(identity).setIssuedAt(now).setExpirationTime(now + 60)
          .sign(privateKey)
      )
      const unsigned = `${jose.base64url.encode(JSON.stringify({ alg: "none" }))}.${
        jose.base64url.encode(JSON.stringify({ iss: "https://auth.arbor.invalid", sub: identity, exp: now + 60 }))
      }.`
      for (const token of [forged, unsigned, "not a token"]) {
        assert.strictEqual((yield* Refusal.of(issuer.verify(token)))._tag, "Unauthenticated")
      }
    }))

  it.scoped("processes starting together on one store each verify the other's tokens", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
      const store = Layer.succeedContext(yield* Layer.build(MemoryStore.layer))
      const keys = TokenIssuer.SigningKeys.layerStore.pipe(Layer.provide(store))
      const [a, b] = yield* Effect.all([issuerOver(keys), issuerOver(keys)], { concurrency: "unbounded" })
      assert.strictEqual((yield* b.verify((yield* a.mint(identity, actor)).token)).identity, identity)
      assert.strictEqual((yield* a.verify((yield* b.mint(identity, actor)).token)).identity, identity)
    }))
})

describe("Secrets.layerStore", () => {
  it.scoped("every process on one store, and every restart, gets the same page-token key", () =>
    Effect.gen(function*() {
      const store = Layer.succeedContext(yield* Layer.build(MemoryStore.layer))
      const open = Effect.map(
        Layer.build(Secrets.layerStore(new Uint8Array(32)).pipe(Layer.provide(store))),
        (c) => Redacted.value(Context.get(c, Secrets.Secrets).pageTokenKey)
      )
      const [first, second] = yield* Effect.all([open, open], { concurrency: "unbounded" })
      assert.strictEqual(first.length, 32)
      assert.deepStrictEqual(second, first)
      assert.deepStrictEqual(yield* open, first)
    }))
})
