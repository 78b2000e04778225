/**
 * `pnpm admin <command>`: administration on the data directory, with the server running or not (SQLite lets both
 * write; each command is short), on `@effect/cli` (`--help` on every command). Tokens name the addresses the server
 * last started with (recorded in the data directory) unless `ARBOR_BASE_URL` or `ARBOR_AUTH_URL` say otherwise.
 * Results go to stdout, nothing else does. Exit codes: 0 done, 1 refused or failed, 2 usage.
 */
import * as Help from "@arbor/cli/Help"
import {
  Advisories,
  Groups,
  Identities,
  type Import,
  Principal,
  Repos,
  Role,
  RoleBindings,
  Sealing,
  Secrets,
  Store,
  TokenIssuer,
  Uid
} from "@arbor/core"
import { PostgresStore } from "@arbor/store-postgres"
import { SqliteStore } from "@arbor/store-sqlite"
import { Args, CliConfig, Command, Options, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as DataDir from "./DataDir.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"
import * as StoreCopy from "./StoreCopy.js"

const ownerRole = Role.builtInByName("owner")!.uid

/** A refusal of the command line itself: exit code 2. */
class UsageError extends Error {}

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

/** The group named by `names` (an organization's name, then its folders' names), if it exists. */
const groupByNames = (names: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    let found: Uid.Uid | undefined
    for (const name of names) {
      const page = yield* groups.list(
        Principal.system,
        found === undefined ? { inRoot: true, name, pageSize: 1 } : { childrenOf: found, name, pageSize: 1 }
      )
      found = page.items[0]?.uid
      if (found === undefined) return undefined
    }
    return found
  })

/** The group `--<flag>` names: its uid, or its path of names (`acme/platform`). */
const groupRef = (flag: string, value: string) =>
  Effect.gen(function*() {
    if (Uid.isUid(value)) return value
    const names = value.split("/").filter((name) => name !== "")
    const found = names.length === 0 ? undefined : yield* groupByNames(names)
    if (found === undefined) {
      return yield* Effect.fail(new UsageError(`--${flag} ${value}: no such group (give a uid or a path of names)`))
    }
    return found
  })

/**
 * The identity `--<flag>` names: its uid, or the path of names of its group and its own name
 * (`default/bootstrap-admin`).
 */
const identityRef = (flag: string, value: string) =>
  Effect.gen(function*() {
    if (Uid.isUid(value)) return value
    const names = value.split("/").filter((name) => name !== "")
    const group = names.length < 2 ? undefined : yield* groupByNames(names.slice(0, -1))
    const page = group === undefined ? undefined : yield* (yield* Identities.Identities).list(
      Principal.system,
      { childrenOf: group, name: names.at(-1), pageSize: 1 }
    )
    const found = page?.items[0]?.uid
    if (found === undefined) {
      return yield* Effect.fail(
        new UsageError(`--${flag} ${value}: no such identity (give a uid, or its group's path and its name)`)
      )
    }
    return found
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

/** Runs a command's work on the engine over the data directory. */
const onEngine = <A, E, R>(work: Effect.Effect<A, E, R>) =>
  Effect.flatMap(configuration, (config) => Effect.provide(work, Server.engine(config)))

/** The identity the first start created to own its organization, if there is one. */
const bootstrapAdmin = Effect.flatMap(
  Identities.Identities,
  (identities) =>
    Effect.map(
      identities.list(Principal.system, { name: "bootstrap-admin", orderBy: "create_time", pageSize: 1 }),
      (page) => page.items[0]?.uid
    )
)

const group = Options.text("group").pipe(
  Options.withPseudoName("group"),
  Options.withDescription("the group to import below: its uid, or its path of names (acme/platform)")
)

const token = Command.make(
  "token",
  {
    identity: Options.text("identity").pipe(
      Options.withPseudoName("identity"),
      Options.withDescription(
        "the identity: its uid, or its group's path of names and its name (default/bootstrap-admin)"
      )
    )
  },
  ({ identity }) =>
    onEngine(Effect.gen(function*() {
      const uid = yield* identityRef("identity", identity)
      yield* (yield* Identities.Identities).get(Principal.system, uid)
      const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(uid, { iss: "arbor-admin", sub: "admin" })
      yield* print(minted.token)
    }))
).pipe(Command.withDescription(
  "Print a fresh one-hour API token for an identity. Example: pnpm --silent admin token --identity " +
    "default/bootstrap-admin"
))

const createOrg = Command.make(
  "create-org",
  {
    name: Args.text({ name: "name" }).pipe(Args.withDescription("the organization's name")),
    owner: Options.text("owner").pipe(
      Options.withPseudoName("identity"),
      Options.withDescription(
        "the identity to bind as its owner: its uid (a person's too), or its group's path and its name " +
          "(default: bootstrap-admin)"
      ),
      Options.optional
    )
  },
  ({ name, owner }) =>
    onEngine(Effect.gen(function*() {
      const ownerUid = Option.isSome(owner) ? yield* identityRef("owner", owner.value) : yield* bootstrapAdmin
      if (ownerUid === undefined) {
        return yield* Effect.fail(new UsageError("--owner is required: there is no bootstrap-admin identity"))
      }
      // The organization and its owner's binding in one write: never an organization without its owner.
      const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name }, { owner: ownerUid })
      yield* print(org.uid)
    }))
).pipe(Command.withDescription(
  "Create an organization with an owner; prints its uid. Example: pnpm admin create-org acme --owner <uid>"
))

