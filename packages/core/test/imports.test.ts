/**
 * The modules of every package load one another without a cycle: a cycle makes a module's meaning depend on the
 * order the others load in, and ties concepts that a reader should find apart. Types may still refer to one another
 * (`import type`): a table's descriptor says how its writes are logged, and the logging reads the store.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const packages = join(import.meta.dirname, "../..")

/** The TypeScript sources below `dir`. */
const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [join(dir, entry.name)]
      : []
  )

/** The relative imports and re-exports of each source that load it (not `import type`), as the sources they name. */
const importGraph = (files: ReadonlyArray<string>) =>
  new Map(files.map((file) => {
    const text = readFileSync(file, "utf8")
    const named = [...text.matchAll(/^(?:import|export)\b(\s+type\b)?[^"]*?\bfrom\s+"(\.[^"]+)"/gm)]
      .filter((match) => match[1] === undefined)
      .map((match) => resolve(dirname(file), match[2]!.replace(/\.js$/, ".ts")))
    return [file, named] as const
  }))

/** The cycles of `graph`, each as the files along it. */
const cyclesOf = (graph: ReadonlyMap<string, ReadonlyArray<string>>) => {
  const cycles: Array<Array<string>> = []
  const state = new Map<string, "open" | "done">()
  const path: Array<string> = []
  const visit = (file: string) => {
    state.set(file, "open")
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (state.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    path.pop()
    state.set(file, "done")
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return cycles
}

describe("imports", () => {
  it("finds a cycle when there is one", () => {
    const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])
    assert.deepStrictEqual(cyclesOf(graph), [["a", "b", "c", "a"]])
  })

  it("no package's modules load one another in a cycle", () => {
    const found = readdirSync(packages).flatMap((name) => {
      const src = join(packages, name, "src")
      let files: Array<string>
      try {
        files = sources(src)
      } catch {
        return []
      }
      return cyclesOf(importGraph(files)).map((cycle) => cycle.map((file) => relative(packages, file)).join(" → "))
    })
    assert.deepStrictEqual(found, [])
  })
})
