/**
 * Groups an identity provider's SCIM client pushes (docs/api.md §13, RFC 7643 §4.2), as Microsoft Entra ID and Okta
 * do: each is one of the provider's external groups, and its members are the provider's users (by their SCIM `id`,
 * their person's identity uid). While a person is a member, the provider's group mappings of that external group (by
 * its `displayName` or its `externalId`) give their roles, on every token of the person; a member removed, or the
 * group deleted, holds them no longer, from the next request on.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"

/** The core schema of a Group resource. */
export const groupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group"

/** The most members a group may have. */
export const maxMembers = 10_000

/** A group's SCIM `id`: the last part of its uid, which is its provider's uid and this (so that a path holds it). */
export const scimIdOf = (group: { readonly uid: string }): string => group.uid.slice(group.uid.lastIndexOf("/") + 1)

/** The uid of provider `provider`'s group whose SCIM `id` is `id`; undefined for an id no group could have. */
export const uidOf = (provider: Uid, id: string): Uid | undefined =>
  /^[0-9a-f]{16}$/.test(id) ? `${provider}/${id}` as Uid : undefined

/** A pushed group. */
export class ScimGroup extends Schema.Class<ScimGroup>("@arbor/core/ScimGroup")({
  /** Below the provider; its last part is the group's SCIM `id` (`scimIdOf`). */
  uid: Uid,
  /** Unique among the provider's groups, case-insensitively; a group mapping's external group may name it. */
  displayName: Schema.String,
  /** The client's own id of the group (Entra's object id), which a group mapping may name too. */
  externalId: Schema.NullOr(Schema.String),
  /** Its members: the identity uids of the provider's users (their SCIM ids), in the order they were added. */
  members: Schema.Array(Uid),
  /** Counts the group's changes: its SCIM `meta.version`. */
  version: Schema.Int,
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** A group as stored: with its `displayName` folded for case-insensitive uniqueness. */
export const Record = Schema.Struct({ ...ScimGroup.fields, displayNameKey: Schema.String })
export type Record = typeof Record.Type

/** `displayName` as compared: case-insensitively, as Entra and Okta match groups by name. */
export const displayNameKeyOf = (displayName: string): string => displayName.normalize("NFC").toLowerCase()

/** The external group ids a group answers to: its `displayName` and its `externalId`. */
export const externalIdsOf = (group: Pick<ScimGroup, "displayName" | "externalId">): ReadonlyArray<string> =>
  group.externalId === null ? [group.displayName] : [group.displayName, group.externalId]

const Text = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.trim().length > 0 && s.length <= max, { message: () => `must be 1 to ${max} characters` })
  )

/** A member as clients send it: the user's SCIM `id` as `value`; `display`, `type` and `$ref` are read and dropped. */
const Member = Schema.Struct({
  value: Schema.propertySignature(Text(256)).annotations({ missingMessage: () => "is required" }),
  display: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  $ref: Schema.optional(Schema.String)
})

/** A group as a client writes it (create, replace, or the result of a PATCH): `displayName` required. */
export const WriteScimGroup = Schema.Struct({
  displayName: Schema.propertySignature(Text(256)).annotations({ missingMessage: () => "is required" }),
  externalId: Schema.optional(Schema.NullOr(Text(256))),
  members: Schema.optionalWith(
    Schema.Array(Member).pipe(
      Schema.filter((members) => members.length <= maxMembers || `may hold at most ${maxMembers} members`)
    ),
    { default: () => [] }
  )
}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
export type WriteScimGroup = typeof WriteScimGroup.Type

/** How groups are stored: below their provider; a change of one changes what its members hold. */
export const table: Table = {
  name: "scim_groups",
  events: ChangeLog.logged("scim_group", "dev.chainguard.api.iam.scim_groups", {
    body: ChangeLog.eachRow(ChangeLog.omitting("displayNameKey"))
  }),
  columns: {
    displayName: { type: "text" },
    displayNameKey: { type: "text" },
    externalId: { type: "text", nullable: true },
    members: { type: "json" },
    version: { type: "integer" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [["parent", "displayNameKey"]],
  indexes: [["parent"]],
  versions: [Versions.grants]
}
