import { defineProject } from "vitest/config"
import { workspaceSources } from "../../vitest.aliases.ts"

export default defineProject({
  resolve: { alias: workspaceSources },
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    // Each test runs the executable several times as a child process (0.4 s or more each, several seconds on a busy
    // 2-core machine: one test of 13 runs took over 30 s in a full run). A guard against a hang, not a measure.
    testTimeout: 120_000,
    hookTimeout: 60_000
  }
})
