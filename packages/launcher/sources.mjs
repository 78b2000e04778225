/* global URL */
/**
 * Where a workspace package's module lives in its sources, as its `package.json` exports say: `@arbor/core` →
 * `packages/core/src/index.ts`, `@arbor/core/Groups` → `packages/core/src/iam/Groups.ts` (the export names
 * `./dist/iam/Groups.js`). The tests (vitest.aliases.ts), the launcher and the console's build all resolve through
 * it, so a clone runs without a build and a module a package does not export resolves nowhere.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const packages = fileURLToPath(new URL("..", import.meta.url))

/** The source of `@arbor/<name>[/<subpath>]`; throws when the package does not export it. */
export const sourceOf = (specifier) => {
  const [, name, subpath] = /^@arbor\/([a-z-]+)(?:\/(.+))?$/.exec(specifier) ?? []
  if (name === undefined) throw new Error(`${specifier} is not a workspace package`)
  const { exports } = JSON.parse(readFileSync(join(packages, name, "package.json"), "utf8"))
  const wanted = subpath === undefined ? "." : `./${subpath}`
  // Node's order: the subpath itself, then the pattern with the longest prefix.
  const patterns = Object.keys(exports).filter((key) => key.includes("*"))
    .sort((a, b) => b.indexOf("*") - a.indexOf("*"))
  for (const key of [wanted, ...patterns]) {
    if (!(key in exports)) continue
    const [before, after = ""] = key.split("*")
    const star = key === wanted ?
      "" :
      wanted.startsWith(before) && wanted.endsWith(after) && wanted.length >= key.length
      ? wanted.slice(before.length, wanted.length - after.length)
      : undefined
    if (star === undefined) continue
    const target = exports[key]
    const built = typeof target === "string" ? target : target?.default
    if (built === undefined || !built.startsWith("./dist/")) break
    return join(packages, name, "src", built.slice("./dist/".length).replace("*", star).replace(/\.js$/, ".ts"))
  }
  throw new Error(`${name} does not export ${wanted}`)
}
