/* global process, URL */
/**
 * Bundles the `arbor` executable into one file: the launcher's bundle of `src/main.ts` (the workspace's packages
 * from their sources, Effect and the rest inside), so that the packed package has no dependencies and
 * `npm install -g` of it alone works. `node bundle.mjs [outfile]` (default `build/arbor.cjs`).
 */
import { fileURLToPath } from "node:url"
import { bundle as bundleProgram } from "../launcher/launch.mjs"

/** Writes the executable to `outfile`. */
export const bundle = (outfile) => bundleProgram("arbor", outfile)

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundle(process.argv[2] ?? fileURLToPath(new URL("build/arbor.cjs", import.meta.url)))
}
