/**
 * The document of IAM as code (docs/api.md §15): organizations by name, each with its folders, custom roles,
 * identities, role bindings, identity providers with their group mappings, subscriptions and its decision
 * vocabulary, by names and paths,
 * never uids, and client secrets only by where they are read (`secretFrom`, `readSecret`). `Declarative` exports,
 * plans and applies it; `jsonSchema` describes it for editors (`arbor iac schema`), capabilities listed in both
 * spellings.
 */
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { normalize } from "node:path"
import { InvalidArgument } from "../engine/Errors.js"
import * as Capability from "./Capability.js"
import * as ClaimMatch from "./ClaimMatch.js"
import * as Condition from "./Condition.js"
import * as DecisionVocabulary from "./DecisionVocabulary.js"

/** A folder as the document writes it. */
export interface FolderType {
  readonly description?: string | undefined
  readonly folders?: { readonly [name: string]: FolderType } | undefined
}

/** A folder: its description, and the folders below it by name. */
export const Folder: Schema.Schema<FolderType> = Schema.Struct({
  description: Schema.optional(Schema.String),
  folders: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.suspend(() => Folder) }))
}).annotations({ identifier: "Folder" })

/** A capability, in either spelling: any string to the decoder (which names a wrong one), an enum to an editor. */
const CapabilityName = Schema.String.annotations({
  jsonSchema: { type: "string", enum: [...Capability.all, ...Capability.all.map(Capability.toEnumName)] }
})

/** A custom role of the organization: its capabilities (either spelling), or those with a description. */
export const RoleSpec = Schema.Union(
  Schema.Array(CapabilityName),
  Schema.Struct({ description: Schema.optional(Schema.String), capabilities: Schema.Array(CapabilityName) })
)

/** An identity: a token of `issuer` and `subject` assumes it (or the claim match in full). */
export const IdentitySpec = Schema.Struct({
  description: Schema.optional(Schema.String),
  /** Its folder, as a path below the organization, when the key is its name alone. */
  group: Schema.optional(Schema.String),
  issuer: Schema.optional(Schema.String),
  subject: Schema.optional(Schema.String),
  claimMatch: Schema.optional(ClaimMatch.ClaimMatch)
})

/** A role binding: an identity (its key), a role (the organization's or a built-in one) and where (a folder path). */
export const BindingSpec = Schema.Struct({
  identity: Schema.String,
  role: Schema.String,
  /** A folder's path below the organization; the organization itself when absent. */
  group: Schema.optional(Schema.String),
  /** When it starts to grant (RFC 3339); at once when absent (DECISIONS §21). */
  starts: Schema.optional(Schema.DateTimeUtc),
  /** When it stops granting (RFC 3339); never when absent. */
  expires: Schema.optional(Schema.DateTimeUtc),
  /** Where it grants: only where this CEL expression holds (DECISIONS §21); everywhere in its group when absent. */
  condition: Schema.optional(Condition.Checked)
})

/**
 * Where a client secret is read, never the secret itself: an environment variable or a file, read where the document
 * is applied from (`arbor`'s machine; the server's own for `ARBOR_SEED_FILE`).
 */
export const SecretFrom = Schema.Union(
  Schema.Struct({ env: Schema.String }),
  Schema.Struct({ file: Schema.String })
).annotations({ identifier: "SecretFrom" })
export type SecretFrom = typeof SecretFrom.Type

/**
 * A secret's source as one string, `env:NAME` or `file:PATH` (the path normalized: `./okta` and `okta` are one
 * file): how a request carries what its caller read there, and how a document is held to one provider a secret.
 */
export const sourceOf = (from: SecretFrom): string => "env" in from ? `env:${from.env}` : `file:${normalize(from.file)}`

/**
 * The prefix of the environment variables that an export names for client secrets, and that `arbor` reads without
 * being told (`--secret-env` names others): a document under review cannot have it read any other of the machine's.
 */
export const secretPrefix = "ARBOR_IDP_"

/** The code of each character a name may hold besides letters and digits, inside an escaped run (`secretVariable`). */
const escapes: Readonly<Record<string, string>> = { "-": "H", "/": "S", ".": "D", " ": "W", "_": "U" }

/**
 * The environment variable an export names for a provider's client secret, which it cannot read, made of the
 * organization's name and the provider's path so that no two providers ever share one (DECISIONS §20): letters and
 * digits upper-cased, a lone `-` as `_`, a lone `/` as `__`, and any other run of other characters spelled out
 * between `___` (`-` H, `/` S, `.` D, space W, `_` U), after `ARBOR_IDP_` (the prefix `arbor` reads without being
 * told, `secretPrefix`) and before `_CLIENT_SECRET`. `acme`'s `prod/okta` reads
 * `ARBOR_IDP_ACME__PROD__OKTA_CLIENT_SECRET`, its `prod-okta` `ARBOR_IDP_ACME__PROD_OKTA_CLIENT_SECRET`, `acme-prod`'s
 * `okta` `ARBOR_IDP_ACME_PROD__OKTA_CLIENT_SECRET`. Each run of underscores says which it is (one, two, or three), so
 * the name spells its path back.
 */
export const secretVariable = (organization: string, path: string) =>
  secretPrefix + `${organization}/${path}`.replace(/[a-z0-9]+|[^a-z0-9]+/g, (run) =>
    /^[a-z0-9]/.test(run)
      ? run.toUpperCase()
      : run === "-"
      ? "_"
      : run === "/"
      ? "__"
      : `___${[...run].map((c) => escapes[c] ?? `X${c.codePointAt(0)!.toString(16).toUpperCase()}X`).join("")}___`) +
  "_CLIENT_SECRET"

