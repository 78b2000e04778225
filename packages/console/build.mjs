#!/usr/bin/env node
/* global process, console */
/**
 * Bundles the console for the browser: `src/main.tsx` with what it imports (Preact, the typed client of
 * `@arbor/api` from the workspace's sources, Effect) into `dist/console.js`, beside `dist/console.css` and
 * `dist/index.html`. The server serves `dist/` at `/console` (`@arbor/http`'s `Console`). `ensureBuilt` builds only
 * when a source changed since the last build: the launcher and the tests call it. `node build.mjs` builds and
 * prints the sizes.
 */
import * as esbuild from "esbuild"
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { sourceOf } from "../launcher/sources.mjs"

const root = dirname(fileURLToPath(import.meta.url))

/** Where the built console lives. */
export const dist = join(root, "dist")
const inputsFile = join(dist, "inputs.json")

/** The workspace's packages (`@arbor/api`, `@arbor/core` and what they import) from their sources, as the tests and the launcher resolve them. */
const workspaceSources = {
  name: "workspace-sources",
  setup(build) {
    build.onResolve({ filter: /^@arbor\/[a-z-]+(\/.*)?$/ }, ({ path }) => {
      return { path: sourceOf(path) }
    })
    // The server checks claim patterns; the console's client need not carry RE2 (src/internal/re2.ts).
    build.onResolve({ filter: /^re2js$/ }, () => ({ path: join(root, "src", "internal", "re2.ts") }))
  }
}

/** True when the built console exists and none of the files it was made from changed after it. */
export const isFresh = () => {
  if (!existsSync(inputsFile)) return false
  const made = statSync(inputsFile).mtimeMs
  const files = [...JSON.parse(readFileSync(inputsFile, "utf8")), fileURLToPath(import.meta.url)]
  return files.every((file) => existsSync(file) && statSync(file).mtimeMs <= made)
}

/**
 * Builds the console into `dist/` (written beside it first, then swapped in, so a server reading `dist/` never sees
 * half a build). Answers the sizes of the script and the style, raw and gzipped.
 */
export const build = async () => {
  const staging = `${dist}.${process.pid}.tmp`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  const result = await esbuild.build({
    entryPoints: { console: join(root, "src", "main.tsx") },
    absWorkingDir: root,
    outdir: staging,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    metafile: true,
    logLevel: "silent",
    plugins: [workspaceSources]
  })
  copyFileSync(join(root, "src", "index.html"), join(staging, "index.html"))
  copyFileSync(join(root, "src", "console.css"), join(staging, "console.css"))
  const inputs = [
    ...Object.keys(result.metafile.inputs).map((input) => join(root, input)),
    join(root, "src", "index.html"),
    join(root, "src", "console.css")
  ]
  writeFileSync(join(staging, "inputs.json"), JSON.stringify(inputs))
  rmSync(dist, { recursive: true, force: true })
  try {
    renameSync(staging, dist)
  } catch (error) {
    // Another build (a server launched at the same time) put its own in place first: keep that one.
    rmSync(staging, { recursive: true, force: true })
    if (!existsSync(inputsFile)) throw error
  }
  const size = (name) => {
    const bytes = readFileSync(join(dist, name))
    return { bytes: bytes.length, gzipped: gzipSync(bytes).length }
  }
  return { script: size("console.js"), style: size("console.css") }
}

/** Builds the console unless it is fresh. */
export const ensureBuilt = async () => {
  if (!isFresh()) await build()
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { script, style } = await build()
  const kb = (n) => `${(n / 1024).toFixed(1)} KiB`
  console.log(`dist/console.js ${kb(script.bytes)} (${kb(script.gzipped)} gzipped)`)
  console.log(`dist/console.css ${kb(style.bytes)} (${kb(style.gzipped)} gzipped)`)
}
