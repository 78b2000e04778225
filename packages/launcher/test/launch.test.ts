/**
 * The programs run from a clone without a TypeScript build: bundled from the sources on first use, the bundle used
 * again while nothing it was made from changed, made again when something did.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const launcher = fileURLToPath(new URL("../launch.mjs", import.meta.url))
const bundleOf = (name: string) =>
  fileURLToPath(
    new URL(
      `../../${name === "arbor" ? "cli" : "http"}/build/launch/${name}.${name === "arbor" ? "cjs" : "mjs"}`,
      import.meta.url
    )
  )
const launch = (args: ReadonlyArray<string>, cwd?: string) =>
  promisify(execFile)("node", [launcher, ...args], { encoding: "utf8", timeout: 120_000, cwd })
const compiled = fileURLToPath(new URL("../../cli/bin/compiled.mjs", import.meta.url))
/** Runs arbor's launch bundle as its executable does (`cli/bin/compiled.mjs`), its compiled code cached in `cache`. */
const runCached = (cache: string, args: ReadonlyArray<string>) =>
  promisify(execFile)("node", [
    "--input-type=module",
    "-e",
    `process.argv = [process.argv[0], ${JSON.stringify(bundleOf("arbor"))}, ...${JSON.stringify(args)}]
    ;(await import(${JSON.stringify(compiled)})).runBundle(process.argv[1], ${JSON.stringify(cache)})`
  ], { encoding: "utf8", timeout: 120_000 })
/** The cache of arbor's compiled code in `cache` and the commands it covers, as the calls so far left them. */
const cachedIn = (cache: string) => {
  const files = readdirSync(cache).sort()
  const commands = files.find((file) => file.endsWith(".commands"))
  return {
    files,
    cache: join(cache, files.find((file) => file.endsWith(".v8cache")) ?? "none"),
    commands: commands === undefined ? [] : readFileSync(join(cache, commands), "utf8").split("\n")
  }
}

describe("launch.mjs", () => {
  it(
    "bundles arbor on first use, runs the bundle again while it is fresh, and bundles again when it is stale",
    async () => {
      assert.strictEqual((await launch(["arbor", "--version"])).stdout.trim(), "0.1.0")
      const made = statSync(bundleOf("arbor")).mtimeMs
      assert.strictEqual((await launch(["arbor", "--version"])).stdout.trim(), "0.1.0")
      assert.strictEqual(statSync(bundleOf("arbor")).mtimeMs, made, "a fresh bundle is not made again")

      // A bundle older than its sources (as after an edit or a pull) is made again.
      const past = new Date(Date.UTC(2000, 0, 1))
      utimesSync(bundleOf("arbor"), past, past)
      assert.strictEqual((await launch(["arbor", "--version"])).stdout.trim(), "0.1.0")
      assert.isAbove(statSync(bundleOf("arbor")).mtimeMs, past.getTime())
    },
    180_000
  )

  it(
    "runs arbor with its compiled code cached: written by a first call, used by the next, written again for a new command or when V8 refuses it",
    async () => {
      await launch(["arbor", "--version"])
      const cache = mkdtempSync(join(tmpdir(), "arbor-code-cache-"))
      try {
        assert.strictEqual((await runCached(cache, ["--version"])).stdout.trim(), "0.1.0")
        const first = cachedIn(cache)
        assert.deepStrictEqual(first.commands, ["arbor"])
        assert.isAbove(statSync(first.cache).size, 100_000)

        // The same command again: the cache is used as it is.
        const written = statSync(first.cache).mtimeMs
        assert.strictEqual((await runCached(cache, ["--version"])).stdout.trim(), "0.1.0")
        assert.strictEqual(statSync(first.cache).mtimeMs, written)

        // A command none of the calls ran: written again, with what that call compiled too.
        assert.include((await runCached(cache, ["config", "--help"])).stdout, "config")
        assert.deepStrictEqual(cachedIn(cache).commands, ["arbor", "arbor config"])

        // A damaged cache (or one of another Node): V8 refuses it, the call runs as ever, and it is written again;
        // another bundle's cache beside it is removed.
        writeFileSync(first.cache, "not a cache")
        writeFileSync(join(cache, "0123456789abcdef.v8cache"), "another bundle's")
        assert.strictEqual((await runCached(cache, ["--version"])).stdout.trim(), "0.1.0")
        assert.isAbove(statSync(first.cache).size, 100_000)
        assert.deepStrictEqual(cachedIn(cache).files, first.files)
        assert.deepStrictEqual(cachedIn(cache).commands, ["arbor"])
      } finally {
        rmSync(cache, { recursive: true, force: true })
      }
    },
    180_000
  )

  it("starts the server, which answers, serves its reference's assets, and stops on SIGTERM", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-launch-"))
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    const server = spawn("node", [launcher, "server"], { cwd, env: { ...process.env, PORT: String(port) } })
    let logs = ""
    server.stdout.on("data", (chunk) => (logs += chunk))
    server.stderr.on("data", (chunk) => (logs += chunk))
    const exited = new Promise<number | null>((resolve) => server.on("exit", resolve))
    try {
      const deadline = Date.now() + 120_000
      let ready = false
      while (!ready && Date.now() < deadline) {
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.isTrue(ready, logs)
      const css = await fetch(`http://127.0.0.1:${port}/docs/swagger-ui.css`)
      assert.strictEqual(css.status, 200)
      assert.include(logs, `listening on http://127.0.0.1:${port}`)
      server.kill("SIGTERM")
      assert.strictEqual(await exited, 0, logs)
    } finally {
      server.kill("SIGKILL")
    }
  }, 180_000)

  it("names the programs when given none it knows", async () => {
    const refused = await launch(["nonesuch"]).then(() => undefined, (e: { code: number; stderr: string }) => e)
    assert.strictEqual(refused?.code, 2)
    assert.match(
      refused?.stderr ?? "",
      /usage: node packages\/launcher\/launch\.mjs <server\|admin\|arbor> \[arguments\]/
    )
  })
})
