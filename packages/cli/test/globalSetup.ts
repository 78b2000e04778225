/** Builds the `arbor` executable the tests run as a child process (`bundle.mjs`, about a second). */
import { fileURLToPath } from "node:url"
// @ts-expect-error: a plain ES module, without declarations
import { bundle } from "../bundle.mjs"

/** The path of the built executable. */
export const executable = fileURLToPath(new URL("../build/arbor.cjs", import.meta.url))

export default async () => {
  await bundle(executable)
}
