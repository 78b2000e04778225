/**
 * The package's layout (docs/architecture.md): a folder per domain, each public module directly in it and exported
 * under its own name (`@arbor/core/Groups`), its helpers in the folder's `internal/`, which nothing exports.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const src = join(root, "src")
const domains = ["engine", "iam", "tokens", "provisioning", "events", "registry"]

const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  readonly exports: Record<string, { readonly types: string; readonly default: string } | null>
}

/** The public modules, as `<domain>/<Name>`. */
const publicModules = domains.flatMap((domain) =>
  readdirSync(join(src, domain)).filter((file) => file.endsWith(".ts")).map((file) => `${domain}/${file.slice(0, -3)}`)
)

describe("layout", () => {
  it("the source holds the domain folders, the test kit and the index only", () => {
    assert.deepStrictEqual(readdirSync(src).sort(), [...domains, "index.ts", "testing"].sort())
  })

  it("every public module is exported under its own name, its types beside it, and nothing else is", () => {
    const exported = Object.entries(manifest.exports).filter(([subpath]) =>
      subpath !== "." && !subpath.startsWith("./testing")
    )
    assert.deepStrictEqual(
      exported.map(([subpath, target]) => [subpath, target?.default, target?.types]).sort(),
      publicModules.map((module) => [
        `./${module.split("/")[1]}`,
        `./dist/${module}.js`,
        `./dist/${module}.d.ts`
      ]).sort()
    )
  })

  it("no two public modules share a name", () => {
    const names = publicModules.map((module) => module.split("/")[1])
    assert.deepStrictEqual(names.filter((name, i) => names.indexOf(name) !== i), [])
  })

  it("the index re-exports every public module, by its name", () => {
    const index = readFileSync(join(src, "index.ts"), "utf8")
    const reexported = [...index.matchAll(/^export \* as (\w+) from "\.\/(\w+\/\w+)\.js"$/gm)]
    assert.deepStrictEqual(
      reexported.map((match) => `${match[1]} ${match[2]}`).sort(),
      publicModules.map((module) => `${module.split("/")[1]} ${module}`).sort()
    )
  })

  it("every export names a source that exists", () => {
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (target === null || target.default.includes("*")) continue
      assert.isTrue(existsSync(join(src, target.default.replace("./dist/", "").replace(/\.js$/, ".ts"))), subpath)
    }
  })
})
