/**
 * `pnpm admin <command>`: administration on the data directory, with the server running or not (SQLite lets both
 * write; each command is short). Tokens name the addresses the server last started with (recorded in the data
 * directory) unless `ARBOR_BASE_URL` or `ARBOR_AUTH_URL` say otherwise. Results go to stdout, nothing else does.
 *
 *   token --identity <uid>                   print a fresh one-hour API token for an identity
 *   create-org <name> [--owner <uid>]        create an organization owned by an identity, print its uid
 *   rotate-keys                              sign with a new key from now on; print its kid
 *   import advisories <dir> --group <uid>    import every *.advisories.yaml / *.yaml in <dir>
 *   import repos <file> --group <uid>        import a repo catalog (a JSON array like repos.json)
 */
import {
  Advisories,
  Groups,
  Identities,
  type Import,
  Principal,
  Repos,
  Role,
  RoleBindings,
  TokenIssuer,
  Uid
} from "@arbor/core"
import { NodeRuntime } from "@effect/platform-node"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as DataDir from "./DataDir.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"

const usage = `usage: pnpm admin <command>
  token --identity <uid>                   a fresh one-hour API token for an identity
  create-org <name> [--owner <uid>]        create an organization with <uid> (default: the bootstrap
                                           admin) bound as its owner; prints its uid
  rotate-keys                              sign tokens with a new key from now on; prints its kid
                                           (tokens of the old key work until they expire)
  import advisories <dir> --group <uid>    import the advisory documents (*.yaml) in <dir>
  import repos <file> --group <uid>        import a repo catalog (a JSON array like repos.json)
Works on ARBOR_DATA_DIR (default ./.arbor), whether or not the server is running; tokens are for the
addresses the server last started with, unless ARBOR_BASE_URL or ARBOR_AUTH_URL are set.`

class UsageError extends Error {}

const optionalFlag = (args: ReadonlyArray<string>, name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  if (i < 0) return undefined
  const value = args[i + 1]
  if (value === undefined) throw new UsageError(`--${name} needs a value`)
  return value
}

const flag = (args: ReadonlyArray<string>, name: string): string => {
  const value = optionalFlag(args, name)
  if (value === undefined) throw new UsageError(`--${name} is required`)
  return value
}

const asUid = (name: string, value: string): Uid.Uid => {
  if (!Uid.isUid(value)) throw new UsageError(`--${name} ${value} is not a uid`)
  return value
}

const uidFlag = (args: ReadonlyArray<string>, name: string): Uid.Uid => asUid(name, flag(args, name))

/** The identity the first start created to own its organization, if there is one. */
const bootstrapAdmin = Effect.flatMap(
  Identities.Identities,
  (identities) =>
    Effect.map(
      identities.list(Principal.system, { name: "bootstrap-admin", orderBy: "create_time", pageSize: 1 }),
      (page) => page.items[0]?.uid
    )
)

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
        if (orgName === undefined || orgName.startsWith("--")) throw new UsageError("create-org needs a name")
        const given = optionalFlag(rest, "owner")
        const owner = given === undefined ? yield* bootstrapAdmin : asUid("owner", given)
        if (owner === undefined) throw new UsageError("--owner is required: there is no bootstrap-admin identity")
        yield* (yield* Identities.Identities).get(Principal.system, owner)
        const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: orgName })
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
          identityUid: owner,
          roleUid: Role.builtInByName("owner")!.uid
        })
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

/** The server's configuration, with the addresses the server last started with unless set explicitly. */
const configuration = Effect.gen(function*() {
  const config = yield* ServerConfig.config
  const explicit = yield* Config.all([
    Config.option(Config.string("ARBOR_BASE_URL")),
    Config.option(Config.string("ARBOR_AUTH_URL"))
  ])
  const recorded = yield* DataDir.readServerAddresses(config.dataDir)
  return recorded === undefined || explicit.some(Option.isSome) ? config : { ...config, ...recorded }
})

const program = Effect.gen(function*() {
  const config = yield* configuration
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

// Logs go to stderr, so that stdout holds only the result.
const toStderr = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

NodeRuntime.runMain(program.pipe(Logger.withMinimumLogLevel(LogLevel.Warning), Effect.provide(toStderr)), {
  disablePrettyLogger: true
})
