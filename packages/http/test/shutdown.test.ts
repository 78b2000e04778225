/**
 * The standalone server, as `pnpm start` runs it, in a child process: it starts with nothing configured, and on
 * SIGTERM it stops accepting connections, lets an in-flight request finish, and exits cleanly.
 */
import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, startServer } from "./processes.js"

describe("standalone server", () => {
  it("starts with defaults, bootstraps once, and on SIGTERM finishes in-flight requests before exiting", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-start-"))
    const port = await freePort()
    const { child, exited, logs, ready } = startServer(cwd, port)
    try {
      await ready
      const token = readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8").trim()
      assert.match(logs(), /bootstrapped a new organization/)
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
      assert.strictEqual(await exited, 0, logs())
      const afterwards = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => "answered", () => "refused")
      assert.strictEqual(afterwards, "refused")
    } finally {
      child.kill("SIGKILL")
    }
  }, 120_000)
})
