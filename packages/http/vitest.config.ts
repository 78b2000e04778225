import { defineProject } from "vitest/config"
import { workspaceSources } from "../../vitest.aliases.ts"

export default defineProject({
  resolve: { alias: workspaceSources },
  test: {
    name: "http",
    // Three test files run at once on two cores, beside their servers: no test is held to a quiet machine's speed.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    // A PostgreSQL server for the tests of several servers on one database; the console their servers serve.
    globalSetup: ["../store-postgres/test/globalSetup.ts", "../console/test/globalSetup.mjs"]
  }
})
