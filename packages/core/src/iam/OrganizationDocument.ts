/**
 * The document of IAM as code (docs/api.md §15): organizations by name, each with its folders, custom roles,
 * identities and role bindings, by names and paths, never uids. `Declarative` exports, plans and applies it;
 * `jsonSchema` describes it for editors (`arbor iac schema`), capabilities listed in both spellings.
 */
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as Capability from "./Capability.js"
import * as ClaimMatch from "./ClaimMatch.js"

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
  group: Schema.optional(Schema.String)
})

/** An organization as code. */
export const Organization = Schema.Struct({
  description: Schema.optional(Schema.String),
  folders: Schema.optional(Schema.Record({ key: Schema.String, value: Folder })),
  roles: Schema.optional(Schema.Record({ key: Schema.String, value: RoleSpec })),
  identities: Schema.optional(Schema.Record({ key: Schema.String, value: IdentitySpec })),
  bindings: Schema.optional(Schema.Array(BindingSpec))
})
export type Organization = typeof Organization.Type

/** The document: organizations by name. */
export const Document = Schema.Struct({ organizations: Schema.Record({ key: Schema.String, value: Organization }) })
export type Document = typeof Document.Type

/** The document's JSON Schema (draft-07), for editors and `arbor iac schema`. */
export const jsonSchema = () => JSONSchema.make(Document)
