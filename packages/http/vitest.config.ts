import { defineProject } from "vitest/config"
import { workspaceSources } from "../../vitest.aliases.ts"

export default defineProject({
  resolve: { alias: workspaceSources },
  test: {
    name: "http",
    include: ["test/**/*.test.ts"],
    // A PostgreSQL server for the tests of several servers on one database; the console their servers serve.
    globalSetup: ["../store-postgres/test/globalSetup.ts", "../console/test/globalSetup.mjs"]
  }
})
