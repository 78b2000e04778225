/**
 * Chromium for the tests that drive a real browser (the sign-in pages, the console): Debian's `chromium`, found
 * through `ARBOR_CHROMIUM` or the PATH, launched for loopback only (no other name resolves, no background calls).
 * Without it those tests are skipped, except in CI (`CI` set), where `.ci/run` installs it and its absence fails.
 */
import { execFileSync } from "node:child_process"
import { chromium, type Page } from "playwright-core"

/** The Chromium executable, when there is one. */
export const executable = (() => {
  if (process.env.ARBOR_CHROMIUM) return process.env.ARBOR_CHROMIUM
  try {
    return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim()
  } catch {
    return undefined
  }
})()
if (executable === undefined && process.env.CI) throw new Error("Chromium is required in CI; .ci/run installs it")

/** A headless Chromium that reaches loopback only (the provider's development pages link a web font). */
export const launch = () =>
  chromium.launch({
    executablePath: executable!,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
    ]
  })

/** Signs in as `login` at the development pages of the test's OpenID provider at `issuer`: the login, then consent. */
export const atProvider = async (page: Page, issuer: string, login: string) => {
  await page.waitForURL((url) => url.origin === issuer)
  await page.fill("input[name=login]", `sub-${login}`)
  await page.fill("input[name=password]", "any")
  await page.click("button[type=submit]")
  // The consent page follows the login page; its button says Continue.
  await page.click("button[type=submit]:has-text('Continue')")
}
