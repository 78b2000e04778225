/**
 * External group role mappings (docs/api.md §13): a group of an organization's identity provider (a value of the
 * provider's groups claim, or a group its SCIM client pushed) mapped to a role at a group. At each sign-in through
 * that provider, every mapping whose external group is in the person's groups claim gives its role at its group for
 * that session only: the API token names the mappings, and nothing is bound; and while a person is a member of a
 * pushed group the mappings of it give their roles on every token (`ScimGroup`). Mappings are never changed: delete
 * one and create another.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Table } from "../engine/Store.js"
import * as Uids from "../engine/Uid.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import type * as Capability from "./Capability.js"

/**
 * The capability each operation needs (docs/api.md §7): a provider's; creating one needs `role_bindings.create` at
 * its scope and every capability of its role there too.
 */
export const permissions = {
  list: "identity_providers.list",
  create: "identity_providers.create",
  delete: "identity_providers.delete"
} as const satisfies Capability.Operations

/** A mapping; its uid is below its identity provider's. */
export class ExternalGroupRoleMapping
  extends Schema.Class<ExternalGroupRoleMapping>("@arbor/core/ExternalGroupRoleMapping")({
    uid: Uid,
    identityProviderUid: Uid,
    /** A value of the provider's groups claim. */
    externalGroupId: Schema.String,
    roleUid: Uid,
    /** The group where the role applies: the provider's or one below it. */
    scope: Uid,
    createTime: Timestamp
  })
{}

/**
 * A mapping as stored: with whose authority it rests on (its creator; null for the system) and the key that makes
 * it unique below its provider (`keyOf`; one column, as a constraint over the three would have too long a name).
 */
export const Record = Schema.Struct({
  ...ExternalGroupRoleMapping.fields,
  grantedBy: Schema.NullOr(Uid),
  key: Schema.String
})
export type Record = typeof Record.Type

/** What a mapping is unique by below its provider: its external group, role and scope. */
export const keyOf = (
  mapping: { readonly externalGroupId: string; readonly roleUid: string; readonly scope: string }
) => JSON.stringify([mapping.externalGroupId, mapping.roleUid, mapping.scope])

/** What a caller gives to create a mapping: the external group and the role; the scope defaults to the provider's group. */
export const CreateExternalGroupRoleMapping = Schema.Struct({
  externalGroupId: Schema.propertySignature(
    Schema.String.pipe(
      Schema.filter((s) => s.length > 0 && s.length <= 256, { message: () => "must be 1 to 256 characters" })
    )
  ).annotations({ missingMessage: () => "is required" }),
  roleUid: Schema.propertySignature(Uid).annotations({ missingMessage: () => "is required" }),
  scope: Schema.optional(Uid)
})
export type CreateExternalGroupRoleMapping = typeof CreateExternalGroupRoleMapping.Encoded

/** The most mappings one batch delete names. */
export const maxBatch = 100

/** The type of the entries a batch delete writes (BatchDeleteExternalGroupRoleMappings' events annotation). */
export const batchDeletedType = "dev.chainguard.api.iam.external_group_role_mappings.deleted.batch.v1"

/** How mappings are stored: below their provider, one per key (external group, role, scope). */
export const table: Table = {
  name: "external_group_role_mappings",
  events: ChangeLog.logged("external_group_role_mapping", "dev.chainguard.api.iam.external_group_role_mappings", {
    // A mapping's entries are its provider's group's.
    groupOf: (uid) => Uids.unsafeMake(uid.split("/").slice(0, -2).join("/")),
    body: ChangeLog.eachRow(ChangeLog.omitting("grantedBy", "key"))
  }),
  columns: {
    identityProviderUid: { type: "text" },
    externalGroupId: { type: "text" },
    roleUid: { type: "text" },
    scope: { type: "text" },
    grantedBy: { type: "text", nullable: true },
    key: { type: "text" },
    createTime: { type: "integer" }
  },
  unique: [["parent", "key"]],
  indexes: [["parent"], ["createTime"]],
  // Pushed groups' members hold what a mapping gives: a mapping's change changes their grants.
  versions: [Versions.grants]
}
