/**
 * What a person sees while signing in, in a real browser: headless Chromium (Debian's `chromium`, found through
 * `ARBOR_CHROMIUM` or the PATH) driven with `playwright-core` through the browser flow, the error page of a bad
 * callback and the headless flow's verification pages, on a desktop and a phone. Every page the person sees is
 * saved as a screenshot under `packages/http/test-results/sign-in/`. Without Chromium the tests are skipped, except
 * in CI (`CI` set), where `.ci/run` installs it and its absence fails.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser as Chromium, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { atProvider, executable, launch } from "./chromium.js"
import { freePort, loginWith, postForm, startCallback, startProvider, startServer } from "./signInSupport.js"

const screenshots = join(import.meta.dirname, "..", "test-results", "sign-in")

let provider: Awaited<ReturnType<typeof startProvider>>
let server: Awaited<ReturnType<typeof startServer>>
let callback: Awaited<ReturnType<typeof startCallback>>
let browser: Chromium

beforeAll(async () => {
  if (executable === undefined) return
  mkdirSync(screenshots, { recursive: true })
  const port = await freePort()
  provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
  server = await startServer(port, { login: loginWith(provider) })
  callback = await startCallback()
  browser = await launch()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await provider?.close()
  await callback?.close()
})

/** A fresh browser context (no cookies) and page; on a phone when asked. What the CSP refuses is kept. */
const open = async (phone = false) => {
  const context = await browser.newContext(
    phone ? { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true } : {}
  )
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on(
    "console",
    (message) => /Content Security Policy|Refused to/.test(message.text()) && errors.push(message.text())
  )
  return { page, errors }
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true })

// A real browser's first pages take seconds on a loaded machine: each test gets 30.
describe.skipIf(executable === undefined)("signing in with Chromium", { timeout: 30_000 }, () => {
  it("the browser flow lands on the loopback callback with a token", async () => {
    const { page } = await open()
    const params = new URLSearchParams({ exit: "redirect", redirect: callback.url, create_refresh_token: "true" })
    await page.goto(`${server.url}/oauth?${params}`)
    await atProvider(page, provider.issuer, "ada")
    await page.waitForURL((url) => url.href.startsWith(callback.url))
    await shot(page, "browser-flow-callback")
    const landed = callback.seen.filter((url) => url.pathname === "/callback").at(-1)!
    assert.isString(landed.searchParams.get("token"))
    assert.isString(landed.searchParams.get("refresh_token"))
    const me = await fetch(`${server.url}/iam/v2beta1/groups`, {
      headers: { authorization: `Bearer ${landed.searchParams.get("token")}` }
    })
    assert.strictEqual(me.status, 200)
    await page.context().close()
  })

  for (const phone of [false, true]) {
    it(`a bad callback shows a readable error page, styled, with no CSP violation${phone ? " (phone)" : ""}`, async () => {
      const { errors, page } = await open(phone)
      const params = new URLSearchParams({ exit: "redirect", redirect: "https://evil.example/cb" })
      const response = await page.goto(`${server.url}/oauth?${params}`)
      assert.strictEqual(response!.status(), 400)
      assert.strictEqual(new URL(page.url()).origin, server.url)
      assert.strictEqual(await page.locator("h1").textContent(), "Sign-in failed")
      assert.include(await page.locator("main").textContent(), "must be a loopback address")
      // The inline style applies (its hash is in the policy): the card is white on grey, and fits the screen.
      const main = await page.locator("main").evaluate((e) => ({
        // Runs in the page, where `e.ownerDocument.defaultView` is its window.
        background: e.ownerDocument.defaultView!.getComputedStyle(e).backgroundColor,
        width: e.getBoundingClientRect().width
      }))
      assert.strictEqual(main.background, "rgb(255, 255, 255)")
      assert.isAtMost(main.width, phone ? 390 : 1280)
      assert.deepStrictEqual(errors, [])
      await shot(page, phone ? "error-page-phone" : "error-page")
      await page.context().close()
    })
  }

  it("the headless flow: the person types the device's code, confirms it and signs in; the client gets tokens", async () => {
    const authorization = await (await postForm(`${server.url}/oauth/device/code`)).json() as {
      device_code: string
      user_code: string
      verification_uri: string
    }
    const { errors, page } = await open(true)
    await page.goto(authorization.verification_uri)
    // Every page says which server it is.
    const host = new URL(server.url).host
    assert.strictEqual(await page.locator(".server").textContent(), `Arbor at ${host}`)
    await shot(page, "device-enter-code")
    await page.fill("input[name=user_code]", authorization.user_code.toLowerCase())
    await page.click("button[type=submit]")
    await page.waitForSelector(".code")
    assert.strictEqual(await page.locator(".code").textContent(), authorization.user_code)
    assert.include(await page.locator("main").textContent(), `A device asks to be signed in to ${host}.`)
    await shot(page, "device-confirm-code")
    await page.click("button[value=approve]")
    await atProvider(page, provider.issuer, "hopper")
    await page.waitForURL((url) => url.origin === server.url && url.pathname === "/oauth/callback")
    assert.strictEqual(await page.locator("h1").textContent(), "Signed in")
    // And which account was signed in.
    assert.include(await page.locator("main").textContent(), `You are signed in to ${host} as hopper@example.com.`)
    await shot(page, "device-signed-in")
    assert.deepStrictEqual(errors, [])
    const tokens = await (await postForm(`${server.url}/oauth/token`, {
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      device_code: authorization.device_code
    })).json() as { access_token?: string }
    assert.isString(tokens.access_token)
    await page.context().close()
  })
})
