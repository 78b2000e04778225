#!/usr/bin/env node
/* global process, console, performance, URL */
/**
 * How long the loop takes on this machine (issue 59): `pnpm loop [--ci]`. In a fresh clone of the committed head, the
 * install, then the type check cold (`tsgo -b`, what `pnpm lint` runs, and `tsc -b` beside it) and again with
 * nothing changed; with `--ci`, `.ci/run` in another fresh clone, as CI runs it (the data and protos from
 * `ARBOR_TEST_DATA` and `ARBOR_TEST_PROTOS` when set). Prints each wall time; run it on a quiet machine.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** Runs `command` in `cwd`, its output shown only when it fails; its wall time in seconds. */
const timed = (cwd, command, args, env = {}) => {
  const started = performance.now()
  const result = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8" })
  const seconds = (performance.now() - started) / 1000
  return { seconds, ok: result.status === 0, output: `${result.stdout}${result.stderr}` }
}

/** A fresh clone of the committed head, installed. */
const freshClone = () => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-loop-"))
  execFileSync("git", ["clone", "-q", root, dir])
  const install = timed(dir, "npx", ["-y", "pnpm@10", "install", "--frozen-lockfile"])
  if (!install.ok) throw new Error(`the install failed:\n${install.output}`)
  return { dir, install: install.seconds }
}

/** Removes what a type check built, so that the next one is cold. */
const cold = (dir) =>
  execFileSync("sh", [
    "-c",
    "find packages -name '*.tsbuildinfo' -not -path '*/node_modules/*' -delete; rm -rf packages/*/dist"
  ], { cwd: dir })

const rows = []
const clone = freshClone()
try {
  rows.push(["install (pnpm, frozen lockfile)", clone.install])
  for (const [name, command] of [["tsgo -b (pnpm lint's)", "tsgo"], ["tsc -b", "tsc"]]) {
    cold(clone.dir)
    const first = timed(clone.dir, "npx", [command, "-b", "tsconfig.json"])
    if (!first.ok) throw new Error(`${name} failed:\n${first.output}`)
    rows.push([`type check, cold: ${name}`, first.seconds])
    rows.push([
      `type check, nothing changed: ${name}`,
      timed(clone.dir, "npx", [command, "-b", "tsconfig.json"]).seconds
    ])
  }
} finally {
  rmSync(clone.dir, { recursive: true, force: true })
}
if (process.argv.includes("--ci")) {
  const dir = mkdtempSync(join(tmpdir(), "arbor-loop-ci-"))
  try {
    execFileSync("git", ["clone", "-q", root, dir])
    const ci = timed(dir, "bash", [".ci/run"], { CI: "true" })
    if (!ci.ok) throw new Error(`.ci/run failed:\n${ci.output.slice(-5000)}`)
    rows.push([".ci/run on a fresh clone (install, lint, every test)", ci.seconds])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
for (const [what, seconds] of rows) console.log(`${seconds.toFixed(1).padStart(8)} s  ${what}`)
