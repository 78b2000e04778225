/**
 * The packages as an embedder gets them, by the README's own commands: its two install blocks ("Embed the engine")
 * run verbatim, the first in the clone (packing the packages), the second in an empty npm project (installing the
 * tarballs with Effect 3). Each tarball is then checked as `pnpm release` checks it; exactly one copy of `effect` (a
 * 3.x) must be installed; the README's embedding examples must type-check and run there, and its typed-client and
 * gRPC client examples must type-check.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { problemsOf } from "../../launcher/release.mjs"

const packages = fileURLToPath(new URL("../..", import.meta.url))
const clone = join(packages, "..")

/** The README's install blocks for embedders: the first runs in the clone, the second in the embedder's project. */
const installBlocks = () => {
  const readme = readFileSync(join(clone, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## Embed the engine"))
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
  return { inClone: blocks[0]!, inProject: blocks[1]! }
}

/** Where the README's first block leaves the tarballs. */
const tarballs = "/tmp/arbor-packages"

/** The embedder's own test runner, for the test kit's example suite. */
const vitestRelease = "3.2.7"

/** The environment without the test runner's and pnpm's own variables, as a user's shell would have it. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^(VITEST|VITE_|NODE_OPTIONS|TEST$|NODE_ENV$|npm_|PNPM_|ARBOR_)/.test(k))
)

/** Runs a command; a failure says what it printed. */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, extra: Record<string, string> = {}) =>
  promisify(execFile)(command, args, {
    cwd,
    env: { ...env, ...extra },
    encoding: "utf8",
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024
  }).catch((e: { stdout?: string; stderr?: string }) => {
    throw new Error(`${command} ${args.join(" ")} failed:\n${e.stdout ?? ""}\n${e.stderr ?? ""}`)
  })

/** Every installed copy of the package `name` below `dir`. */
const copies = (dir: string, name: string): Array<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(join("node_modules", name, "package.json")))

describe("packed packages", () => {
  it(
    "install by the README's commands, verbatim, with one copy of Effect 3; each tarball as the registry would serve it; the README's examples, the test kit's suite and a guarded Express route compile and run",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "arbor-pack-"))
      try {
        const { inClone, inProject } = installBlocks()
        // The clone's block, as a person runs it there (tarballs of an earlier run removed first).
        rmSync(tarballs, { recursive: true, force: true })
        await run("sh", ["-e", "-c", inClone], clone)
        // Each tarball as the registry would serve it.
        const rootManifest = JSON.parse(readFileSync(join(clone, "package.json"), "utf8"))
        for (const tarball of readdirSync(tarballs)) {
          const unpacked = mkdtempSync(join(dir, "unpacked-"))
          await run("tar", ["-xzf", join(tarballs, tarball), "-C", unpacked], dir)
          const manifest = JSON.parse(readFileSync(join(unpacked, "package/package.json"), "utf8"))
          const folder = manifest.name.replace("@arbor/", "")
          assert.deepStrictEqual(problemsOf(join(unpacked, "package"), manifest, folder, rootManifest), [], tarball)
        }
        // The embedder's project: its own tools only, then the README's second block.
        const project = join(dir, "project")
        mkdirSync(join(project, "src"), { recursive: true })
        writeFileSync(
          join(project, "package.json"),
          JSON.stringify({
            name: "embedder",
            private: true,
            type: "module",
            devDependencies: {
              "express": "5.1.0",
              "@types/express": "5.0.6",
              "@connectrpc/connect": "2.2.0",
              "@connectrpc/connect-node": "2.2.0",
              "typescript": "5.9.3",
              "vitest": vitestRelease,
              "@types/node": "20.19.43"
            }
          })
        )
        await run("sh", ["-e", "-c", inProject], project)
        writeFileSync(
          join(project, "tsconfig.json"),
          JSON.stringify({
            compilerOptions: {
              strict: true,
              exactOptionalPropertyTypes: true,
              target: "ES2022",
              module: "NodeNext",
              moduleResolution: "NodeNext",
              outDir: "dist",
              skipLibCheck: true,
              types: ["node"]
            },
            include: ["src"]
          })
        )
        cpSync(join(packages, "core/test/examples/embed.ts"), join(project, "src/embed.ts"))
        cpSync(join(packages, "core/test/examples/testKit.test.ts"), join(project, "src/testKit.test.ts"))
        cpSync(join(packages, "guards/test/examples/guarded.ts"), join(project, "src/guarded.ts"))
        for (const example of ["client.ts", "grpcClient.ts"]) {
          cpSync(join(packages, "http/test/examples", example), join(project, "src", example))
        }
        for (const example of ["embed-sqlite.ts", "embed-sts.ts"]) {
          cpSync(join(packages, "store-sqlite/test/examples", example), join(project, "src", example))
        }
        writeFileSync(
          join(project, "run.js"),
          `const { names } = await import("./dist/embed.js")
const { organizations } = await import("./dist/embed-sqlite.js")
console.log(JSON.stringify({ names: await names, organizations: await organizations }))
`
        )

        assert.deepStrictEqual(copies(project, "effect"), [join("node_modules", "effect", "package.json")])
        const installed = JSON.parse(readFileSync(join(project, "node_modules/effect/package.json"), "utf8"))
        assert.match(installed.version, /^3\./)
        for (const name of ["core", "store-sqlite", "api", "guards"]) {
          assert.isTrue(existsSync(join(project, "node_modules/@arbor", name, "package.json")), name)
        }

        await run("npx", ["tsc", "-p", "."], project)
        // The examples run as the README shows them: no setting, their files in the project's directory.
        const { stdout } = await run("node", ["run.js"], project)
        assert.deepStrictEqual(JSON.parse(stdout), { names: ["platform"], organizations: ["acme"] })
        // The test kit's example suite passes in the embedder's own vitest.
        const suite = await run("npx", ["vitest", "run", "src/testKit.test.ts"], project)
        assert.match(suite.stdout, /2 passed/)
        // An Express route guarded by the engine, from the packed @arbor/guards.
        const guarded = await run(
          "node",
          [
            "--input-type=module",
            "-e",
            "console.log(JSON.stringify(await (await import('./dist/guarded.js')).statuses()))"
          ],
          project
        )
        assert.deepStrictEqual(JSON.parse(guarded.stdout), { withoutToken: 401, withToken: 200, withForgedToken: 401 })
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    600_000
  )
})
