/**
 * Identity providers: upstream OIDC providers whose users log in to a group, receiving its default role.
 */
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { OptionalDescription, RequiredName, Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as ScimCredential from "../provisioning/ScimCredential.js"
import * as Capability from "./Capability.js"
import { IssuerUrl } from "./ClaimMatch.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("identity_providers")

/** The OIDC settings of a provider as returned: the client secret is write-only and never part of it. */
export const Oidc = Schema.Struct({
  issuer: Schema.String,
  clientId: Schema.String,
  additionalScopes: Schema.Array(Schema.String),
  pkceEnabled: Schema.Boolean,
  /** The ID token claim that lists the person's groups at the provider, for group mappings; empty: none read. */
  groupsClaim: Schema.optionalWith(Schema.String, { default: () => "" })
})

/** An identity provider. */
export class IdentityProvider extends Schema.Class<IdentityProvider>("@arbor/core/IdentityProvider")({
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  defaultRole: Uid,
  oidc: Oidc,
  createTime: Timestamp,
  updateTime: Timestamp,
  /** SCIM provisioning's status (output only): on a get, not in a list. */
  scim: Schema.optionalWith(ScimCredential.Status, { exact: true })
}) {}

/**
 * An identity provider as stored, with its client secret and whose authority its default role rests on: who created
 * or last changed it, null for the system (docs/api.md §7).
 */
export const Record = Schema.Struct({
  ...Struct.omit(IdentityProvider.fields, "scim"),
  oidc: Schema.Struct({ ...Oidc.fields, clientSecret: Schema.String }),
  grantedBy: Schema.NullOr(Uid)
})
export type Record = typeof Record.Type

const Text = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.length > 0 && s.length <= max, { message: () => `must be 1 to ${max} characters` })
  )

const Scope = Schema.String.pipe(
  Schema.filter((s) => /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/.test(s), { message: () => "must be an OAuth scope token" })
)

/** What a caller gives to create an identity provider; `oidc.clientSecret` is write-only. */
export const CreateIdentityProvider = Schema.Struct({
  name: RequiredName,
  description: OptionalDescription,
  defaultRole: Uid,
  oidc: Schema.Struct({
    issuer: IssuerUrl,
    clientId: Text(256),
    /** Empty for public clients (PKCE without a secret). */
    clientSecret: Schema.optionalWith(
      Schema.String.pipe(Schema.filter((s) => s.length <= 1024, { message: () => "must be at most 1024 characters" })),
      { default: () => "" }
    ),
    additionalScopes: Schema.optionalWith(
      Schema.Array(Scope).pipe(Schema.filter((a) => a.length <= 32 || "may hold at most 32 scopes")),
      { default: () => [] }
    ),
    pkceEnabled: Schema.optionalWith(Schema.Boolean, { default: () => false }),
    groupsClaim: Schema.optionalWith(
      Schema.String.pipe(
        Schema.filter((s) => /^[\x21-\x7E]{0,128}$/.test(s), {
          message: () => "must be a claim name of at most 128 characters"
        })
      ),
      { default: () => "" }
    )
  })
})
export type CreateIdentityProvider = typeof CreateIdentityProvider.Encoded

/** Fields an update may change. */
export const fields = {
  mutable: ["name", "description", "defaultRole", "oidc"],
  immutable: [],
  outputOnly: ["uid", "createTime", "updateTime", "scim"]
} as const

/** How identity providers are stored. */
export const table: Table = {
  name: "identity_providers",
  events: ChangeLog.logged("identity_provider", "dev.chainguard.api.iam.identity_providers", {
    // The client secret is write-only: never returned, never logged.
    body: ChangeLog.eachRow((row) => ({
      ...ChangeLog.omitting("grantedBy")(row),
      oidc: ChangeLog.without(row.oidc, "clientSecret")
    }))
  }),
  columns: {
    name: { type: "text" },
    description: { type: "text" },
    defaultRole: { type: "text" },
    oidc: { type: "json" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" },
    grantedBy: { type: "text", nullable: true }
  },
  unique: [["parent", "name"]],
  indexes: [["parent", "name"], ["parent"], ["name"], ["defaultRole"], ["createTime"], ["updateTime"]]
}