/**
 * Reads a client secret where `from` says, in this process: its environment variable, or its file (one trailing
 * newline dropped). For documents this process's operator wrote (`arbor` on a person's or a CI job's machine, the
 * server's `ARBOR_SEED_FILE`); never for a document a request brought.
 */
export const readSecret = (from: SecretFrom, field: string): Effect.Effect<string, InvalidArgument> => {
  if ("env" in from) {
    const value = process.env[from.env]
    return value === undefined || value === ""
      ? InvalidArgument.field(field, `the environment variable ${from.env} is not set`)
      : Effect.succeed(value)
  }
  return Effect.try({
    try: () => readFileSync(from.file, "utf8").replace(/\r?\n$/, ""),
    catch: () => InvalidArgument.field(field, `the file ${from.file} cannot be read`)
  }).pipe(
    Effect.flatMap((secret) =>
      secret === "" ? InvalidArgument.field(field, `the file ${from.file} is empty`) : Effect.succeed(secret)
    )
  )
}

/** The sources of the client secrets a document names, each once, in order; not a document, none. */
export const secretSources = (document: unknown): ReadonlyArray<SecretFrom> => {
  const decoded = Schema.decodeUnknownOption(Document)(document)
  if (decoded._tag === "None") return []
  const sources = new Map<string, SecretFrom>()
  for (const organization of Object.values(decoded.value.organizations)) {
    for (const provider of Object.values(organization.identityProviders ?? {})) {
      if (provider.secretFrom !== undefined) sources.set(sourceOf(provider.secretFrom), provider.secretFrom)
    }
  }
  return [...sources.values()]
}

/** A group mapping of an identity provider: members of `externalGroup` hold `role` at `scope` (a folder path). */
export const MappingSpec = Schema.Struct({
  externalGroup: Schema.String,
  role: Schema.String,
  /** A folder's path below the organization, at or below the provider's; the provider's own when absent. */
  scope: Schema.optional(Schema.String)
})

/** An identity provider (OpenID Connect) where people of the organization sign in, and its group mappings. */
export const IdentityProviderSpec = Schema.Struct({
  description: Schema.optional(Schema.String),
  /** Its folder, as a path below the organization, when the key is its name alone. */
  group: Schema.optional(Schema.String),
  /** The role people signing in get where the provider is (the organization's or a built-in one, by name). */
  defaultRole: Schema.String,
  issuer: Schema.String,
  clientId: Schema.String,
  /** The client secret's source; none for a public client (PKCE without a secret). */
  secretFrom: Schema.optional(SecretFrom),
  additionalScopes: Schema.optional(Schema.Array(Schema.String)),
  pkce: Schema.optional(Schema.Boolean),
  groupsClaim: Schema.optional(Schema.String),
  mappings: Schema.optional(Schema.Array(MappingSpec))
})

/** A subscription: every change of `group` (a folder path; the organization when absent) and below, POSTed to `sink`. */
export const SubscriptionSpec = Schema.Struct({
  sink: Schema.String,
  group: Schema.optional(Schema.String)
})

/** An organization as code. */
export const Organization = Schema.Struct({
  description: Schema.optional(Schema.String),
  folders: Schema.optional(Schema.Record({ key: Schema.String, value: Folder })),
  roles: Schema.optional(Schema.Record({ key: Schema.String, value: RoleSpec })),
  identities: Schema.optional(Schema.Record({ key: Schema.String, value: IdentitySpec })),
  bindings: Schema.optional(Schema.Array(BindingSpec)),
  identityProviders: Schema.optional(Schema.Record({ key: Schema.String, value: IdentityProviderSpec })),
  subscriptions: Schema.optional(Schema.Array(SubscriptionSpec)),
  /** The organization's decision vocabulary (docs/api.md §14): its applications' AuthZEN words. */
  decisions: Schema.optional(DecisionVocabulary.Vocabulary)
})
export type Organization = typeof Organization.Type

/** The document: organizations by name. */
export const Document = Schema.Struct({ organizations: Schema.Record({ key: Schema.String, value: Organization }) })
export type Document = typeof Document.Type

/**
 * How many resources a document may declare at most, over all its organizations: folders, roles, identities,
 * bindings, identity providers with their group mappings, and subscriptions. A larger one is refused before any work.
 */
export const maxResources = 10_000

/**
 * How many resources `input` declares, counted as `maxResources` counts them, from the document as given (before it
 * is decoded, and without recursion, so that no document is too deep to count).
 */
export const resourcesOf = (input: unknown): number => {
  const entries = (value: unknown): ReadonlyArray<unknown> =>
    Array.isArray(value) ? value : typeof value === "object" && value !== null ? Object.values(value) : []
  const field = (value: unknown, name: string): unknown =>
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)[name]
      : undefined
  let count = 0
  for (const organization of entries(field(input, "organizations"))) {
    const folders = [...entries(field(organization, "folders"))]
    for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
      count++
      folders.push(...entries(field(folder, "folders")))
    }
    for (const name of ["roles", "identities", "bindings", "subscriptions"]) {
      count += entries(field(organization, name)).length
    }
    for (const provider of entries(field(organization, "identityProviders"))) {
      count += 1 + entries(field(provider, "mappings")).length
    }
  }
  return count
}

/** The document's JSON Schema (draft-07), for editors and `arbor iac schema`. */
export const jsonSchema = () => JSONSchema.make(Document)
