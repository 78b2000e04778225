/**
 * Tags: the tags of a repo, children of it.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { parentOrNull, Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "../iam/Capability.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("tag")

/** An OCI tag name: `^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`. */
export const TagName = Schema.String.pipe(
  Schema.filter((s) => /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/.test(s), {
    message: () => "must match the pattern ^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$",
    identifier: "TagName"
  })
)

/** A content digest: `sha256:` and 64 lowercase hex characters. */
export const Digest = Schema.String.pipe(
  Schema.filter((s) => /^sha256:[0-9a-f]{64}$/.test(s), {
    message: () => "must be sha256: followed by 64 hex characters"
  })
)

/** A tag. */
export class Tag extends Schema.Class<Tag>("@arbor/core/Tag")({
  uid: Uid,
  name: Schema.String,
  digest: Schema.String,
  deprecated: Schema.Boolean,
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** What a caller gives to create (or upsert) a tag; without a digest it gets the synthetic one. */
export const CreateTag = Schema.Struct({
  name: TagName,
  digest: Schema.optional(Digest),
  deprecated: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type CreateTag = typeof CreateTag.Encoded

/** Fields an update may change. */
export const fields = {
  mutable: ["name", "digest", "deprecated"],
  immutable: [],
  outputOnly: ["uid", "createTime", "updateTime"]
} as const

/** How tags are stored. */
export const table: Table = {
  name: "tags",
  // A tag lives in its repo's group.
  events: ChangeLog.logged("tag", "dev.chainguard.api.platform.registry.tag", {
    groupOf: (uid) => parentOrNull(parentOrNull(uid)!)!
  }),
  columns: {
    name: { type: "text" },
    digest: { type: "text" },
    deprecated: { type: "boolean" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [["parent", "name"]],
  indexes: [["parent", "name"], ["parent"], ["name"], ["digest"], ["createTime"], ["updateTime"]]
}
