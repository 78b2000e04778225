/**
 * The README's command-line walkthrough, run as written (bash, with `arbor` being the built executable) after the
 * HTTP walkthrough before it, as a newcomer reads them, against a server bootstrapped on SQLite in a fresh
 * directory, as `pnpm start` would start it.
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
/** The first ```sh block after a heading. */
const block = (heading: string) => /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(`## ${heading}`)))![1]!
const script = block("The command-line client")

it.scopedLive("the README's command-line walkthrough runs as written", () =>
  Effect.gen(function*() {
    const { cwd, url } = yield* startedLikePnpmStart
    // `arbor` is the built executable rather than `pnpm arbor`, which would build the workspace first.
    const asWritten = script.replace(/^arbor\(\) \{.*\}$/m, `arbor() { node ${executable} "$@"; }`)
    assert.notStrictEqual(asWritten, script)
    const home = mkdtempSync(join(tmpdir(), "arbor-cli-home-"))
    const { stdout } = yield* Effect.promise(() =>
      promisify(execFile)("bash", ["-euo", "pipefail", "-c", `${block("Walkthrough")}\n${asWritten}`], {
        cwd,
        env: { PATH: process.env.PATH!, ARBOR: url, ARBOR_API: url, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home },
        encoding: "utf8",
        timeout: 60_000
      })
    )
    assert.match(stdout, /^IDENTITY +ROLE +AT MOST +APPROVED BY +UID\ndefault\/tools\/releaser +owner +1 h +owner +/m)
    assert.match(stdout, /^IDENTITY +ROLE +GROUP +UID\nreleaser +viewer +tools +/m)
    // The binding made to end: its end shown beside it, 8 hours from now.
    const [, until] = /^IDENTITY +ROLE +GROUP +EXPIRES +UID\nreleaser +editor +tools +until (\S+) /m.exec(stdout) ?? []
    assert.approximately(Date.parse(until ?? "") - Date.now(), 8 * 3_600_000, 600_000)
    assert.include(stdout, "default\n├── platform\n│   ├── build\n│   └── deploy\n└── tools\n")
    // The audit trail, newest first: the binding the walkthrough made last, by the bootstrap admin.
    assert.match(stdout, /^TIME +EVENT +SUBJECT +ACTOR +GROUP +CHANGED\n\S+ +role binding created +/m)
  }), { timeout: 120_000 })
