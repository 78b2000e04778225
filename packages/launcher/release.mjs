#!/usr/bin/env node
/* global process, console, URL */
/**
 * Releases the workspace's public packages: `pnpm release --dry-run [--out <dir>]` packs each (as `pnpm pack`
 * does, `workspace:` ranges made versions), checks every tarball as a registry would serve it, and installs each
 * alone into an empty project (with only the tarballs of the Arbor packages it names), importing every entry it
 * exports and running its commands. Without `--dry-run` it then publishes them, dependencies first, with npm's
 * provenance (from a CI job that may sign it: `npm publish --provenance`).
 *
 * A tarball passes when its package.json names no `workspace:` range and has the metadata a registry shows and
 * provenance needs (description, license, repository with its directory, engines, `publishConfig`), it holds its
 * README, LICENSE and CHANGELOG, and every file its `exports` and `bin` name.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const packages = fileURLToPath(new URL("..", import.meta.url))
const root = join(packages, "..")

/** The environment of the commands: pnpm's and the test runner's own variables left out, as a user's shell has it. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(VITEST|VITE_|NODE_OPTIONS|TEST$|NODE_ENV$|npm_|PNPM_)/.test(k))
)

const run = (command, args, cwd) => {
  try {
    return execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  } catch (e) {
    throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`)
  }
}

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"))

/** The public packages of the workspace: their folder and package.json. */
const publicPackages = () =>
  readdirSync(packages, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(packages, d.name, "package.json")))
    .map((d) => ({ folder: d.name, manifest: readJson(join(packages, d.name, "package.json")) }))
    .filter((p) => p.manifest.private !== true)

/** The Arbor packages `manifest` needs installed beside it: its dependencies and required peers of ours. */
const arborNeeds = (manifest) =>
  [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}).filter((name) =>
      manifest.peerDependenciesMeta?.[name]?.optional !== true
    )
  ].filter((name) => name.startsWith("@arbor/"))

/** What is wrong with an unpacked tarball at `dir` (its package.json `manifest`, made from `folder`). */
export const problemsOf = (dir, manifest, folder, rootManifest) => {
  const problems = []
  for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (String(range).startsWith("workspace:")) problems.push(`${field}.${name} is still ${range}`)
    }
  }
  for (const field of ["description", "license", "engines", "files"]) {
    if (manifest[field] === undefined) problems.push(`has no ${field}`)
  }
  if (manifest.repository?.url !== rootManifest.repository?.url) {
    problems.push(`repository.url is not the workspace's (${rootManifest.repository?.url})`)
  }
  if (manifest.repository?.directory !== `packages/${folder}`) {
    problems.push(`repository.directory is not packages/${folder}`)
  }
  if (manifest.publishConfig?.access !== "public" || manifest.publishConfig?.provenance !== true) {
    problems.push("publishConfig is not { access: public, provenance: true }")
  }
  for (const file of ["README.md", "LICENSE", "CHANGELOG.md"]) {
    if (!existsSync(join(dir, file))) problems.push(`holds no ${file}`)
  }
  const targets = []
  const collect = (target) => {
    if (typeof target === "string") targets.push(target)
    else if (target !== null && typeof target === "object") Object.values(target).forEach(collect)
  }
  collect(manifest.exports)
  collect(manifest.bin)
  for (const target of targets) {
    if (target.includes("*")) {
      const [before, after] = target.split("*")
      const folderOf = join(dir, before.slice(0, before.lastIndexOf("/") + 1))
      const prefix = before.slice(before.lastIndexOf("/") + 1)
      const found = existsSync(folderOf) &&
        readdirSync(folderOf).some((f) => f.startsWith(prefix) && f.endsWith(after))
      if (!found) problems.push(`exports ${target}, which matches no file`)
    } else if (!existsSync(join(dir, target))) {
      problems.push(`exports or runs ${target}, which it does not hold`)
    }
  }
  return problems
}

