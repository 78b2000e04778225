import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as jose from "jose"
import { IssuerKeys, Settings } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"

const issuer = "https://issuer.invalid"

/** An issuer served from memory: counts fetches, and can be told to fail, stall, or answer with other documents. */
const fakeIssuer = () => {
  const state = {
    fetches: [] as Array<string>,
    kids: ["k1"],
    discoveryIssuer: issuer,
    failing: false,
    gate: undefined as Promise<void> | undefined
  }
  const jwks = async () => ({
    keys: await Promise.all(state.kids.map(async (kid) => {
      const { publicKey } = await jose.generateKeyPair("ES256", { extractable: true })
      return { ...(await jose.exportJWK(publicKey)), kid, alg: "ES256" }
    }))
  })
  const client = HttpClient.make((request, url) =>
    Effect.promise(async () => {
      state.fetches.push(url.pathname)
      if (state.gate !== undefined) await state.gate
      const body = state.failing
        ? null
        : url.pathname.endsWith("/openid-configuration")
        ? { issuer: state.discoveryIssuer, jwks_uri: `${issuer}/keys` }
        : await jwks()
      return HttpClientResponse.fromWeb(
        request,
        new Response(body === null ? "down" : JSON.stringify(body), { status: body === null ? 503 : 200 })
      )
    })
  )
  const layer = IssuerKeys.IssuerKeys.DefaultWithoutDependencies.pipe(
    Layer.provide(Layer.succeed(HttpClient.HttpClient, client))
  )
  return { state, layer }
}

describe("IssuerKeys", () => {
  it.effect("fetches discovery then the JWKS once, and serves later requests from cache", () => {
    const { layer, state } = fakeIssuer()
    return Effect.gen(function*() {
      const keys = yield* IssuerKeys.IssuerKeys
      const first = yield* keys.get(issuer, "k1")
      const again = yield* keys.get(issuer, "k1")
      assert.deepStrictEqual(state.fetches, ["/.well-known/openid-configuration", "/keys"])
      assert.strictEqual(first, again)
      assert.isTrue(first.kids.has("k1"))
    }).pipe(Effect.provide(layer))
  })

  it.effect("an unknown kid refetches at most once per cooldown; a key the issuer added is then found", () => {
    const { layer, state } = fakeIssuer()
    return Effect.gen(function*() {
      const keys = yield* IssuerKeys.IssuerKeys
      yield* keys.get(issuer, "k1")
      state.kids = ["k1", "k2"]
      assert.isFalse((yield* keys.get(issuer, "k2")).kids.has("k2"))
      assert.strictEqual(state.fetches.length, 2)
      yield* TestClock.adjust(IssuerKeys.limits.cooldown)
      assert.isTrue((yield* keys.get(issuer, "k2")).kids.has("k2"))
      assert.strictEqual(state.fetches.length, 4)
      // Unknown kids within the cooldown are answered from cache, without fetching.
      for (let i = 0; i < 5; i++) assert.isFalse((yield* keys.get(issuer, `forged-${i}`)).kids.has(`forged-${i}`))
      assert.strictEqual(state.fetches.length, 4)
      yield* TestClock.adjust(IssuerKeys.limits.cooldown)
      yield* keys.get(issuer, "forged")
      assert.strictEqual(state.fetches.length, 6)
    }).pipe(Effect.provide(layer))
  })

  it.effect("keys older than the maximum age are refetched; when the issuer is down the old keys keep serving", () => {
    const { layer, state } = fakeIssuer()
    return Effect.gen(function*() {
      const keys = yield* IssuerKeys.IssuerKeys
      const first = yield* keys.get(issuer)
      yield* TestClock.adjust(IssuerKeys.limits.maxAge)
      state.failing = true
      assert.strictEqual(yield* keys.get(issuer), first)
      assert.strictEqual(state.fetches.length, 3)
      state.failing = false
      yield* TestClock.adjust(IssuerKeys.limits.cooldown)
      assert.notStrictEqual(yield* keys.get(issuer), first)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failure without cached keys is answered from the failure until the cooldown passes", () => {
    const { layer, state } = fakeIssuer()
    return Effect.gen(function*() {
      const keys = yield* IssuerKeys.IssuerKeys
      state.failing = true
      const failure = yield* Refusal.of(keys.get(issuer))
      assert.strictEqual(failure.reason, "FETCH_FAILED")
      yield* Refusal.of(keys.get(issuer))
      assert.strictEqual(state.fetches.length, 1)
      state.failing = false
      yield* TestClock.adjust(IssuerKeys.limits.cooldown)
      assert.isTrue((yield* keys.get(issuer)).kids.has("k1"))
    }).pipe(Effect.provide(layer))
  })

  it.effect("concurrent requests for one issuer share one fetch", () => {
    const { layer, state } = fakeIssuer()
    let open!: () => void
    state.gate = new Promise((resolve) => open = resolve)
    return Effect.gen(function*() {
      const keys = yield* IssuerKeys.IssuerKeys
      const fibers = yield* Effect.forEach(Array.from({ length: 20 }), () => Effect.fork(keys.get(issuer)))
      yield* Effect.yieldNow()
      open()
      const results = yield* Effect.forEach(fibers, Fiber.join)
      assert.isTrue(results.every((r) => r === results[0]))
      assert.deepStrictEqual(state.fetches, ["/.well-known/openid-configuration", "/keys"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a discovery document naming another issuer is refused", () => {
    const { layer, state } = fakeIssuer()
    state.discoveryIssuer = "https://other.invalid"
    return Effect.gen(function*() {
      const failure = yield* Refusal.of((yield* IssuerKeys.IssuerKeys).get(issuer))
      assert.strictEqual(failure.reason, "ISSUER_MISMATCH")
    }).pipe(Effect.provide(layer))
  })

  it.effect("plain http is refused without fetching, unless on loopback with the setting on", () => {
    const { layer, state } = fakeIssuer()
    return Effect.gen(function*() {
      const keys = yield* IssuerKeys.IssuerKeys
      assert.strictEqual((yield* Refusal.of(keys.get("http://issuer.invalid"))).reason, "INVALID_ISSUER")
      assert.strictEqual((yield* Refusal.of(keys.get("http://127.0.0.1:9"))).reason, "INVALID_ISSUER")
      assert.deepStrictEqual(state.fetches, [])
    }).pipe(Effect.provide(layer))
  })

  it.effect("with loopback allowed, http on 127.0.0.1 is fetched but http elsewhere still is not", () => {
    const { layer, state } = fakeIssuer()
    return Effect.gen(function*() {
      const keys = yield* IssuerKeys.IssuerKeys
      assert.strictEqual((yield* Refusal.of(keys.get("http://issuer.invalid"))).reason, "INVALID_ISSUER")
      yield* Refusal.of(keys.get("http://127.0.0.1:9"))
      assert.deepStrictEqual(state.fetches, ["/.well-known/openid-configuration"])
    }).pipe(
      Effect.provide(layer),
      Effect.provide(Layer.succeed(Settings.Settings, { allowLoopbackHttpIssuers: true, platformAdmins: [] }))
    )
  })
})
