/**
 * The standalone server, as `pnpm start` runs it, in a child process: it starts with nothing configured, and on
 * SIGTERM it stops accepting connections, lets an in-flight request finish, and exits cleanly.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { createServer, request } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const packageDir = fileURLToPath(new URL("..", import.meta.url))

/** The environment without the test runner's own variables, as a user's shell would have it. */
const cleanEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(VITEST|VITE_|NODE_OPTIONS|TEST$|NODE_ENV$)/.test(k))
  )

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as AddressInfo).port
      probe.close(() => resolve(port))
    })
  })

const waitFor = async (check: () => Promise<boolean>, ms: number) => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("timed out")
}

describe("standalone server", () => {
  it("starts with defaults, bootstraps once, and on SIGTERM finishes in-flight requests before exiting", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-start-"))
    const port = await freePort()
    const child = spawn(
      join(packageDir, "node_modules/.bin/vite-node"),
      ["--root", packageDir, "--config", join(packageDir, "vitest.config.ts"), join(packageDir, "src/main.ts")],
      { cwd, env: { ...cleanEnv(), PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let logs = ""
    child.stdout.on("data", (c) => (logs += c))
    child.stderr.on("data", (c) => (logs += c))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).ok,
        60_000
      )
      const token = readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8").trim()
      assert.match(logs, /bootstrapped a new organization/)
      const orgs = await (await fetch(`http://127.0.0.1:${port}/iam/v2beta1/groups?uidp.in_root=true`, {
        headers: { authorization: `Bearer ${token}` }
      })).json() as { groups: Array<{ uid: string; name: string }> }
      assert.strictEqual(orgs.groups[0]!.name, "default")

      // A request whose body is still arriving when SIGTERM comes.
      const reply = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({
          host: "127.0.0.1",
          port,
          method: "POST",
          path: `/iam/v2beta1/groups/${orgs.groups[0]!.uid}`,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "transfer-encoding": "chunked"
          }
        }, (res) => {
          let body = ""
          res.on("data", (c) => (body += c))
          res.on("end", () => resolve({ status: res.statusCode!, body }))
        })
        req.on("error", reject)
        req.write("{\"name\": ")
        setTimeout(() => {
          child.kill("SIGTERM")
          setTimeout(() => req.end("\"in flight\"}"), 300)
        }, 300)
      })
      const finished = await reply
      assert.strictEqual(finished.status, 200, finished.body)
      assert.strictEqual(JSON.parse(finished.body).name, "in flight")
      assert.strictEqual(await exited, 0, logs)
      const afterwards = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => "answered", () => "refused")
      assert.strictEqual(afterwards, "refused")
    } finally {
      child.kill("SIGKILL")
    }
  }, 120_000)
})