/** The entries `manifest` exports that a program imports (JavaScript, no pattern). */
const entriesOf = (manifest) => {
  if (manifest.exports === undefined) return []
  return Object.entries(manifest.exports)
    .filter(([key, target]) =>
      !key.includes("*") && target !== null &&
      (typeof target === "string" ? target.endsWith(".js") || target.endsWith(".mjs") : true)
    )
    .map(([key]) => (key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`))
}

/** Installs the tarball of `name` alone (with the tarballs of the Arbor packages it needs) and uses it. */
const installAlone = (name, tarballs, manifests, scratch) => {
  const needed = new Set()
  const add = (n) => {
    if (needed.has(n)) return
    needed.add(n)
    for (const dep of arborNeeds(manifests.get(n))) add(dep)
  }
  add(name)
  const project = mkdtempSync(join(scratch, "alone-"))
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "alone", private: true, type: "module" }))
  run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--loglevel=error", ...[...needed].map((n) => tarballs.get(n))],
    project
  )
  const manifest = manifests.get(name)
  const optional = Object.keys(manifest.peerDependenciesMeta ?? {})
    .filter((peer) => manifest.peerDependenciesMeta[peer]?.optional === true)
  let needsOptional = 0
  for (const entry of entriesOf(manifest)) {
    try {
      run("node", ["--input-type=module", "-e", `await import(${JSON.stringify(entry)})`], project)
    } catch (e) {
      // An entry for those who install an optional peer (`@arbor/cli/Help` with `@effect/cli`) needs it, and only it.
      const missing = /Cannot find package '([^']+)'/.exec(String(e))?.[1]
      if (missing === undefined || !optional.includes(missing)) throw e
      needsOptional++
    }
  }
  for (const command of Object.keys(typeof manifest.bin === "object" ? manifest.bin : {})) {
    run(join(project, "node_modules", ".bin", command), ["--version"], project)
  }
  rmSync(project, { recursive: true, force: true })
  return {
    entries: entriesOf(manifest).length - needsOptional,
    needsOptional,
    commands: Object.keys(manifest.bin ?? {}).length
  }
}

/** The names in the order to publish them: each after the Arbor packages it needs. */
const inOrder = (manifests) => {
  const order = []
  const visit = (name) => {
    if (order.includes(name)) return
    for (const dep of arborNeeds(manifests.get(name))) visit(dep)
    order.push(name)
  }
  for (const name of [...manifests.keys()].sort()) visit(name)
  return order
}

export const release = ({ dryRun, out }) => {
  const rootManifest = readJson(join(root, "package.json"))
  const destination = out === undefined ? mkdtempSync(join(tmpdir(), "arbor-release-")) : resolve(out)
  mkdirSync(destination, { recursive: true })
  const scratch = mkdtempSync(join(tmpdir(), "arbor-release-check-"))
  try {
    const found = publicPackages()
    const manifests = new Map(found.map((p) => [p.manifest.name, p.manifest]))
    const tarballs = new Map()
    const failures = []
    for (const { folder, manifest } of found) {
      const printed = run("npx", ["-y", "pnpm@10", "pack", "--pack-destination", destination], join(packages, folder))
      const tarball = printed.trim().split("\n").filter((line) => line.endsWith(".tgz")).at(-1)
      tarballs.set(manifest.name, resolve(destination, tarball))
      const unpacked = mkdtempSync(join(scratch, "unpacked-"))
      run("tar", ["-xzf", tarballs.get(manifest.name), "-C", unpacked], root)
      const packed = readJson(join(unpacked, "package", "package.json"))
      manifests.set(manifest.name, packed)
      for (const problem of problemsOf(join(unpacked, "package"), packed, folder, rootManifest)) {
        failures.push(`${manifest.name}: ${problem}`)
      }
    }
    if (failures.length > 0) throw new Error(`the packages are not ready:\n  ${failures.join("\n  ")}`)
    const order = inOrder(manifests)
    for (const name of order) {
      const { commands, entries, needsOptional } = installAlone(name, tarballs, manifests, scratch)
      const optional = needsOptional === 0 ? "" : ` (${needsOptional} more with an optional peer)`
      console.log(
        `${name}@${
          manifests.get(name).version
        }: installs alone; ${entries} entries import${optional}, ${commands} commands run`
      )
    }
    if (dryRun) {
      console.log(
        `Dry run: ${order.length} packages ready (${
          out === undefined ? "tarballs removed" : `tarballs in ${destination}`
        }); nothing published.`
      )
      return order
    }
    for (const name of order) {
      run("npm", ["publish", tarballs.get(name), "--access", "public", "--provenance"], root)
      console.log(`published ${name}@${manifests.get(name).version}`)
    }
    return order
  } finally {
    rmSync(scratch, { recursive: true, force: true })
    if (out === undefined) rmSync(destination, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const unknown = args.filter((a, i) => !["--dry-run", "--out"].includes(a) && args[i - 1] !== "--out")
  if (unknown.length > 0) {
    console.error(`Unknown argument ${unknown[0]}. Usage: pnpm release [--dry-run] [--out <dir>]`)
    process.exit(1)
  }
  const at = args.indexOf("--out")
  try {
    release({ dryRun: args.includes("--dry-run"), out: at < 0 ? undefined : args[at + 1] })
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e))
    process.exit(1)
  }
}
