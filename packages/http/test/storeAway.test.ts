/**
 * A store that goes away (DECISIONS §20): requests meanwhile are UNAVAILABLE (503 with Retry-After), never INTERNAL,
 * and the server answers as before once it is back. PostgreSQL is reached through a loopback proxy the test cuts
 * (every connection dropped, new ones refused) and restores; SQLite's file is locked by another process's
 * connection, as a backup tool or a stray `sqlite3` shell would hold it.
 */
import { RefreshTokens, type Uid } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createRequire } from "node:module"
import { createServer, type Server, Socket } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import { freePort } from "./processes.js"
import { startServer } from "./signInSupport.js"
import { member } from "./support.js"

/** A TCP proxy on loopback to `host:port`, which can be cut (connections dropped, new ones refused) and restored. */
const proxy = async (host: string, port: number) => {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  const listening = await freePort()
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = new Socket().connect(port, host)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket)).on("error", () => socket.destroy())
        }
        client.pipe(upstream).pipe(client)
      })
      server.listen(listening, "127.0.0.1", resolve)
    })
  await listen()
  return {
    port: listening,
    cut: () =>
      new Promise<void>((resolve) => {
        server!.close(() => resolve())
        sockets.forEach((socket) => socket.destroy())
      }),
    restore: listen
  }
}

describe("a store that goes away", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let database: Awaited<ReturnType<typeof proxy>>
  beforeAll(async () => {
    const url = new URL(await Effect.runPromise(freshDatabase))
    database = await proxy(url.hostname, Number(url.port))
    url.port = String(database.port)
    server = await startServer(await freePort(), {
      store: "postgres",
      databaseUrl: Redacted.make(url.toString()),
      databasePool: 4
    })
  }, 60_000)
  afterAll(() => server?.close())

  it(
    "PostgreSQL cut under load: every request is 503 UNAVAILABLE with Retry-After, none 500; back, all answer",
    async () => {
      const { org, token } = await server.runtime.runPromise(member("acme"))
      const load = () =>
        Promise.all(Array.from({ length: 20 }, (_, i) =>
          i % 2 === 0
            ? fetch(`${server.url}/iam/v2beta1/groups?uidp.descendants_of=${org}`, {
              headers: { authorization: `Bearer ${token}` }
            })
            : fetch(`${server.url}/iam/v2beta1/groups/${org}`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
              body: JSON.stringify({ name: `f${Math.random().toString(36).slice(2, 8)}` })
            })))
      assert.deepStrictEqual([...new Set((await load()).map((r) => r.status))], [200])
      await database.cut()
      const answers = await Promise.all((await load()).map(async (r) => ({
        status: r.status,
        retryAfter: r.headers.get("retry-after"),
        code: (await r.json() as { code: number }).code
      })))
      for (const answer of answers) {
        assert.deepStrictEqual(answer, { status: 503, retryAfter: "1", code: 14 }, JSON.stringify(answers))
      }
      await database.restore()
      let statuses: Array<number> = []
      for (let attempt = 0; attempt < 50; attempt++) {
        statuses = [...new Set((await load()).map((r) => r.status))]
        if (statuses.length === 1 && statuses[0] === 200) break
        await new Promise((r) => setTimeout(r, 200))
      }
      assert.deepStrictEqual(statuses, [200])
    },
    60_000
  )
})

/** better-sqlite3, as the SQLite store opens files (the tests' own connection to the server's file). */
const Database = createRequire(new URL("../../store-sqlite/package.json", import.meta.url))("better-sqlite3") as new(
  file: string
) => { exec: (sql: string) => void; close: () => void }

describe("a SQLite file another connection holds locked", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  beforeAll(async () => {
    server = await startServer(await freePort(), { store: "sqlite" })
  }, 60_000)
  afterAll(() => server?.close())

  it(
    "writes meanwhile are 503 UNAVAILABLE with Retry-After within seconds, not retried for long; reads go on; unlocked, all answer",
    async () => {
      const { org, token } = await server.runtime.runPromise(member("acme"))
      // Answered within seconds (3 s of retries, as a lost race gets): not after a dozen retries of a lock that stays
      // (20 s), past the 12 s these requests wait.
      const load = () =>
        Promise.all(Array.from({ length: 6 }, async (_, i) => {
          const response = i % 2 === 0
            ? await fetch(`${server.url}/iam/v2beta1/groups?uidp.descendants_of=${org}`, {
              headers: { authorization: `Bearer ${token}` },
              signal: AbortSignal.timeout(12_000)
            })
            : await fetch(`${server.url}/iam/v2beta1/groups/${org}`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
              body: JSON.stringify({ name: `f${Math.random().toString(36).slice(2, 8)}` }),
              signal: AbortSignal.timeout(12_000)
            })
          const body = await response.json() as { code?: number }
          return {
            write: i % 2 === 1,
            status: response.status,
            retryAfter: response.headers.get("retry-after"),
            code: body.code
          }
        }))
      const holder = new Database(join(server.config.dataDir, "arbor.db"))
      try {
        holder.exec("BEGIN EXCLUSIVE")
        for (const answer of await load()) {
          assert.deepStrictEqual(
            answer,
            answer.write
              ? { write: true, status: 503, retryAfter: "1", code: 14 }
              : { write: false, status: 200, retryAfter: null, code: undefined }
          )
        }
      } finally {
        holder.exec("ROLLBACK")
        holder.close()
      }
      assert.deepStrictEqual([...new Set((await load()).map((r) => r.status))], [200])
    },
    90_000
  )

  it(
    "a refresh token exchanged or revoked meanwhile is 503 too, never 500 (the refresh tokens' own writes)",
    async () => {
      const { identity } = await server.runtime.runPromise(member("refreshing"))
      const issued = () =>
        server.runtime.runPromise(
          Effect.flatMap(RefreshTokens.RefreshTokens, (tokens) => tokens.issue(identity as Uid.Uid, server.url)).pipe(
            Effect.orDie
          )
        )
      const [exchanged, revoked] = [await issued(), await issued()]
      const holder = new Database(join(server.config.dataDir, "arbor.db"))
      try {
        holder.exec("BEGIN EXCLUSIVE")
        const exchange = await fetch(`${server.url}/sts/exchange_refresh_token`, {
          method: "POST",
          headers: { authorization: `Bearer ${exchanged.token}` },
          signal: AbortSignal.timeout(12_000)
        })
        assert.deepStrictEqual(
          { status: exchange.status, retryAfter: exchange.headers.get("retry-after") },
          { status: 503, retryAfter: "1" },
          await exchange.text()
        )
        const revoke = await fetch(`${server.url}/oauth/revoke`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token: revoked.token }),
          signal: AbortSignal.timeout(12_000)
        })
        assert.strictEqual(revoke.status, 503, await revoke.text())
      } finally {
        holder.exec("ROLLBACK")
        holder.close()
      }
      const after = await fetch(`${server.url}/sts/exchange_refresh_token`, {
        method: "POST",
        headers: { authorization: `Bearer ${exchanged.token}` }
      })
      assert.strictEqual(after.status, 200, await after.text())
    },
    90_000
  )
})
