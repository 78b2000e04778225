/**
 * Starting from a clone (issue 26): `arbor` and the server as `pnpm arbor` and `pnpm start` run them, through the
 * launcher with its bundle already made, beside Node starting with nothing to do (the floor of any command) and a
 * bare `node:http` server answering `/readyz` (the floor of any server), in alternating rounds of the same run; and
 * the time to make the server's bundle from the sources, which the first start after a change pays.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Figure } from "./Harness.js"
import { compare, section } from "./Harness.js"
import { freePort, root, waitReady } from "./Servers.js"

const launcher = join(root, "packages/launcher/launch.mjs")
const node = (args: ReadonlyArray<string>, cwd = root) =>
  execFileSync(process.execPath, args, { cwd, stdio: "ignore", env: { ...process.env, NO_COLOR: "1" } })

/**
 * The CPU time (user and system, ms) of one Node process running `args`, as the process itself counts it at exit:
 * what a call costs the machine, whatever else loads it (wall time on a shared machine says more of the neighbours).
 */
const cpuOf = (args: ReadonlyArray<string>, env: Record<string, string> = {}): number => {
  const report = "process.on('exit', () => process.stderr.write('\\ncpu-ms ' + " +
    "((process.cpuUsage().user + process.cpuUsage().system) / 1000) + '\\n'))"
  const result = spawnSync(process.execPath, [
    "--import",
    `data:text/javascript,${encodeURIComponent(report)}`,
    ...args
  ], {
    cwd: root,
    env: { ...process.env, NO_COLOR: "1", ...env },
    encoding: "utf8"
  })
  const found = /cpu-ms ([0-9.]+)/.exec(result.stderr)
  if (result.status !== 0 || found === null) throw new Error(`${args.join(" ")} failed: ${result.stderr}`)
  return Number(found[1])
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** Starts `args` with Node on a free port in a fresh directory, waits for `/readyz`, stops it. */
const startToReady = async (args: ReadonlyArray<string>) => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-start-"))
  const port = await freePort()
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { ...process.env, PORT: String(port) },
    stdio: "ignore"
  })
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`)
  } finally {
    child.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs `use` with a server started by the launcher in a fresh directory: its address and its bootstrap token. */
const withServer = async <A>(use: (api: string, token: string) => A): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-cli-"))
  const port = await freePort()
  const child = spawn(process.execPath, [launcher, "server"], {
    cwd: dir,
    env: { ...process.env, PORT: String(port) },
    stdio: "ignore"
  })
  try {
    const api = `http://127.0.0.1:${port}`
    await waitReady(`${api}/readyz`)
    return use(api, readFileSync(join(dir, ".arbor", "bootstrap-token"), "utf8").trim())
  } finally {
    child.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  }
}

const bareServer =
  `require("node:http").createServer((q, s) => s.end("{}")).listen(Number(process.env.PORT), "127.0.0.1")`

/** Runs the suite; returns its report section. */
export const run = async (): Promise<string> => {
  // Both bundles made, as after the first call.
  node([launcher, "arbor", "--version"])
  await startToReady([launcher, "server"])
  const arbor = await compare("arbor --version (ms per call)", {
    ours: () => node([launcher, "arbor", "--version"]),
    baseline: () => node(["-e", "0"]),
    baselineName: "node -e 0",
    rounds: 5,
    perRound: 3
  })
  const server = await compare("server start to /readyz (ms)", {
    ours: () => startToReady([launcher, "server"]),
    baseline: () => startToReady(["-e", bareServer]),
    baselineName: "node:http server",
    rounds: 3,
    perRound: 1
  })
  // A call's CPU, as a person's calls after the first cost it: `arbor --version`, and a list from a running server.
  // (Each call's first run writes the cache of arbor's compiled code for its command; the median is of the runs after.)
  const versionCpu = median(Array.from({ length: 5 }, () => cpuOf([launcher, "arbor", "--version"])))
  const floorCpu = median(Array.from({ length: 5 }, () => cpuOf(["-e", "0"])))
  const listCpu = await withServer((api, token) =>
    median(
      Array.from({ length: 5 }, () =>
        cpuOf([launcher, "arbor", "iam", "organizations", "list"], { ARBOR_API: api, ARBOR_TOKEN: token }))
    )
  )
  const bundling = performance.now()
  node(["-e", `import(${JSON.stringify(launcher)}).then((m) => m.bundle("server"))`])
  const bundled = performance.now() - bundling
  // A fresh clone's first start: neither the server's bundle nor the console's assets made yet (both made again here).
  rmSync(join(root, "packages/http/build/launch"), { recursive: true, force: true })
  rmSync(join(root, "packages/console/dist"), { recursive: true, force: true })
  const firstStarting = performance.now()
  await startToReady([launcher, "server"])
  const firstStart = performance.now() - firstStarting
  const figures: Array<Figure> = [
    {
      name: "arbor --version, a call after the first",
      value: `${arbor.ours.toFixed(0)} ms`,
      target: "≤ 1000 ms",
      met: arbor.ours <= 1000
    },
    {
      name: "arbor's CPU per call (user + system): --version / iam organizations list",
      value: `${versionCpu.toFixed(0)} ms / ${listCpu.toFixed(0)} ms (node -e 0: ${floorCpu.toFixed(0)} ms)`,
      target: "≤ 300 ms",
      met: Math.max(versionCpu, listCpu) <= 300
    },
    { name: "server start to /readyz, bundle made", value: `${server.ours.toFixed(0)} ms` },
    { name: "making the server's bundle from the sources", value: `${bundled.toFixed(0)} ms` },
    {
      name: "first start to /readyz from a clone (the server's bundle and the console made first)",
      value: `${firstStart.toFixed(0)} ms`,
      target: "a few seconds (≤ 10 s)",
      met: firstStart <= 10_000
    }
  ]
  return section(
    "Starting from a clone",
    [
      "`node packages/launcher/launch.mjs arbor --version` (what `pnpm arbor` and the README's `arbor()` run) and",
      "`… launch.mjs server` to its first `/readyz` answer, in a fresh directory on SQLite, each bundle already made;",
      "floors: `node -e 0`, and a bare `node:http` server answering `/readyz`. Alternating rounds, medians.",
      "Making the server's bundle is what the first start after a change (or a fresh clone) adds."
    ],
    [arbor, server],
    figures
  )
}
