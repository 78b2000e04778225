/**
 * Builds the `arbor` executable the tests run as a child process: `src/main.ts` and everything it imports, the
 * workspace's packages from their sources, bundled by esbuild into `build/arbor.mjs` (about a second, where `tsc`
 * would build every package first).
 */
import * as esbuild from "esbuild"
import { fileURLToPath } from "node:url"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** The path of the built executable. */
export const executable = here("../build/arbor.mjs")

export default async () => {
  await esbuild.build({
    entryPoints: [here("../src/main.ts")],
    outfile: executable,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    plugins: [{
      name: "workspace-sources",
      setup(build) {
        build.onResolve({ filter: /^@arbor\/(api|core)(\/.*)?$/ }, ({ path }) => {
          const [, name, subpath] = /^@arbor\/(api|core)(?:\/(.*))?$/.exec(path)!
          return { path: here(`../../${name}/src/${subpath ?? "index"}.ts`) }
        })
      }
    }]
  })
}
