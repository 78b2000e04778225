/**
 * The workspace's structure, read as the compiler reads it (issue 59): no package's sources import one another in a
 * cycle, `import type` and re-exports included, so each module can be read, tested and split from what it imports;
 * no hand-written file longer than a reader takes in (600 lines), but those still to split, each held to its size; and
 * every engine service the other packages call (`@arbor/core`'s `Effect.Service` classes, but internal ones) has its
 * interface written beside its Tag, which what builds it is held to, as Effect's own packages write theirs.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import ts from "typescript"
import { assert, describe, it } from "vitest"

const packages = join(import.meta.dirname, "..", "..")

/** Every TypeScript source below `dir`. */
const sourcesIn = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourcesIn(path) : /\.tsx?$/.test(name) ? [path] : []
  })

/** The longest a hand-written source or test may be. */
const maxLines = 600

/**
 * Files allowed to be longer for now, each held to its length when listed: each may shrink, none grow, until split
 * (and then leaves the list). None today.
 */
const stillToSplit: ReadonlyMap<string, number> = new Map()

/** Every hand-written TypeScript or JavaScript file of the packages: not installed, built or generated (`@generated`). */
const handWritten = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) {
      return ["node_modules", "dist", "build", "test-results"].includes(name) ? [] : handWritten(path)
    }
    return /\.(tsx?|mjs)$/.test(name) && !readFileSync(path, "utf8").includes("@generated") ? [path] : []
  })

/** The sources `file` imports from its own package (relative specifiers), as the compiler's pre-processor finds them. */
const importsOf = (file: string, known: ReadonlySet<string>): Array<string> =>
  ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles
    .map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith("."))
    .flatMap((specifier) => {
      const base = resolve(dirname(file), specifier).replace(/\.js$/, "")
      return [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].filter((candidate) => known.has(candidate))
    })

/** The groups of modules that import one another in a cycle (Tarjan's strongly connected components). */
const cycles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<Array<string>> => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const component: Array<string> = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component)
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

/**
 * What `source` lacks of the rule for services: for each `Effect.Service` class `X`, an exported `XService` (interface
 * or type) in the same file, and the value that builds it declared as one (`const service: XService = …`).
 */
const servicesWithoutInterface = (file: string, source: string): Array<string> => {
  const parsed = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true)
  const declared = new Set<string>()
  const annotated = new Set<string>()
  const services: Array<string> = []
  const visit = (node: ts.Node) => {
    if (ts.isClassDeclaration(node) && node.name !== undefined) {
      const base = node.heritageClauses?.[0]?.types[0]?.expression.getText(parsed) ?? ""
      if (base.startsWith("Effect.Service<")) services.push(node.name.text)
    }
    const exported = ts.canHaveModifiers(node) &&
      (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && exported) declared.add(node.name.text)
    if (ts.isVariableDeclaration(node) && node.type !== undefined) annotated.add(node.type.getText(parsed))
    ts.forEachChild(node, visit)
  }
  visit(parsed)
  return services.flatMap((name) => [
    ...(declared.has(`${name}Service`) ? [] : [`${file}: ${name} has no exported ${name}Service beside it`]),
    ...(annotated.has(`${name}Service`) ? [] : [`${file}: ${name} is not built as a ${name}Service`])
  ])
}

describe("structure", () => {
  const withSources = readdirSync(packages).filter((name) => {
    try {
      return statSync(join(packages, name, "src")).isDirectory()
    } catch {
      return false
    }
  })

  it.each(withSources)("%s: no import cycle among its sources, import type included", (name) => {
    const files = sourcesIn(join(packages, name, "src"))
    const known = new Set(files)
    const graph = new Map(files.map((file) => [file, importsOf(file, known)] as const))
    assert.deepStrictEqual(cycles(graph).map((component) => component.map((f) => relative(packages, f)).sort()), [])
  })

  it(`no hand-written file over ${maxLines} lines, but those still to split, none grown`, () => {
    const lengths = new Map(
      handWritten(packages).map((file) => [relative(packages, file), readFileSync(file, "utf8").split("\n").length - 1])
    )
    const tooLong = [...lengths].filter(([file, lines]) => lines > (stillToSplit.get(file) ?? maxLines))
      .map(([file, lines]) => `${file}: ${lines} lines (at most ${stillToSplit.get(file) ?? maxLines})`)
    assert.deepStrictEqual(tooLong, [])
    // A file split (or gone) leaves the list, so that the list names only what is still to do.
    const done = [...stillToSplit.keys()].filter((file) => (lengths.get(file) ?? 0) <= maxLines)
    assert.deepStrictEqual(done, [], "split: remove from stillToSplit")
  })

  it("every engine service has its interface beside its Tag, and is built as one", () => {
    const core = join(packages, "core", "src")
    const problems = sourcesIn(core)
      .filter((file) => !/[/\\](internal|testing)[/\\]/.test(relative(core, file)))
      .flatMap((file) => servicesWithoutInterface(relative(packages, file), readFileSync(file, "utf8")))
    assert.deepStrictEqual(problems, [])
  })

  it("finds a service without its interface, or not built as one (the check itself)", () => {
    const inferred = `export const make = Effect.succeed({ run: Effect.void })
export class Jobs extends Effect.Service<Jobs>()("Jobs", { effect: make }) {}`
    assert.deepStrictEqual(servicesWithoutInterface("jobs.ts", inferred), [
      "jobs.ts: Jobs has no exported JobsService beside it",
      "jobs.ts: Jobs is not built as a JobsService"
    ])
    const written = `export interface JobsService { readonly run: Effect.Effect<void> }
const service: JobsService = { run: Effect.void }
export class Jobs extends Effect.Service<Jobs>()("Jobs", { succeed: service }) {}`
    assert.deepStrictEqual(servicesWithoutInterface("jobs.ts", written), [])
  })

  it("finds a cycle where there is one (the check itself)", () => {
    const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])
    assert.deepStrictEqual(cycles(graph).map((component) => component.sort()), [["a", "b", "c"]])
  })
})
