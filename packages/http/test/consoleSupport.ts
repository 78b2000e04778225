/**
 * What the console's browser tests share (`console*.test.ts`): each file's server, OpenID provider and Chromium with an
 * invite to an organization, a page at a desktop's or a phone's width, and what a person sees of it (axe, overflow,
 * screenshots under `packages/http/test-results/console/`).
 */
import { GroupInvites, Groups, Principal, Role } from "@arbor/core"
import axe from "axe-core"
import * as Effect from "effect/Effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser as Chromium, Page } from "playwright-core"
import { afterAll, assert, beforeAll } from "vitest"
import { executable, launch } from "./chromium.js"
import { freePort, loginWith, startProvider, startServer } from "./signInSupport.js"

export const screenshots = join(import.meta.dirname, "..", "test-results", "console")

export let provider: Awaited<ReturnType<typeof startProvider>>
export let server: Awaited<ReturnType<typeof startServer>>
export let browser: Chromium
export let invite: { readonly code: string; readonly org: string }

/** Starts a test file's server, its OpenID provider and Chromium, with an invite to `acme`; stopped when its tests end. */
export const useConsole = () => {
  beforeAll(async () => {
    if (executable === undefined) return
    mkdirSync(screenshots, { recursive: true })
    const port = await freePort()
    provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
    server = await startServer(port, { login: loginWith(provider) })
    invite = await server.runtime.runPromise(Effect.gen(function*() {
      const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "acme" })
      const created = yield* (yield* GroupInvites.GroupInvites).create(Principal.system, org.uid, {
        roleUid: Role.builtInByName("owner")!.uid
      })
      return { code: created.code!, org: org.uid }
    }))
    browser = await launch()
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await provider?.close()
  })
}
/** A page in a fresh context, at a desktop's or a phone's size, which keeps what the CSP refused. */
export const open = async (width: 1280 | 390) => {
  // The copy buttons write to the clipboard, which the tests read back.
  const permissions = ["clipboard-read", "clipboard-write"]
  const context = await browser.newContext(
    width === 390
      ? { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, permissions }
      : { viewport: { width: 1280, height: 900 }, permissions }
  )
  const page = await context.newPage()
  const refused: Array<string> = []
  page.on("console", (m) => /Content Security Policy|Refused to/.test(m.text()) && refused.push(m.text()))
  page.on("dialog", (dialog) => void dialog.accept())
  return { page, refused }
}

/** Serious or critical accessibility violations on the page as it stands, by rule and element. */
export const violations = async (page: Page): Promise<ReadonlyArray<string>> => {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (it would refuse a script tag).
  await page.evaluate(axe.source)
  const results = await page.evaluate<axe.AxeResults>("axe.run(document, { resultTypes: ['violations'] })")
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(" ")}: ${n.failureSummary ?? ""}`))
}

/** Checks the page (accessibility, CSP, no page wider than the screen) and keeps its screenshot. */
export const look = async (page: Page, refused: ReadonlyArray<string>, name: string, width: number) => {
  await page.screenshot({ path: join(screenshots, `${name}-${width}.png`), fullPage: true })
  assert.deepStrictEqual(await violations(page), [], name)
  assert.deepStrictEqual(refused, [], name)
  const overflow = await page.evaluate<number>(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
  )
  assert.isAtMost(overflow, 0, `${name} is wider than the screen`)
}

/**
 * Waits until `expression` is true in the page: evaluated through the DevTools protocol, as the policy refuses the
 * string evaluation of `waitForFunction`.
 */
export const until = async (page: Page, expression: string) => {
  for (let i = 0; i < 200; i++) {
    if (await page.evaluate<boolean>(expression)) return
    await new Promise((resume) => setTimeout(resume, 50))
  }
  throw new Error(`never true: ${expression}`)
}

/** The token the console holds for the signed-in person. */
export const tokenOf = (page: Page) => page.evaluate<string>("sessionStorage.getItem('arbor.console.token')")
