/**
 * IAM as code: `arbor export <organization>` prints an organization as a document (YAML, or JSON with `-o json`);
 * `arbor diff -f org.yaml` prints what applying it would change and exits 0 when nothing would, 2 when something
 * would (as `terraform plan -detailed-exitcode`), 1 on error; `arbor apply -f org.yaml` shows the plan, asks, and
 * applies it in one transaction (`--yes` for CI); `arbor iac schema` prints the document's JSON Schema. The server
 * plans and applies (`groups/<uid>:apply`, or `groups:apply` for an organization not made yet); client secrets the
 * document names by `secretFrom` are read here and sent with the request.
 */
import * as OrganizationDocument from "@arbor/core/OrganizationDocument"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import { readFileSync, realpathSync } from "node:fs"
import { dirname, resolve, sep } from "node:path"
import { parse, stringify } from "yaml"
import { CommandFailed, UsageError } from "../Failure.js"
import * as Help from "../Help.js"
import { common, confirm, connect, print, resolveGroup, yes } from "./shared.js"

/** A change of a plan, as the server answers it. */
interface Change {
  readonly action: "create" | "update" | "delete"
  readonly kind: string
  readonly path: string
  readonly detail?: string | undefined
}

/** A plan as a person reads it: `+ folder acme/prod`, `~ role acme/deployer: +repo.delete`, `- binding …`. */
const planText = (changes: ReadonlyArray<Change>) =>
  changes.map((c) =>
    `${c.action === "create" ? "+" : c.action === "update" ? "~" : "-"} ${c.kind} ${c.path}${
      c.detail === undefined ? "" : `: ${c.detail}`
    }`
  ).join("\n")

const file = Options.file("file", { exists: "yes" }).pipe(
  Options.withAlias("f"),
  Options.withDescription("the document: YAML or JSON, one organization")
)
const prune = Options.boolean("prune").pipe(
  Options.withDescription("also delete what the document leaves out (folders, roles, identities, bindings)")
)

/** The document of `path` and the one organization it names. */
const documentOf = (path: string) =>
  Effect.gen(function*() {
    const document: unknown = yield* Effect.try({
      try: () => parse(readFileSync(path, "utf8")),
      catch: (error) => new UsageError({ message: `${path} is not YAML or JSON: ${String(error)}` })
    })
    const names = typeof document === "object" && document !== null && "organizations" in document &&
        typeof document.organizations === "object" && document.organizations !== null
      ? Object.keys(document.organizations)
      : []
    if (names.length !== 1) {
      return yield* new UsageError({ message: `${path} must name one organization under organizations:` })
    }
    return { document, organization: names[0]! }
  })

/** Variables and files beyond those `arbor` reads without being told (`--secret-env`, `--secret-file`). */
interface Allowed {
  readonly secretEnv: ReadonlyArray<string>
  readonly secretFile: ReadonlyArray<string>
}

const secretEnv = Options.text("secret-env").pipe(
  Options.withPseudoName("name"),
  Options.withDescription(
    `an environment variable the document may read a secret from, besides those named ${OrganizationDocument.secretPrefix}… (repeatable)`
  ),
  Options.repeated
)
const secretFile = Options.text("secret-file").pipe(
  Options.withPseudoName("path"),
  Options.withDescription("a file the document may read a secret from, besides those in its own folder (repeatable)"),
  Options.repeated
)

/** The real path of `path` (symbolic links followed), or undefined when there is no such file. */
const real = (path: string) => {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}

/**
 * The client secrets the document at `path` names (`secretFrom`), read here, on this machine (a person's, a CI
 * job's): sent with the request, by source, since the server reads none of its own for a request. A document under
 * review must not have any of the machine's secrets read and sent: only variables named `ARBOR_IDP_…` (as an export
 * names them) or by `--secret-env`, and files in the document's own folder (a relative path is read from there) or
 * named by `--secret-file`; any other is an error naming it, before anything is sent.
 */
const secretsOf = (path: string, document: unknown, allowed: Allowed, forPlan: boolean) =>
  Effect.gen(function*() {
    const folder = real(dirname(resolve(path))) ?? dirname(resolve(path))
    const named = new Set(allowed.secretFile.flatMap((file) => real(file) ?? []))
    const secrets: Record<string, string> = {}
    /** The real files read so far, by the source that read each. */
    const files = new Map<string, string>()
    for (const from of OrganizationDocument.secretSources(document)) {
      const source = OrganizationDocument.sourceOf(from)
      const refuse = (why: string) => new CommandFailed({ message: `secretFrom ${source}: ${why}` })
      let read: OrganizationDocument.SecretFrom = from
      if ("env" in from) {
        if (!from.env.startsWith(OrganizationDocument.secretPrefix) && !allowed.secretEnv.includes(from.env)) {
          return yield* refuse(
            `arbor reads only variables named ${OrganizationDocument.secretPrefix}… or given with --secret-env ${from.env}`
          )
        }
      } else {
        const wanted = resolve(folder, from.file)
        const file = real(wanted) ?? wanted
        if (!file.startsWith(`${folder}${sep}`) && !named.has(file)) {
          return yield* refuse(
            `arbor reads only files in the document's folder (${folder}) or given with --secret-file ${from.file}`
          )
        }
        const other = files.get(file)
        if (other !== undefined) {
          return yield* refuse(`is the file ${other} reads too: each identity provider's secret is its own`)
        }
        files.set(file, source)
        read = { file }
      }
      const reading: Effect.Effect<string | undefined, CommandFailed> = OrganizationDocument.readSecret(read, source)
        .pipe(Effect.mapError((e) => refuse(e.violations[0].description)))
      // A plan goes on without a secret it cannot read here: unknown, not compared. An apply needs it.
      const secret = yield* forPlan
        ? Effect.catchAll(reading, (refused) =>
          Effect.as(
            Effect.sync(() => process.stderr.write(`arbor: ${refused.message}: unknown, not compared\n`)),
            undefined
          ))
        : reading
      if (secret !== undefined) secrets[source] = secret
    }
    return secrets
  })

