import { defineProject } from "vitest/config"
import { workspaceSources } from "../../vitest.aliases.ts"

export default defineProject({
  resolve: { alias: workspaceSources },
  test: {
    name: "console",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.mjs"]
  }
})
