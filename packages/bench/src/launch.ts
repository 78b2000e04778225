/**
 * Starting from a clone (issue 26): `arbor` and the server as `pnpm arbor` and `pnpm start` run them, through the
 * launcher with its bundle already made, beside Node starting with nothing to do (the floor of any command) and a
 * bare `node:http` server answering `/readyz` (the floor of any server), in alternating rounds of the same run; and
 * the time to make the server's bundle from the sources, which the first start after a change pays.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Figure } from "./Harness.js"
import { compare, section } from "./Harness.js"
import { freePort, root, waitReady } from "./Servers.js"

const launcher = join(root, "packages/launcher/launch.mjs")
const node = (args: ReadonlyArray<string>, cwd = root) =>
  execFileSync(process.execPath, args, { cwd, stdio: "ignore", env: { ...process.env, NO_COLOR: "1" } })

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
  const bundling = performance.now()
  node(["-e", `import(${JSON.stringify(launcher)}).then((m) => m.bundle("server"))`])
  const bundled = performance.now() - bundling
  const figures: Array<Figure> = [
    {
      name: "arbor --version, a call after the first",
      value: `${arbor.ours.toFixed(0)} ms`,
      target: "≤ 1000 ms",
      met: arbor.ours <= 1000
    },
    { name: "server start to /readyz, bundle made", value: `${server.ours.toFixed(0)} ms` },
    { name: "making the server's bundle from the sources", value: `${bundled.toFixed(0)} ms` }
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
