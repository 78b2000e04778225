/**
 * The README's walkthrough, run as it is written (bash, curl, node) against a real server started on SQLite in a
 * fresh directory, as `pnpm start` would start it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { promisify } from "node:util"
import { startedLikePnpmStart } from "./support.js"

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")

/** The first ```sh block after a heading. */
const block = (heading: string) => {
  const section = readme.slice(readme.indexOf(`## ${heading}`))
  return /```sh\n([\s\S]*?)```/.exec(section)![1]!
}

describe("README", () => {
  it("starts and tests with the commands a newcomer is given", () => {
    assert.strictEqual(block("Start the server").trim(), "npx -y pnpm@10 install && npx -y pnpm@10 start")
    assert.strictEqual(block("Run the tests").trim(), "npx -y pnpm@10 install && npx -y pnpm@10 test")
    const ci = readFileSync(new URL("../../../.ci/run", import.meta.url), "utf8")
    assert.include(ci, block("Run the tests").trim(), "CI runs the README's test command")
  })

  it.scopedLive("the walkthrough runs as written", () =>
    Effect.gen(function*() {
      const { cwd, url } = yield* startedLikePnpmStart
      const { stdout: output } = yield* Effect.promise(() =>
        promisify(execFile)("bash", ["-euo", "pipefail", "-c", block("Walkthrough")], {
          cwd,
          env: { ...process.env, ARBOR: url },
          encoding: "utf8",
          timeout: 60_000
        })
      )
      const pages = output.trim().split("\n").slice(-2).map((line) =>
        JSON.parse(line.replace(/^.*?(\{"groups")/, "$1"))
      )
      assert.deepStrictEqual(pages.map((p) => p.groups.map((g: { name: string }) => g.name)), [["build"], ["deploy"]])
      assert.deepStrictEqual(pages.map((p) => p.totalCount), ["3", "3"])
      assert.include(output, "\"role\":{\"uid\":\"cbface5d58f52d0ef8b668e8a94f5da62ed3a21b\",\"name\":\"viewer\"")
    }), { timeout: 120_000 })
})
