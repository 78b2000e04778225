import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"
import projects from "./vitest.workspace.ts"

// Every temporary directory of a run (the tests', and their child processes') lands in one folder, removed when the
// run ends.
const scratch = mkdtempSync(join(tmpdir(), "arbor-tests-"))
process.env.TMPDIR = scratch
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }))

export default defineConfig({
  test: {
    projects,
    // Test files run three at a time whatever the machine: Vitest's default on two cores is one, and most of a file's
    // time is spent waiting on the servers, databases, browsers and executables it starts, not computing.
    maxWorkers: 3,
    minWorkers: 1
  }
})
