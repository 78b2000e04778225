/**
 * Role bindings: an identity holding a role within a group, and so in every group below it.
 */
import * as Schema from "effect/Schema"
import * as Capability from "./Capability.js"
import * as ChangeLog from "./ChangeLog.js"
import { Timestamp } from "./internal/fields.js"
import * as Versions from "./internal/storage/versions.js"
import type { Table } from "./Store.js"
import { Uid } from "./Uid.js"

/** The capability each operation on role bindings needs (docs/api.md §7). */
export const permissions = Capability.operations("role_bindings")

/** A role binding with its identity, group and role embedded (hydrated). */
export class RoleBinding extends Schema.Class<RoleBinding>("@arbor/core/RoleBinding")({
  uid: Uid,
  identity: Schema.Struct({
    uid: Uid,
    name: Schema.String,
    description: Schema.String,
    subject: Schema.String,
    issuer: Schema.String
  }),
  group: Schema.Struct({ uid: Uid, name: Schema.String, description: Schema.String }),
  role: Schema.Struct({ uid: Uid, name: Schema.String, description: Schema.String }),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** A role binding as stored: references by uid; the group is the parent. */
export const Record = Schema.Struct({
  uid: Uid,
  parent: Uid,
  identityUid: Uid,
  roleUid: Uid,
  createTime: Timestamp,
  updateTime: Timestamp
})
export type Record = typeof Record.Type

/** What a caller gives to create a role binding. */
export const CreateRoleBinding = Schema.Struct({
  identityUid: Uid,
  roleUid: Uid
})
export type CreateRoleBinding = typeof CreateRoleBinding.Encoded

/** Fields an update may change. */
export const fields = {
  mutable: ["identityUid", "roleUid"],
  immutable: [],
  outputOnly: ["uid", "identity", "group", "role", "createTime", "updateTime"]
} as const

/** How role bindings are stored. */
export const table: Table = {
  name: "role_bindings",
  events: ChangeLog.eventTypes("dev.chainguard.api.iam.rolebindings"),
  columns: {
    identityUid: { type: "text" },
    roleUid: { type: "text" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [["parent", "identityUid", "roleUid"]],
  indexes: [["parent"], ["identityUid"], ["roleUid"], ["createTime"], ["updateTime"]],
  versions: [Versions.grants]
}
