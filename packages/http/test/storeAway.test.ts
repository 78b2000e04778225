/**
 * A store that goes away (DECISIONS §20): requests meanwhile are UNAVAILABLE (503 with Retry-After), never INTERNAL,
 * and the server answers as before once it is back. PostgreSQL is reached through a loopback proxy the test cuts
 * (every connection dropped, new ones refused) and restores; SQLite's file is locked by another process's
 * connection, as a backup tool or a stray `sqlite3` shell would hold it.
 */
import { RefreshTokens, type Uid } from "@arbor/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as jose from "jose"
import { createRequire } from "node:module"
import { createServer, type Server, Socket } from "node:net"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import * as ArborServer from "../src/Server.js"
import { freePort } from "./processes.js"
import { startServer } from "./signInSupport.js"
import { member, quiet, testConfig } from "./support.js"

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

/** A fresh PostgreSQL database reached through such a proxy: its URL through the proxy, and the proxy's cut and restore. */
const proxiedDatabase = async () => {
  const url = new URL(await Effect.runPromise(freshDatabase))
  const link = await proxy(url.hostname, Number(url.port))
  url.port = String(link.port)
  return { ...link, url: Redacted.make(url.toString()) }
}

describe("a store that goes away", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let database: Awaited<ReturnType<typeof proxiedDatabase>>
  beforeAll(async () => {
    database = await proxiedDatabase()
    server = await startServer(await freePort(), {
      store: "postgres",
      databaseUrl: database.url,
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

  it(
    "the token keys meanwhile: the JWKS and a token of a key not yet seen are 503 UNAVAILABLE, never 500; back, both answer",
    async () => {
      // A token of a key this server does not hold (another server's newer one, or a forger's): it reads the stored
      // keys before it refuses the token.
      const { privateKey } = await jose.generateKeyPair("ES256")
      const unknownKey = await new jose.SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "not-yet-seen", typ: "JWT" })
        .setIssuer(server.config.authUrl)
        .setAudience(server.url)
        .setSubject("0".repeat(40))
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey)
      const ask = async () => {
        const [jwks, unknown] = await Promise.all([
          fetch(`${server.config.authUrl}/.well-known/jwks.json`),
          fetch(`${server.url}/iam/v2beta1/groups`, { headers: { authorization: `Bearer ${unknownKey}` } })
        ])
        return [
          { status: jwks.status, retryAfter: jwks.headers.get("retry-after") },
          { status: unknown.status, retryAfter: unknown.headers.get("retry-after") }
        ]
      }
      // The JWKS reads the stored keys at most once a second, an unknown key's token once in ten seconds: this server
      // has read them for neither yet (its requests so far bore tokens of its own key), so each reads them now.
      await new Promise((r) => setTimeout(r, 1_100))
      await database.cut()
      try {
        assert.deepStrictEqual(await ask(), [{ status: 503, retryAfter: "1" }, { status: 503, retryAfter: "1" }])
      } finally {
        await database.restore()
      }
      let answers: Array<{ status: number }> = []
      for (let attempt = 0; attempt < 60; attempt++) {
        await new Promise((r) => setTimeout(r, 250))
        answers = await ask()
        if (answers[0]!.status === 200 && answers[1]!.status === 401) break
      }
      assert.deepStrictEqual(answers.map((a) => a.status), [200, 401])
    },
    60_000
  )
})

describe("a store that goes away while the server looks after its keys", () => {
  let url: string
  let runtime: ManagedRuntime.ManagedRuntime<never, unknown>
  let database: Awaited<ReturnType<typeof proxiedDatabase>>
  beforeAll(async () => {
    database = await proxiedDatabase()
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    // The whole server, as `arbor-server` runs it; keys three seconds old are rotated, looked after every 200 ms.
    const config = testConfig({
      port,
      baseUrl: url,
      authUrl: url,
      store: "postgres",
      databaseUrl: database.url,
      databasePool: 2,
      keyRotation: Duration.seconds(3)
    })
    runtime = ManagedRuntime.make(
      ArborServer.layer(config).pipe(
        Layer.provide(Layer.succeed(ArborServer.KeyMaintenanceInterval, Duration.millis(200))),
        Layer.provide(quiet)
      )
    )
    await runtime.runPromise(Effect.void)
  }, 60_000)
  afterAll(() => runtime?.dispose())

  it("rounds that fail meanwhile are skipped, and the keys are rotated again once it is back", async () => {
    const kids = async () => {
      const response = await fetch(`${url}/.well-known/jwks.json`)
      if (response.status !== 200) return undefined
      return (await response.json() as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid)
    }
    /** The key set once a key not in `seen` is in it, or the last one read within `attempts` reads. */
    const rotatedPast = async (seen: ReadonlyArray<string>, attempts = 60) => {
      let read: Array<string> | undefined
      for (let attempt = 0; attempt < attempts; attempt++) {
        await new Promise((r) => setTimeout(r, 250))
        read = await kids()
        if (read !== undefined && read.some((kid) => !seen.includes(kid))) break
      }
      return read ?? []
    }
    // Its first key, not yet due: the store goes away before it is, and comes back after.
    const first = await kids()
    assert.strictEqual(first?.length, 1)
    await database.cut()
    await new Promise((r) => setTimeout(r, 3_500))
    await database.restore()
    const after = await rotatedPast(first!)
    assert.isTrue(after.some((kid) => !first!.includes(kid)), `no key rotated in after the store came back: ${after}`)
  }, 60_000)
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
