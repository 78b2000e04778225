/**
 * Webhook deliveries across a crash: the standalone server, as `pnpm start` runs it, killed with SIGKILL while it
 * delivers a backlog, then started again on the same data and address, on SQLite and on PostgreSQL, twice. It takes
 * its own lease back at once (no wait for the dead process's lease to expire) and sends again at most the entry that
 * was in flight and the one before it, whose record was being written.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import { freePort, startServer, waitFor } from "./processes.js"

describe("webhook deliveries across a crash", () => {
  const dirs: Array<string> = []
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

  it.each(["sqlite", "postgres"] as const)(
    "on %s: resume at once after SIGKILL, repeating at most the entry in flight and the one before",
    async (store) => {
      const cwd = mkdtempSync(join(tmpdir(), "arbor-deliveries-crash-"))
      dirs.push(cwd)
      // A sink that fails while the backlog is written, then answers at once: many deliveries a second, each of
      // which the server must have recorded.
      const received: Array<{ readonly id: string; readonly at: number }> = []
      let failing = true
      const sink = createServer((request, response) => {
        request.resume().on("end", () => {
          if (failing) return void response.writeHead(503).end()
          received.push({ id: String(request.headers["ce-id"]), at: Date.now() })
          response.writeHead(204).end()
        })
      })
      await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve))
      const port = await freePort()
      const env = {
        ARBOR_ALLOW_INSECURE_SINKS: "loopback",
        ...(store === "postgres" ?
          {
            ARBOR_STORE: "postgres",
            ARBOR_DATABASE_URL: await Effect.runPromise(freshDatabase),
            ARBOR_SECRETS_KEY: "ab".repeat(32)
          } :
          {})
      }
      let server = startServer(cwd, port, env)
      try {
        await server.ready
        const token = readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8").trim()
        const call = async (method: string, path: string, body?: unknown): Promise<any> => {
          const response = await fetch(`http://127.0.0.1:${port}${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          })
          // A write that kept losing its race on a loaded machine is UNAVAILABLE: asked again, as a client would
          // after its Retry-After, so that every one of the backlog's writes is made (and delivered).
          if (response.status === 503) {
            await new Promise((r) => setTimeout(r, 200))
            return call(method, path, body)
          }
          return await response.json()
        }
        const org = (await call("GET", "/iam/v2beta1/groups?uidp.in_root=true")).groups[0].uid as string
        await call("POST", `/events/v2beta1/subscriptions/${org}`, {
          sink: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`
        })
        const writes = 300
        let next = 0
        await Promise.all(Array.from({ length: 8 }, async () => {
          while (next < writes) await call("POST", `/iam/v2beta1/groups/${org}`, { name: `folder ${next++}` })
        }))
        failing = false
        for (const crash of [1, 2]) {
          await waitFor(async () => received.length >= crash * 60, 60_000)
          assert.isBelow(new Set(received.map((r) => r.id)).size, writes, `crash ${crash}: amid the backlog`)
          server.child.kill("SIGKILL")
          await server.exited
          const beforeCrash = received.length
          const repeatedBefore = received.length - new Set(received.map((r) => r.id)).size
          server = startServer(cwd, port, env)
          await server.ready
          const restarted = Date.now()
          await waitFor(async () => received.length > beforeCrash + 5, 25_000)
          const resumedAfter = received[beforeCrash]!.at - restarted
          // Well before the dead process's lease (30 s) would have expired, however loaded the machine.
          assert.isBelow(resumedAfter, 15_000, `deliveries resumed ${resumedAfter} ms after the restart`)
          const repeated = received.length - new Set(received.map((r) => r.id)).size - repeatedBefore
          assert.isAtMost(repeated, 2, `crash ${crash}: ${repeated} entries were delivered twice`)
        }
        await waitFor(async () => new Set(received.map((r) => r.id)).size === writes, 90_000)
      } finally {
        server.child.kill("SIGKILL")
        await server.exited
        sink.close()
      }
    },
    300_000
  )
})
