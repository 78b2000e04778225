/**
 * The packed `@arbor/cli` alone installs with `npm install -g` and gives a working `arbor` on the PATH: one bundled
 * file, no dependencies to fetch.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { assert, it } from "vitest"

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL("..", import.meta.url))

it("npm install -g of the packed package installs a working arbor", async () => {
  const out = mkdtempSync(join(tmpdir(), "arbor-cli-pack-"))
  await run("npx", ["-y", "pnpm@10", "pack", "--pack-destination", out], { cwd: packageDir, timeout: 120_000 })
  const tarball = readdirSync(out).find((f) => f.endsWith(".tgz"))!
  const prefix = join(out, "global")
  await run("npm", ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", join(out, tarball)], {
    timeout: 120_000
  })
  const arbor = join(prefix, "bin", "arbor")
  const home = mkdtempSync(join(tmpdir(), "arbor-cli-home-"))
  const env = { PATH: process.env.PATH!, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home }
  assert.strictEqual((await run(arbor, ["--version"], { env })).stdout.trim(), "0.1.0")
  const notLoggedIn = await run(arbor, ["auth", "token", "--api", "http://127.0.0.1:9"], { env }).catch((e) => e)
  assert.strictEqual(notLoggedIn.code, 3)
  assert.strictEqual(notLoggedIn.stderr, "arbor: not logged in to http://127.0.0.1:9; run arbor auth login\n")
}, 240_000)
