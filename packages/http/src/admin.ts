/**
 * `pnpm admin <command>`: administration on the data directory, with the server running or not (SQLite lets both
 * write; each command is short).
 *
 *   token --identity <uid>                   print a fresh one-hour API token for an identity
 *   create-org <name>                        create an organization, print its uid
 *   rotate-keys                              sign with a new key from now on; print its kid
 *   import advisories <dir> --group <uid>    import every *.advisories.yaml / *.yaml in <dir>
 *   import repos <file> --group <uid>        import a repo catalog (a JSON array like repos.json)
 */
import { Advisories, Groups, Identities, type Import, Principal, Repos, TokenIssuer, Uid } from "@arbor/core"
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"

const usage = `usage: pnpm admin <command>
  token --identity <uid>                   a fresh one-hour API token for an identity
  create-org <name>                        create an organization; prints its uid
  rotate-keys                              sign tokens with a new key from now on; prints its kid
                                           (tokens of the old key work until they expire)
  import advisories <dir> --group <uid>    import the advisory documents (*.yaml) in <dir>
  import repos <file> --group <uid>        import a repo catalog (a JSON array like repos.json)
Works on ARBOR_DATA_DIR (default ./.arbor), whether or not the server is running.`

class UsageError extends Error {}

const flag = (args: ReadonlyArray<string>, name: string): string => {
  const i = args.indexOf(`--${name}`)
  const value = i < 0 ? undefined : args[i + 1]
  if (value === undefined) throw new UsageError(`--${name} is required`)
  return value
}

const uidFlag = (args: ReadonlyArray<string>, name: string): Uid.Uid => {
  const value = flag(args, name)
  if (!Uid.isUid(value)) throw new UsageError(`--${name} ${value} is not a uid`)
  return value
}

/** A progress bar on stderr: redrawn in place on a terminal, a line per tenth otherwise. */
const progressBar = (label: string) => {
  let lastTenth = -1
  return (p: Import.Progress) =>
    Effect.sync(() => {
      const width = 30
      const filled = Math.round((p.done / Math.max(p.total, 1)) * width)
      const line = `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${p.done}/${p.total} ${p.source}`
      if (process.stderr.isTTY) {
        process.stderr.write(`\r${line.slice(0, process.stderr.columns - 1).padEnd(process.stderr.columns - 1)}`)
        if (p.done === p.total) process.stderr.write("\n")
      } else {
        const tenth = Math.floor((p.done / Math.max(p.total, 1)) * 10)
        if (tenth !== lastTenth) {
          lastTenth = tenth
          process.stderr.write(`${line}\n`)
        }
      }
    })
}

const print = (value: unknown) =>
  Effect.sync(() => process.stdout.write(`${typeof value === "string" ? value : JSON.stringify(value, null, 2)}\n`))

const command = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const [name, ...rest] = args
    switch (name) {
      case "token": {
        const identity = uidFlag(rest, "identity")
        yield* (yield* Identities.Identities).get(Principal.system, identity)
        const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(identity, { iss: "arbor-admin", sub: "admin" })
        return yield* print(minted.token)
      }
      case "create-org": {
        const orgName = rest[0]
        if (orgName === undefined) throw new UsageError("create-org needs a name")
        const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: orgName })
        return yield* print(org.uid)
      }
      case "rotate-keys":
        return yield* print(yield* (yield* TokenIssuer.TokenIssuer).rotate)
      case "import": {
        const [what, source] = rest
        const group = uidFlag(rest, "group")
        if (source === undefined) throw new UsageError(`import ${what ?? ""} needs a source`)
        if (what === "advisories") {
          const files = readdirSync(source).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml")).sort()
          const documents = files.map((f) => ({ source: f, text: readFileSync(join(source, f), "utf8") }))
          const report = yield* (yield* Advisories.Advisories).importDocuments(Principal.system, group, documents, {
            onProgress: progressBar("advisories")
          })
          return yield* print(report)
        }
        if (what === "repos") {
          const catalog: unknown = JSON.parse(readFileSync(source, "utf8"))
          const report = yield* (yield* Repos.Repos).importCatalog(Principal.system, group, catalog, {
            onProgress: progressBar("repos")
          })
          return yield* print(report)
        }
        throw new UsageError(`import ${what ?? ""}: expected advisories or repos`)
      }
      default:
        throw new UsageError(name === undefined ? "a command is required" : `unknown command ${name}`)
    }
  })

const program = Effect.gen(function*() {
  const config = yield* ServerConfig.config
  return yield* Effect.suspend(() => command(process.argv.slice(2))).pipe(Effect.provide(Server.engine(config)))
}).pipe(
  Effect.catchAllDefect((defect) =>
    defect instanceof UsageError
      ? Effect.sync(() => {
        process.stderr.write(`${defect.message}\n\n${usage}\n`)
        process.exitCode = 2
      })
      : Effect.die(defect)
  ),
  Effect.catchAll((error) =>
    Effect.sync(() => {
      process.stderr.write(`${(error as { message?: string }).message ?? String(error)}\n`)
      process.exitCode = 1
    })
  )
)

NodeRuntime.runMain(program.pipe(Logger.withMinimumLogLevel(LogLevel.Warning)), { disablePrettyLogger: true })
