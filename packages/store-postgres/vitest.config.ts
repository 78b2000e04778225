import { defineProject } from "vitest/config"
import { workspaceSources } from "../../vitest.aliases.ts"

export default defineProject({
  resolve: { alias: workspaceSources },
  test: {
    name: "store-postgres",
    // Three test files run at once on two cores, beside their servers: no test is held to a quiet machine's speed.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"]
  }
})
