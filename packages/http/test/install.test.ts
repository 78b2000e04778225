/**
 * A clean install prints nothing a newcomer has to wonder about: pnpm draws a warning box for every dependency whose
 * build script it skipped without being told to (`pnpm-workspace.yaml`'s `onlyBuiltDependencies` and
 * `ignoredBuiltDependencies`), and records them in the install's state, read here.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"

describe("install", () => {
  it("skips no build script it was not told about, so it prints no 'Ignored build scripts' warning", () => {
    const state = JSON.parse(readFileSync(new URL("../../../node_modules/.modules.yaml", import.meta.url), "utf8"))
    assert.deepStrictEqual(state.ignoredBuilds, [])
    assert.deepStrictEqual(state.pendingBuilds, [])
  })
})
