import { defineProject } from "vitest/config"
import { workspaceSources } from "../../vitest.aliases.ts"

export default defineProject({
  resolve: { alias: workspaceSources },
  test: {
    name: "schema-compiler",
    include: ["test/**/*.test.ts"]
  }
})
