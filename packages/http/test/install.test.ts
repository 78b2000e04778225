/**
 * A clean install prints nothing a newcomer has to wonder about: pnpm draws a warning box ("Ignored build scripts")
 * for every installed package with an install script that `pnpm-workspace.yaml` neither allows
 * (`onlyBuiltDependencies`) nor ignores (`ignoredBuiltDependencies`). Every such package is listed in one of them.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** The names listed under `key` in pnpm-workspace.yaml. */
const listed = (key: string): Array<string> => {
  const text = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8")
  const block = new RegExp(`^${key}:\\n((?:(?:  - .*|\\s*#.*)\\n)*)`, "m").exec(text)?.[1] ?? ""
  return [...block.matchAll(/^ {2}- "?([^"\n]+)"?$/gm)].map((m) => m[1]!)
}

/** The installed packages whose install pnpm would build: an install script, or a native addon to compile. */
const withBuilds = (): Set<string> => {
  const store = join(root, "node_modules", ".pnpm")
  const names = new Set<string>()
  for (const entry of readdirSync(store)) {
    const modules = join(store, entry, "node_modules")
    if (!existsSync(modules)) continue
    // The package itself is the one its folder is named after (`@scope+name@1.0.0`).
    const name = entry.replace(/@[^@]+$/, "").replace(/^(@[^+]+)\+/, "$1/").split("_")[0]!
    const manifest = join(modules, name, "package.json")
    if (!existsSync(manifest)) continue
    const scripts = (JSON.parse(readFileSync(manifest, "utf8")) as { scripts?: Record<string, string> }).scripts ?? {}
    if (["preinstall", "install", "postinstall"].some((script) => script in scripts)) names.add(name)
    else if (existsSync(join(modules, name, "binding.gyp"))) names.add(name)
  }
  return names
}

describe("install", () => {
  it("lists every package with an install script as built or ignored, so pnpm prints no warning box", () => {
    const decided = new Set([...listed("onlyBuiltDependencies"), ...listed("ignoredBuiltDependencies")])
    assert.includeMembers([...decided], ["better-sqlite3", "@bufbuild/buf", "protobufjs"])
    const undecided = [...withBuilds()].filter((name) => !decided.has(name))
    assert.deepStrictEqual(undecided, [], "packages pnpm would warn about")
  })
})
