#!/usr/bin/env node
/* global process, URL */
/**
 * `arbor`. In a clone of the repository it runs through the workspace's launcher (a bundle of the sources, made again
 * when they change); in the packed package, the bundle `prepack` made (`dist/arbor.mjs`). A file that exists from the
 * install on, so that pnpm links the command without a warning.
 */
import { existsSync } from "node:fs"

const launcher = new URL("../../launcher/launch.mjs", import.meta.url)
if (existsSync(launcher)) {
  const { launch } = await import(launcher.href)
  await launch("arbor", process.argv.slice(2))
} else {
  await import(new URL("../dist/arbor.mjs", import.meta.url).href)
}
