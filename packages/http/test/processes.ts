/**
 * The standalone server and the admin commands as child processes, started as `pnpm start` and `pnpm admin` start
 * them (the launcher's bundle of the sources), in an environment without the test runner's own variables.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const launcher = fileURLToPath(new URL("../../launcher/launch.mjs", import.meta.url))

/** The environment without the test runner's own variables, as a user's shell would have it. */
export const cleanEnv = (): Record<string, string | undefined> =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(VITEST|VITE_|NODE_OPTIONS|TEST$|NODE_ENV$|PORT$|ARBOR_)/.test(k))
  )

/** A port nothing listens on now. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = (probe.address() as AddressInfo).port
      probe.close(() => resolve(port))
    })
  })

/** Retries `check` until it holds, for at most `ms`. */
export const waitFor = async (check: () => Promise<boolean>, ms: number) => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("timed out")
}

/** `pnpm start` in `cwd` on `port`, its output collected in `logs()` (stderr alone in `stderr()`); the caller kills it. */
export const startServer = (cwd: string, port: number, env: Record<string, string> = {}) => {
  const child: ChildProcessWithoutNullStreams = spawn("node", [launcher, "server"], {
    cwd,
    env: { ...cleanEnv(), PORT: String(port), ...env }
  })
  let logs = ""
  let stderr = ""
  child.stdout.on("data", (c) => (logs += c))
  child.stderr.on("data", (c) => {
    logs += c
    stderr += c
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  // Ready once it answers and its "listening" line has come through the pipe (which may lag the answer).
  const ready = waitFor(
    async () =>
      (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).ok &&
      logs.includes(`"message":"listening on`),
    60_000
  )
  return { child, exited, ready, logs: () => logs, stderr: () => stderr }
}

/** `pnpm admin <args>` in `cwd`: its stdout and stderr. */
export const admin = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  promisify(execFile)("node", [launcher, "admin", ...args], {
    cwd,
    env: { ...cleanEnv(), ...env },
    encoding: "utf8",
    timeout: 60_000
  })
