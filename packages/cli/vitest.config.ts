import { defineProject } from "vitest/config"
import { workspaceSources } from "../../vitest.aliases.ts"

export default defineProject({
  resolve: { alias: workspaceSources },
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    // Each test runs the executable several times as a child process (0.4 s or more each on a busy 2-core machine).
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
