/**
 * The README's command-line walkthrough, run as written (bash, with `arbor` being the built executable) against a
 * server bootstrapped on SQLite in a fresh directory, as `pnpm start` would start it.
 */
import { assert, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { startedLikePnpmStart } from "../../http/test/support.js"
import { executable } from "./globalSetup.js"

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
const section = readme.slice(readme.indexOf("## The command-line client"))
const script = /```sh\n([\s\S]*?)```/.exec(section)![1]!

it.scopedLive("the README's command-line walkthrough runs as written", () =>
  Effect.gen(function*() {
    const { cwd, url } = yield* startedLikePnpmStart
    // `arbor` is the built executable rather than `pnpm arbor`, which would build the workspace first.
    const asWritten = script.replace(/^arbor\(\) \{.*\}$/m, `arbor() { node ${executable} "$@"; }`)
    assert.notStrictEqual(asWritten, script)
    const home = mkdtempSync(join(tmpdir(), "arbor-cli-home-"))
    const { stdout } = yield* Effect.promise(() =>
      promisify(execFile)("bash", ["-euo", "pipefail", "-c", asWritten], {
        cwd,
        env: { PATH: process.env.PATH!, ARBOR_API: url, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home },
        encoding: "utf8",
        timeout: 60_000
      })
    )
    assert.match(stdout, /^IDENTITY +ROLE +GROUP +UID\ndeployer +viewer +platform +/m)
    assert.include(stdout, "default\n└── platform\n")
  }), { timeout: 120_000 })
