/**
 * Servers under load: the standalone Arbor server in its own process on a fresh data directory, and autocannon to
 * drive it from this one.
 */
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The clone's root. */
export const root = fileURLToPath(new URL("../../../", import.meta.url))

/** A port free on 127.0.0.1 right now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address() as { port: number }
      probe.close(() => resolve(address.port))
    })
  })

/** Waits until `url` answers 2xx (30 s at most). */
export const waitReady = async (url: string) => {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(url, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${url} did not become ready`)
}

/** A running Arbor server: its address, the bootstrap token and organization, and the process. */
export interface Arbor {
  readonly base: string
  readonly token: string
  readonly org: string
  readonly child: ChildProcess
}

/**
 * Starts `pnpm start`'s server with its data in `dataDir` (SQLite unless `env` says otherwise), on `port` (a free one
 * unless given: a server restarted on its port keeps its name), and waits until it is ready.
 */
export const spawnArbor = async (dataDir: string, env: Record<string, string> = {}, at?: number) => {
  const port = at ?? await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [join(root, "packages/http/dist/main.js")], {
    env: { ...process.env, PORT: String(port), ARBOR_BASE_URL: base, ARBOR_DATA_DIR: dataDir, ...env },
    // ARBOR_BENCH_SERVER_ERRORS=1 shows what the servers write to stderr.
    stdio: ["ignore", "ignore", process.env.ARBOR_BENCH_SERVER_ERRORS === "1" ? "inherit" : "ignore"]
  })
  await waitReady(`${base}/readyz`)
  return { base, child }
}

/** Starts a server on an empty store (SQLite in `dataDir` unless `env` says otherwise): it bootstraps an organization. */
export const startArbor = async (
  dataDir: string,
  env: Record<string, string> = {},
  port?: number
): Promise<Arbor> => {
  const { base, child } = await spawnArbor(dataDir, env, port)
  const token = readFileSync(join(dataDir, "bootstrap-token"), "utf8").trim()
  const listed = await fetch(`${base}/iam/v2beta1/groups?uidp.in_root=true`, {
    headers: { authorization: `Bearer ${token}` }
  })
  const org = ((await listed.json()) as { groups: Array<{ uid: string }> }).groups[0]!.uid
  return { base, token, org, child }
}

/** Requests per second and p99 latency of one load run. */
export interface Load {
  readonly rps: number
  readonly p99: number
}

/** `seconds` of GETs of `url` with the bearer `token` from 50 connections; any non-2xx answer is an error. */
export const load = (url: string, token: string, seconds: number, post?: unknown): Promise<Load> =>
  new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        connections: 50,
        duration: seconds,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(post === undefined ? {} : { method: "POST" as const, body: JSON.stringify(post) })
      },
      (error, result) => {
        if (error) return reject(error)
        if (result.non2xx > 0 || result.errors > 0) {
          return reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`))
        }
        resolve({ rps: result.requests.average, p99: result.latency.p99 })
      }
    )
  })

/** The median. */
export const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
