/**
 * The programs run from a clone without a TypeScript build: bundled from the sources on first use, the bundle used
 * again while nothing it was made from changed, made again when something did.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, statSync, utimesSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const launcher = fileURLToPath(new URL("../launch.mjs", import.meta.url))
const bundleOf = (name: string) =>
  fileURLToPath(new URL(`../../${name === "arbor" ? "cli" : "http"}/build/launch/${name}.mjs`, import.meta.url))
const launch = (args: ReadonlyArray<string>, cwd?: string) =>
  promisify(execFile)("node", [launcher, ...args], { encoding: "utf8", timeout: 120_000, cwd })

describe("launch.mjs", () => {
  it(
    "bundles arbor on first use, runs the bundle again while it is fresh, and bundles again when it is stale",
    async () => {
      assert.strictEqual((await launch(["arbor", "--version"])).stdout.trim(), "0.1.0")
      const made = statSync(bundleOf("arbor")).mtimeMs
      assert.strictEqual((await launch(["arbor", "--version"])).stdout.trim(), "0.1.0")
      assert.strictEqual(statSync(bundleOf("arbor")).mtimeMs, made, "a fresh bundle is not made again")

      // A bundle older than its sources (as after an edit or a pull) is made again.
      const past = new Date(Date.UTC(2000, 0, 1))
      utimesSync(bundleOf("arbor"), past, past)
      assert.strictEqual((await launch(["arbor", "--version"])).stdout.trim(), "0.1.0")
      assert.isAbove(statSync(bundleOf("arbor")).mtimeMs, past.getTime())
    },
    180_000
  )

  it("starts the server, which answers, serves its reference's assets, and stops on SIGTERM", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-launch-"))
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    const server = spawn("node", [launcher, "server"], { cwd, env: { ...process.env, PORT: String(port) } })
    let logs = ""
    server.stdout.on("data", (chunk) => (logs += chunk))
    server.stderr.on("data", (chunk) => (logs += chunk))
    const exited = new Promise<number | null>((resolve) => server.on("exit", resolve))
    try {
      const deadline = Date.now() + 120_000
      let ready = false
      while (!ready && Date.now() < deadline) {
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.isTrue(ready, logs)
      const css = await fetch(`http://127.0.0.1:${port}/docs/swagger-ui.css`)
      assert.strictEqual(css.status, 200)
      assert.include(logs, `listening on http://127.0.0.1:${port}`)
      server.kill("SIGTERM")
      assert.strictEqual(await exited, 0, logs)
    } finally {
      server.kill("SIGKILL")
    }
  }, 180_000)

  it("names the programs when given none it knows", async () => {
    const refused = await launch(["nonesuch"]).then(() => undefined, (e: { code: number; stderr: string }) => e)
    assert.strictEqual(refused?.code, 2)
    assert.match(
      refused?.stderr ?? "",
      /usage: node packages\/launcher\/launch\.mjs <server\|admin\|arbor> \[arguments\]/
    )
  })
})