/**
 * The plan of applying the document of `flags.file` (nothing applied), with what is needed to apply it: at its
 * organization, or, when that does not exist yet, at the collection (which creates it; platform admins only).
 */
const planned = (
  flags: Parameters<typeof connect>[0] & Allowed & { readonly file: string; readonly prune: boolean },
  /** Only the plan is wanted (`diff`): a secret that cannot be read here is left unknown, not compared. */
  planOnly: boolean
) =>
  Effect.gen(function*() {
    const client = yield* connect(flags)
    const { document, organization } = yield* documentOf(flags.file)
    const secrets = yield* secretsOf(flags.file, document, flags, planOnly)
    const uid = yield* resolveGroup(client, organization).pipe(
      Effect.map((uid): string | undefined => uid),
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
    const call = (payload: { readonly validateOnly?: boolean; readonly etag?: string }) => {
      const body = { document, prune: flags.prune, secrets, ...payload }
      return uid === undefined
        ? client.organizationsAsCode.applyOrganizations({ payload: body })
        : client.organizationsAsCode.apply({ path: { uid }, payload: body })
    }
    const plan = yield* call({ validateOnly: true })
    // Applied with the plan's etag: what is applied is what was shown, or nothing if the organization changed since.
    return { apply: call({ etag: plan.etag }), changes: plan.changes }
  })

/** `arbor export`. */
export const exportCommand = Command.make(
  "export",
  {
    ...common,
    organization: Args.text({ name: "organization" }).pipe(Args.withDescription("the organization (its name or uid)")),
    output: Options.choice("output", ["yaml", "json"] as const).pipe(
      Options.withAlias("o"),
      Options.withDescription("the document's format"),
      Options.withDefault("yaml" as const)
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      const uid = yield* resolveGroup(client, flags.organization)
      const { document } = yield* client.organizationsAsCode.export({ path: { uid } })
      yield* print(flags.output === "json" ? JSON.stringify(document, null, 2) : stringify(document).trimEnd())
    })
).pipe(Command.withDescription(
  "Print an organization as a document (its folders, custom roles, identities and bindings), in a stable order. Example: arbor export acme > acme.yaml"
))

/** `arbor diff`. */
export const diffCommand = Command.make(
  "diff",
  { ...common, file, prune, secretEnv, secretFile },
  (flags) =>
    Effect.gen(function*() {
      const { changes } = yield* planned(flags, true)
      if (changes.length === 0) return yield* print("No changes: the organization is as the document says.")
      yield* print(planText(changes))
      // As terraform plan -detailed-exitcode: 2 when there is something to apply.
      yield* Effect.sync(() => (process.exitCode = 2))
    })
).pipe(Command.withDescription(
  "Print what applying a document would change; exit 0 when nothing would, 2 when something would, 1 on error. Example: arbor diff -f acme.yaml"
))

/** `arbor apply`. */
export const applyCommand = Command.make(
  "apply",
  {
    ...common,
    file,
    prune,
    secretEnv,
    secretFile,
    yes
  },
  (flags) =>
    Effect.gen(function*() {
      const { apply, changes } = yield* planned(flags, false)
      if (changes.length === 0) return yield* print("No changes: the organization is as the document says.")
      yield* print(planText(changes))
      yield* confirm(`Apply ${changes.length} change(s)?`, "apply", flags.yes)
      const applied = yield* apply
      yield* print(`Applied ${applied.changes.length} change(s).`)
    })
).pipe(Command.withDescription(
  "Make an organization as a document says, in one transaction: shows the plan and asks first. Example: arbor apply -f acme.yaml --yes"
))

/** `arbor iac`: what is known of the document without a server. */
export const iacCommand = Command.make("iac").pipe(
  Command.withDescription("IAM as code: the document that export prints and diff and apply read."),
  Help.withSubcommands([
    Command.make("schema", {}, () => print(JSON.stringify(OrganizationDocument.jsonSchema(), null, 2))).pipe(
      Command.withDescription(
        "Print the document's JSON Schema, for an editor to complete and check it. Example: arbor iac schema > arbor-iam.schema.json"
      )
    )
  ])
)
