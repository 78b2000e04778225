import { fileURLToPath } from "node:url"
import { defineProject } from "vitest/config"

export default defineProject({
  resolve: {
    alias: {
      "@arbor/core/testing": fileURLToPath(new URL("../core/src/testing/index.ts", import.meta.url)),
      "@arbor/core": fileURLToPath(new URL("../core/src/index.ts", import.meta.url)),
      "@arbor/store-sqlite": fileURLToPath(new URL("src/index.ts", import.meta.url))
    }
  },
  test: {
    name: "store-sqlite",
    include: ["test/**/*.test.ts"]
  }
})
