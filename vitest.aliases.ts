import { fileURLToPath } from "node:url"

const packages = fileURLToPath(new URL("packages", import.meta.url))

/**
 * The workspace's packages resolved to their sources (`@arbor/core` → `packages/core/src/index.ts`,
 * `@arbor/core/Errors` → `packages/core/src/Errors.ts`), so tests run without a build.
 */
export const workspaceSources = [
  { find: /^@arbor\/([a-z-]+)$/, replacement: `${packages}/$1/src/index.ts` },
  { find: /^@arbor\/([a-z-]+)\/testing$/, replacement: `${packages}/$1/src/testing/index.ts` },
  { find: /^@arbor\/([a-z-]+)\/(.+)$/, replacement: `${packages}/$1/src/$2.ts` }
]
