/**
 * Limits on the unauthenticated sign-in endpoints (docs/operations.md): wrong user codes per address per minute,
 * sign-ins and device codes per address and overall; the client's address from a trusted proxy's header only when
 * one is configured.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as SignInLimits from "../src/SignInLimits.js"
import { freePort, loginWith, startProvider, startServer } from "./signInSupport.js"

const deviceCode = (url: string, address?: string) =>
  fetch(`${url}/oauth/device/code`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(address === undefined ? {} : { "x-forwarded-for": `198.51.100.1, ${address}` })
    },
    body: ""
  })

const verification = (url: string, userCode: string, address?: string) =>
  fetch(`${url}/oauth/device?user_code=${userCode}`, {
    headers: address === undefined ? {} : { "x-forwarded-for": address }
  })

describe("sign-in limits behind a trusted proxy (ARBOR_CLIENT_ADDRESS_HEADER=x-forwarded-for)", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let provider: Awaited<ReturnType<typeof startProvider>>

  beforeAll(async () => {
    const port = await freePort()
    provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
    server = await startServer(port, { login: loginWith(provider), clientAddressHeader: "x-forwarded-for" })
  })
  afterAll(async () => {
    await server?.close()
    await provider?.close()
  })

  it("more than 20 wrong user codes in a minute: 429 for the rest of it, a valid code included", async () => {
    const valid = ((await (await deviceCode(server.url, "203.0.113.1")).json()) as { user_code: string }).user_code
    for (let attempt = 1; attempt <= 21; attempt++) {
      const wrong = await verification(server.url, "BBBB-BBBB", "203.0.113.7")
      assert.strictEqual(wrong.status, 404, `attempt ${attempt}`)
      assert.include(await wrong.text(), "not valid or has expired")
    }
    const blocked = await verification(server.url, valid, "203.0.113.7")
    assert.strictEqual(blocked.status, 429)
    const retryAfter = Number(blocked.headers.get("retry-after"))
    assert.isTrue(retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${retryAfter}`)
    assert.notInclude(await blocked.text(), valid)
    // Another address is not held back.
    const elsewhere = await verification(server.url, valid, "203.0.113.8")
    assert.strictEqual(elsewhere.status, 200)
    assert.include(await elsewhere.text(), valid)
  })

  it("device codes are capped per address: 429 with Retry-After, other addresses unaffected", async () => {
    for (let i = 1; i <= SignInLimits.defaults.startsPerAddress; i++) {
      assert.strictEqual((await deviceCode(server.url, "192.0.2.44")).status, 200, `device code ${i}`)
    }
    const refused = await deviceCode(server.url, "192.0.2.44")
    assert.strictEqual(refused.status, 429)
    assert.strictEqual(((await refused.json()) as { error: string }).error, "temporarily_unavailable")
    assert.isTrue(Number(refused.headers.get("retry-after")) > 60)
    // The same address does not begin a browser sign-in either; another address does.
    const browser = (address: string) =>
      fetch(`${server.url}/oauth?exit=redirect&redirect=http://127.0.0.1:9/callback`, {
        redirect: "manual",
        headers: { "x-forwarded-for": address }
      })
    assert.strictEqual((await browser("192.0.2.44")).status, 429)
    assert.strictEqual((await browser("192.0.2.45")).status, 302)
    assert.strictEqual((await deviceCode(server.url, "192.0.2.45")).status, 200)
  })
})

describe("sign-in limits without a trusted proxy", () => {
  let server: Awaited<ReturnType<typeof startServer>>

  beforeAll(async () => {
    server = await startServer(await freePort(), {})
  })
  afterAll(async () => {
    await server?.close()
  })

  it("a client cannot pick its own address: X-Forwarded-For is ignored", async () => {
    for (let attempt = 1; attempt <= 21; attempt++) {
      await verification(server.url, "CCCC-CCCC", `203.0.113.${attempt}`)
    }
    const blocked = await verification(server.url, "DDDD-DDDD", "203.0.113.99")
    assert.strictEqual(blocked.status, 429)
  })
})

describe("the overall cap", () => {
  it("refuses starts from every address once the server's cap is reached, until the window passes", () => {
    const limits = SignInLimits.make({ wrongUserCodes: 20, startsPerAddress: 3, startsOverall: 5 })
    const now = Date.parse("2026-11-24T12:00:00Z")
    const outcomes = ["a", "a", "a", "a", "b", "b", "c"].map((address) => limits.start(address, now)?.reason ?? "ok")
    assert.deepStrictEqual(outcomes, ["ok", "ok", "ok", "TOO_MANY_SIGN_INS", "ok", "ok", "TOO_MANY_SIGN_INS"])
    assert.strictEqual(limits.start("d", now)?.retryAfterSeconds, 600)
    assert.isUndefined(limits.start("d", now + 10 * 60_000))
  })
})
