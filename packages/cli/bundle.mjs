/* global process, URL */
/**
 * Bundles the `arbor` executable into one file with esbuild: `src/main.ts` and everything it imports, the
 * workspace's packages from their sources, Effect and the rest included, so that the packed package has no
 * dependencies and `npm install -g` of it alone works. `node bundle.mjs [outfile]` (default `build/arbor.mjs`).
 */
import * as esbuild from "esbuild"
import { fileURLToPath } from "node:url"

const here = (path) => fileURLToPath(new URL(path, import.meta.url))

/** Writes the executable to `outfile`. */
export const bundle = (outfile) =>
  esbuild.build({
    entryPoints: [here("src/main.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    // Some bundled CommonJS modules call `require`; an ES module has none of its own.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    plugins: [{
      name: "workspace-sources",
      setup(build) {
        build.onResolve({ filter: /^@arbor\/(api|core)(\/.*)?$/ }, ({ path }) => {
          const [, name, subpath] = /^@arbor\/(api|core)(?:\/(.*))?$/.exec(path)
          return { path: here(`../${name}/src/${subpath ?? "index"}.ts`) }
        })
      }
    }]
  })

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundle(process.argv[2] ?? here("build/arbor.mjs"))
}