const grantOwner = Command.make(
  "grant-owner",
  {
    organization: Args.text({ name: "organization" }).pipe(
      Args.withDescription("the organization: its uid or its name")
    ),
    identity: Options.text("identity").pipe(
      Options.withPseudoName("identity"),
      Options.withDescription("who becomes its owner: a uid (a person's too), or its group's path and its name")
    )
  },
  ({ identity, organization }) =>
    onEngine(Effect.gen(function*() {
      const org = yield* groupRef("organization", organization)
      if (Uid.parentOrNull(org) !== null) {
        return yield* Effect.fail(new UsageError(`${organization} is a folder, not an organization`))
      }
      const uid = yield* identityRef("identity", identity)
      const bindings = yield* RoleBindings.RoleBindings
      const existing = yield* bindings.list(Principal.system, { childrenOf: org, identity: uid, role: ownerRole })
      const binding = existing.items[0] ??
        (yield* bindings.create(Principal.system, org, { identityUid: uid, roleUid: ownerRole }))
      yield* print(binding.uid)
    }))
).pipe(Command.withDescription(
  "Bind an identity owner at an organization (one that lost its owners, recovered from the machine); prints the " +
    "binding's uid. Example: pnpm admin grant-owner default --identity default/bootstrap-admin"
))

const rotateKeys = Command.make(
  "rotate-keys",
  {},
  () => onEngine(Effect.flatMap(Effect.flatMap(TokenIssuer.TokenIssuer, (issuer) => issuer.rotate), print))
).pipe(Command.withDescription(
  "Publish a new signing key at once and sign tokens with it two minutes later (when every server and verifier " +
    "knows it), printing its kid; tokens of the old key work until they expire. Example: pnpm admin rotate-keys"
))

const importAdvisories = Command.make(
  "advisories",
  {
    dir: Args.directory({ name: "dir", exists: "yes" }).pipe(Args.withDescription("the folder of advisory documents")),
    group
  },
  ({ dir, group }) =>
    onEngine(Effect.gen(function*() {
      const uid = yield* groupRef("group", group)
      const files = readdirSync(dir).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml")).sort()
      const documents = files.map((f) => ({ source: f, text: readFileSync(join(dir, f), "utf8") }))
      const report = yield* (yield* Advisories.Advisories).importDocuments(Principal.system, uid, documents, {
        onProgress: progressBar("advisories")
      })
      yield* print(report)
    }))
).pipe(Command.withDescription(
  "Import the advisory documents (Wolfi YAML, *.yaml) in a directory. " +
    "Example: pnpm admin import advisories ./advisories --group default"
))

const importRepos = Command.make(
  "repos",
  {
    file: Args.file({ name: "file", exists: "yes" }).pipe(Args.withDescription("the catalog, a JSON file")),
    group
  },
  ({ file, group }) =>
    onEngine(Effect.gen(function*() {
      const uid = yield* groupRef("group", group)
      const catalog = yield* Effect.try({
        try: () => JSON.parse(readFileSync(file, "utf8")) as unknown,
        catch: () => new UsageError(`${file} is not JSON`)
      })
      const report = yield* (yield* Repos.Repos).importCatalog(Principal.system, uid, catalog, {
        onProgress: progressBar("repos")
      })
      yield* print(report)
    }))
).pipe(Command.withDescription(
  "Import a repo catalog (a JSON array like repos.json). Example: pnpm admin import repos ./repos.json --group default"
))

