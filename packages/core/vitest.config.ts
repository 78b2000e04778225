import { fileURLToPath } from "node:url"
import { defineProject } from "vitest/config"

export default defineProject({
  resolve: {
    alias: {
      "@arbor/core/testing": fileURLToPath(new URL("src/testing/index.ts", import.meta.url)),
      "@arbor/core": fileURLToPath(new URL("src/index.ts", import.meta.url))
    }
  },
  test: {
    name: "core",
    include: ["test/**/*.test.ts"]
  }
})
