/**
 * Groups: the organization hierarchy. A root group is an organization; every other group (a folder) is the child
 * of another.
 */
import * as Schema from "effect/Schema"
import { OptionalDescription, RequiredName, Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "./Capability.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("groups")

/** A group. */
export class Group extends Schema.Class<Group>("@arbor/core/Group")({
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  verified: Schema.Boolean,
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/**
 * How many levels of folders an organization may hold below it (docs/api.md §1). It bounds every uid: a tag, the
 * deepest resource, is two segments below its group, so no uid is longer than 40 + 17 × (maxDepth + 2) characters.
 */
export const maxDepth = 32

/**
 * What a caller gives to create a group. `verified` is set only by platform admins, on an organization named by a
 * domain (docs/api.md §13).
 */
export const CreateGroup = Schema.Struct({
  name: RequiredName,
  description: OptionalDescription,
  verified: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type CreateGroup = typeof CreateGroup.Encoded

/**
 * Fields an update may change (`verified`: platform admins, on organizations; a whole replacement, `*` and v1's,
 * leaves it as it is); the rest are output only.
 */
export const fields = {
  mutable: ["name", "description", "verified"],
  immutable: [],
  outputOnly: ["uid", "resourceLimits", "createTime", "updateTime"],
  namedOnly: ["verified"]
} as const

/** How groups are stored. */
export const table: Table = {
  name: "groups",
  events: ChangeLog.logged("group", "dev.chainguard.api.iam.group", { groupOf: (uid) => uid }),
  columns: {
    name: { type: "text" },
    description: { type: "text" },
    verified: { type: "boolean" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  roots: true,
  unique: [["parent", "name"]],
  indexes: [["parent", "name"], ["parent"], ["name"], ["createTime"], ["updateTime"]]
}
