#!/usr/bin/env node
/* global process, console, URL */
/**
 * Runs a program of the workspace from a clone, without a TypeScript build (type checking is `pnpm lint`'s):
 * `node packages/launcher/launch.mjs <server|admin|arbor> [arguments]`.
 *
 * The program's entry, the workspace packages it imports (from their sources) and its other dependencies are bundled
 * by esbuild into one file in `build/launch/` of the program's package (about 2.5 s for the server); the bundle is
 * used again as long as none of its sources, the install and this launcher changed since. Packages with native code
 * stay outside, imported from where pnpm installed them. The packed `arbor` is the same bundle (`cli/bundle.mjs`). The
 * server's launch also builds the console it serves when a source of it changed (`console/build.mjs`).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const packages = fileURLToPath(new URL("..", import.meta.url))

/**
 * The programs, by name: their entry, the package they belong to, and their bundle's format. `arbor`'s is CommonJS,
 * run with V8's cache of its compiled code (`cli/bin/compiled.mjs`): a person pays its start at every call.
 */
export const programs = {
  server: { package: "http", entry: "src/main.ts", format: "esm" },
  admin: { package: "http", entry: "src/admin.ts", format: "esm" },
  arbor: { package: "cli", entry: "src/main.ts", format: "cjs" }
}

/** Where the bundle of `name` is written, the list of what it was made from, and the cache of its compiled code. */
export const output = (name) => {
  const program = programs[name]
  const dir = join(packages, program.package, "build", "launch")
  return {
    bundle: join(dir, `${name}.${program.format === "cjs" ? "cjs" : "mjs"}`),
    inputs: join(dir, `${name}.inputs.json`),
    codeCache: join(dir, `${name}.code-cache`)
  }
}

/** The install's state, which every install rewrites: a bundle made before it may name files that moved. */
const installState = join(packages, "..", "node_modules", ".modules.yaml")

/** True when the bundle of `name` exists and nothing it was made from changed after it. */
export const isFresh = (name) => {
  const { bundle, inputs } = output(name)
  const made = statSync(bundle, { throwIfNoEntry: false })?.mtimeMs
  if (made === undefined || !existsSync(inputs)) return false
  // The launcher itself too: a bundle made under other settings is stale.
  const files = [...JSON.parse(readFileSync(inputs, "utf8")), installState, fileURLToPath(import.meta.url)]
  return files.every((file) => (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) <= made)
}

/** Packages with native code, which stay outside the bundle. */
const native = new Set(["better-sqlite3"])

/** Bundles `name` into `outfile` (by default its launch bundle, whose sources are then recorded beside it). */
export const bundle = async (name, outfile = output(name).bundle) => {
  // esbuild and the sources' map are loaded only to bundle: a call whose bundle is fresh would pay for them.
  const esbuild = await import("esbuild")
  const { sourceOf } = await import("./sources.mjs")
  const program = programs[name]
  const { bundle: launched, inputs } = output(name)
  const result = await esbuild.build({
    entryPoints: [join(packages, program.package, program.entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: program.format,
    target: "node20",
    // Node's own resolution conditions, without esbuild's extra "module".
    conditions: [],
    logLevel: "warning",
    metafile: true,
    write: false,
    absWorkingDir: packages,
    // Some bundled CommonJS modules call `require`; an ES module has none of its own.
    ...(program.format === "esm"
      ? {
        banner: {
          js:
            "import { createRequire as __arborCreateRequire } from 'node:module'; const require = __arborCreateRequire(import.meta.url);"
        }
      }
      : {}),
    plugins: [{
      name: "workspace-sources-and-installed-packages",
      setup(build) {
        build.onResolve({ filter: /^@arbor\// }, ({ path }) => ({ path: sourceOf(path) }))
        build.onResolve({ filter: /^[^./]/ }, async ({ path, kind, resolveDir, pluginData }) => {
          if (pluginData === "installed" || !native.has(path.split("/")[0])) return undefined
          const installed = await build.resolve(path, { kind, resolveDir, pluginData: "installed" })
          if (installed.errors.length > 0) return { errors: installed.errors }
          return { path: pathToFileURL(installed.path).href, external: true }
        })
      }
    }]
  })
  // The workspace's files; what is installed changes only with an install, which rewrites `installState`.
  const sources = Object.keys(result.metafile.inputs).filter((input) => !input.includes("node_modules/"))
    .map((input) => join(packages, input))
  // Each file is written whole and renamed into place, so that programs launched at the same time never read half a
  // bundle; the list of sources goes first, so that a bundle is never newer than a list it was not made from.
  mkdirSync(dirname(outfile), { recursive: true })
  if (outfile === launched) writeWhole(inputs, JSON.stringify(sources))
  writeWhole(outfile, result.outputFiles[0].contents)
}

/** Writes `path` whole (executable: a bundle may be a program's bin) by renaming a temporary file into place. */
const writeWhole = (path, contents) => {
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, contents, { mode: 0o755 })
  renameSync(temporary, path)
}

/** Bundles `name` when its bundle is missing or stale, then runs it with `args` as its arguments. */
export const launch = async (name, args) => {
  if (!isFresh(name)) await bundle(name)
  // The server serves the console's built assets.
  if (name === "server") await (await import("../console/build.mjs")).ensureBuilt()
  const { bundle: file, codeCache } = output(name)
  process.argv = [process.argv[0], file, ...args]
  if (programs[name].format === "cjs") (await import("../cli/bin/compiled.mjs")).runBundle(file, codeCache)
  else await import(pathToFileURL(file).href)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name, ...args] = process.argv.slice(2)
  if (!(name in programs)) {
    console.error(
      `usage: node ${join("packages", "launcher", "launch.mjs")} <${Object.keys(programs).join("|")}> [arguments]`
    )
    process.exit(2)
  }
  await launch(name, args)
}
