import { fileURLToPath } from "node:url"
import { defineProject } from "vitest/config"

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineProject({
  resolve: {
    alias: [
      { find: /^@arbor\/core$/, replacement: source("../core/src/index.ts") },
      { find: /^@arbor\/core\/testing$/, replacement: source("../core/src/testing/index.ts") },
      { find: /^@arbor\/core\/(.+)$/, replacement: source("../core/src/$1.ts") },
      { find: /^@arbor\/api$/, replacement: source("../api/src/index.ts") },
      { find: /^@arbor\/store-sqlite$/, replacement: source("../store-sqlite/src/index.ts") }
    ]
  },
  test: {
    name: "http",
    include: ["test/**/*.test.ts"]
  }
})
