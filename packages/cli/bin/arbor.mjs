#!/usr/bin/env node
/* global process, URL */
/**
 * `arbor`. In a clone of the repository it runs through the workspace's launcher (a bundle of the sources, made again
 * when they change); in the packed package, the bundle `prepack` made (`dist/arbor.cjs`), its compiled code cached
 * under `$XDG_CACHE_HOME/arbor/code-cache/` (`compiled.mjs`). A file that exists from the install on, so that pnpm
 * links the command without a warning.
 */
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { runBundle } from "./compiled.mjs"

const launcher = new URL("../../launcher/launch.mjs", import.meta.url)
if (existsSync(launcher)) {
  const { launch } = await import(launcher.href)
  await launch("arbor", process.argv.slice(2))
} else {
  const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), ".cache")
  runBundle(fileURLToPath(new URL("../dist/arbor.cjs", import.meta.url)), join(cacheHome, "arbor", "code-cache"))
}
