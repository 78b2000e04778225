/**
 * The packages as an embedder gets them: `@arbor/core` (with `@arbor/schema-compiler`), the SQLite adapter and
 * `@arbor/api` packed, installed from the tarballs into a new project on another Effect 3 release than the
 * workspace's, where exactly one copy of `effect` must be installed, the README's embedding examples must type-check
 * and run, and its typed-client and gRPC client examples must type-check.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const packages = fileURLToPath(new URL("../..", import.meta.url))

/** The Effect release the project installs: a 3.x release other than the workspace's own. */
const effectRelease = "3.22.2"

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
    "install on another Effect 3 release with one copy of effect; the README's examples, the test kit's suite and a guarded Express route compile and run",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "arbor-pack-"))
      try {
        for (const name of ["schema-compiler", "core", "store-sql", "store-sqlite", "api", "guards"]) {
          await run("npx", ["-y", "pnpm@10", "pack", "--pack-destination", dir], join(packages, name))
        }
        const project = join(dir, "project")
        mkdirSync(join(project, "src"), { recursive: true })
        const version = (name: string) =>
          (JSON.parse(readFileSync(join(packages, name, "package.json"), "utf8")) as { version: string }).version
        writeFileSync(
          join(project, "package.json"),
          JSON.stringify({
            name: "embedder",
            private: true,
            type: "module",
            dependencies: {
              "@arbor/schema-compiler": `file:../arbor-schema-compiler-${version("schema-compiler")}.tgz`,
              "@arbor/core": `file:../arbor-core-${version("core")}.tgz`,
              "@arbor/store-sql": `file:../arbor-store-sql-${version("store-sql")}.tgz`,
              "@arbor/store-sqlite": `file:../arbor-store-sqlite-${version("store-sqlite")}.tgz`,
              "@arbor/api": `file:../arbor-api-${version("api")}.tgz`,
              "@arbor/guards": `file:../arbor-guards-${version("guards")}.tgz`,
              "express": "5.1.0",
              "@types/express": "5.0.6",
              "effect": effectRelease,
              "@effect/platform": "0.97.2",
              "@effect/sql": "0.52.1",
              "@effect/sql-sqlite-node": "0.53.0",
              "@effect/experimental": "0.61.1",
              "@connectrpc/connect": "2.2.0",
              "@connectrpc/connect-node": "2.2.0",
              "typescript": "5.9.3",
              "vitest": vitestRelease,
              "@types/node": "20.19.43"
            }
          })
        )
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

        await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], project)
        assert.deepStrictEqual(copies(project, "effect"), [join("node_modules", "effect", "package.json")])
        const installed = JSON.parse(readFileSync(join(project, "node_modules/effect/package.json"), "utf8"))
        assert.strictEqual(installed.version, effectRelease)

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