const copyToPostgres = Command.make(
  "copy-to-postgres",
  {
    url: Options.redacted("database-url").pipe(
      Options.withPseudoName("url"),
      Options.withDescription("the PostgreSQL database to fill (default: ARBOR_DATABASE_URL); it must be empty"),
      Options.optional
    )
  },
  ({ url }) =>
    Effect.gen(function*() {
      const config = yield* configuration
      const filename = join(config.dataDir, DataDir.files.database)
      if (!existsSync(filename)) return yield* Effect.fail(new UsageError(`there is no SQLite database at ${filename}`))
      const target = Option.isSome(url) ? url.value : config.databaseUrl
      if (target === undefined) {
        return yield* Effect.fail(new UsageError("--database-url or ARBOR_DATABASE_URL is required"))
      }
      if (config.secretsKey === undefined) {
        return yield* Effect.fail(
          new UsageError(
            "ARBOR_SECRETS_KEY is required: the key the PostgreSQL servers will seal secrets with (set it for them too)"
          )
        )
      }
      const sealingSettings = { current: config.secretsKey, retired: config.retiredSecretsKeys }
      const sealing = {
        from: yield* DataDir.sealingKeys(config.dataDir, sealingSettings),
        to: Sealing.keys(Redacted.value(config.secretsKey))
      }
      const counts = yield* Effect.gen(function*() {
        const source = yield* Effect.map(Layer.build(SqliteStore.layer({ filename })), Context.get(Store.Store))
        const into = yield* Effect.map(
          Layer.build(PostgresStore.layer({ url: target, maxConnections: 2 })),
          Context.get(Store.Store)
        )
        return yield* StoreCopy.copy({
          source,
          target: into,
          signingKeys: yield* Effect.map(
            Layer.build(DataDir.signingKeysLayer(config.dataDir)),
            Context.get(TokenIssuer.SigningKeys)
          ),
          secrets: yield* Effect.map(
            Layer.build(DataDir.secretsLayer(config.dataDir, sealingSettings)),
            Context.get(Secrets.Secrets)
          ),
          sealing,
          progress: (table) => progressBar(table.padEnd(20))
        })
      }).pipe(Effect.scoped)
      yield* print(counts.map((c) => `${c.table} ${c.target}`).join("\n"))
    })
).pipe(Command.withDescription(
  "Copy the SQLite database of ARBOR_DATA_DIR, with its keys, into an empty PostgreSQL database, then compare the " +
    "rows of every table; prints each table's count. Stop the server first. " +
    "Example: pnpm admin copy-to-postgres --database-url postgres://arbor@db.example.com:5432/arbor"
))

const admin = Command.make("admin").pipe(
  Command.withDescription(
    "Administration on ARBOR_DATA_DIR (default ./.arbor), whether or not the server is running. Tokens are for the " +
      "addresses the server last started with, unless ARBOR_BASE_URL or ARBOR_AUTH_URL are set."
  ),
  Help.withSubcommands([
    token,
    createOrg,
    grantOwner,
    rotateKeys,
    copyToPostgres,
    Command.make("import").pipe(
      Command.withDescription("Import advisories or a repo catalog."),
      Help.withSubcommands([importAdvisories, importRepos])
    )
  ])
)

const cli = Command.run(admin, { name: "pnpm admin", version: "0.1.0" })

const program = Effect.suspend(() => {
  // Help, and a word that names no command, as arbor's (see @arbor/cli's Help).
  const prepared = Help.prepare({ program: "pnpm admin", root: admin, args: process.argv.slice(2) })
  if ("exitCode" in prepared) return Effect.sync(() => (process.exitCode = prepared.exitCode))
  return cli([...process.argv.slice(0, 2), ...prepared.args])
}).pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      // @effect/cli has shown what was wrong with the command line already.
      if (ValidationError.isValidationError(error)) {
        process.exitCode = 2
        return
      }
      process.stderr.write(`${(error as { message?: string }).message ?? String(error)}\n`)
      process.exitCode = error instanceof UsageError ? 2 : 1
    })
  ),
  Effect.provide(NodeContext.layer),
  // Help shows the commands' own options and descriptions, not the library's built-in ones or its type notes.
  Effect.provide(CliConfig.layer({ showBuiltIns: false, showTypes: false }))
)

// Logs go to stderr, so that stdout holds only the result.
const toStderr = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

NodeRuntime.runMain(program.pipe(Logger.withMinimumLogLevel(LogLevel.Warning), Effect.provide(toStderr)), {
  disablePrettyLogger: true
})
