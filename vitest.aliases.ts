import { sourceOf } from "./packages/launcher/sources.mjs"

/**
 * The workspace's packages resolved to their sources as their `package.json` exports say (`@arbor/core` →
 * `packages/core/src/index.ts`, `@arbor/core/Groups` → `packages/core/src/iam/Groups.ts`), so tests run without a
 * build; the launcher and the console's build resolve them through the same function.
 */
export const workspaceSources = [{
  find: /^@arbor\/[a-z-]+(?:\/.+)?$/,
  replacement: "$&",
  customResolver: (source: string) => sourceOf(source)
}]
