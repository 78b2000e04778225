/**
 * Role bindings: an identity holding a role within a group, and so in every group below it; from `startTime` and
 * until `expireTime` when it has them (DECISIONS §21): outside that window it grants nothing, on every path, with no
 * write when it ends.
 */
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Timestamp, TimestampInput } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "./Capability.js"
import * as Condition from "./Condition.js"
import * as Group from "./Group.js"
import * as Identity from "./Identity.js"
import * as Role from "./Role.js"

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
  /** When it starts to grant; null: from its creation (and in change-log entries older than windows). */
  startTime: Schema.optional(Schema.NullOr(Timestamp)).pipe(Schema.withDecodingDefault(() => null)),
  /** When it stops granting; null: never. */
  expireTime: Schema.optional(Schema.NullOr(Timestamp)).pipe(Schema.withDecodingDefault(() => null)),
  /** Where it grants: only where this holds (DECISIONS §21); null: everywhere in its group. */
  condition: Schema.optional(Schema.NullOr(Condition.Condition)).pipe(Schema.withDecodingDefault(() => null)),
  /**
   * The elevation that made it (DECISIONS §21): it grants only while that stands, and changes only through it; null
   * for every other binding.
   */
  elevationUid: Schema.optional(Schema.NullOr(Uid)).pipe(Schema.withDecodingDefault(() => null)),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** Where a binding stands at `now` (epoch milliseconds): before its window, in it, or after it. */
export const stateAt = (
  binding: { readonly startTime: DateTime.Utc | null; readonly expireTime: DateTime.Utc | null },
  now: number
): "PENDING" | "ACTIVE" | "ENDED" =>
  binding.expireTime !== null && now >= binding.expireTime.epochMillis
    ? "ENDED"
    : binding.startTime !== null && now < binding.startTime.epochMillis
    ? "PENDING"
    : "ACTIVE"

/** A role binding as stored: references by uid; the group is the parent. */
export const Record = Schema.Struct({
  uid: Uid,
  parent: Uid,
  identityUid: Uid,
  roleUid: Uid,
  startTime: Schema.NullOr(Timestamp),
  expireTime: Schema.NullOr(Timestamp),
  condition: Schema.NullOr(Condition.Condition),
  /** The elevation that made it (`Elevation`): it grants only while that stands. */
  elevationUid: Schema.NullOr(Uid),
  /** When its end was logged (the one change-log entry of its end); null until then. */
  endedTime: Schema.NullOr(Timestamp),
  createTime: Timestamp,
  updateTime: Timestamp
})
export type Record = typeof Record.Type

/** What a caller gives to create a role binding: with a window (RFC 3339 times), it grants only within it. */
export const CreateRoleBinding = Schema.Struct({
  identityUid: Uid,
  roleUid: Uid,
  startTime: Schema.optionalWith(Schema.NullOr(TimestampInput), { default: () => null }),
  expireTime: Schema.optionalWith(Schema.NullOr(TimestampInput), { default: () => null }),
  condition: Schema.optionalWith(Schema.NullOr(Condition.Checked), { default: () => null })
}).pipe(
  Schema.filter((binding) =>
    binding.startTime === null || binding.expireTime === null ||
    binding.startTime.epochMillis < binding.expireTime.epochMillis ||
    { path: ["expireTime"], message: "must be after startTime" }
  )
)
export type CreateRoleBinding = typeof CreateRoleBinding.Encoded

/** The most bindings one `BatchCreateRoleBindings` makes. */
export const maxBatch = 25

/**
 * The body of `BatchCreateRoleBindings`: bindings in one group, made all or none. A request's `parent` is the
 * batch's or empty; its role is its own `roleUid` or the batch's, which it may omit but not contradict.
 */
export const BatchCreateRoleBindings = Schema.Struct({
  parent: Schema.optional(Schema.String),
  requests: Schema.Array(Schema.Struct({
    parent: Schema.optional(Schema.String),
    roleBinding: Schema.Struct({
      identityUid: Uid,
      roleUid: Schema.optional(Uid),
      startTime: Schema.optionalWith(Schema.NullOr(TimestampInput), { default: () => null }),
      expireTime: Schema.optionalWith(Schema.NullOr(TimestampInput), { default: () => null }),
      condition: Schema.optionalWith(Schema.NullOr(Condition.Checked), { default: () => null })
    })
  })).pipe(Schema.minItems(1), Schema.maxItems(maxBatch)),
  roleUid: Schema.optional(Uid)
})
export type BatchCreateRoleBindings = typeof BatchCreateRoleBindings.Encoded

/** Event type of a binding's end: logged once, by whichever server sees it first (Arbor's own). */
export const endedType = "dev.chainguard.api.iam.rolebindings.ended.v1"

/** Event type of the bindings a batch creates (the method's own, in the reference protos). */
export const batchCreatedType = "dev.chainguard.api.iam.rolebindings.created.batch.v1"

/** Fields an update may change. */
export const fields = {
  mutable: ["identityUid", "roleUid", "startTime", "expireTime", "condition"],
  immutable: [],
  outputOnly: ["uid", "identity", "group", "role", "state", "createTime", "updateTime"]
} as const

/** How role bindings are stored. */
export const table: Table = {
  name: "role_bindings",
  events: ChangeLog.logged("role_binding", "dev.chainguard.api.iam.rolebindings", {
    // The identity, group and role as they were when the binding was written (DECISIONS §20: history is not
    // rewritten when one is deleted or renamed later); each reader sees of them only what it may read where they
    // live (`internal/embedding`), the uid alone elsewhere.
    body: (rows, store) =>
      Effect.map(
        Effect.all([
          ChangeLog.rowsByUid(store, Identity.table, rows.map((row) => row.identityUid)),
          ChangeLog.rowsByUid(store, Group.table, rows.map((row) => row.parent)),
          ChangeLog.rowsByUid(store, Role.table, rows.map((row) => row.roleUid))
        ]),
        ([identities, groups, roles]) =>
          rows.map((row) => {
            const identity = identities.get(String(row.identityUid))
            const group = groups.get(String(row.parent))
            const builtIn = Role.builtIns.find((role) => role.uid === row.roleUid)
            const role = roles.get(String(row.roleUid)) ??
              (builtIn === undefined ? undefined : { name: builtIn.name, description: builtIn.description })
            const text = (found: { readonly [column: string]: unknown } | undefined, column: string) =>
              String(found?.[column] ?? "")
            const claims: ChangeLog.Fields = identity === undefined
              ? {}
              : { ...ChangeLog.fieldsOf(identity.staticKeys), ...ChangeLog.fieldsOf(identity.claimMatch) }
            return {
              uid: row.uid,
              identity: {
                uid: row.identityUid,
                name: text(identity, "name"),
                description: text(identity, "description"),
                subject: typeof claims.subject === "string" ? claims.subject : "",
                issuer: typeof claims.issuer === "string" ? claims.issuer : ""
              },
              group: { uid: row.parent, name: text(group, "name"), description: text(group, "description") },
              role: { uid: row.roleUid, name: text(role, "name"), description: text(role, "description") },
              startTime: row.startTime ?? null,
              expireTime: row.expireTime ?? null,
              condition: row.condition ?? null,
              createTime: row.createTime,
              updateTime: row.updateTime
            }
          })
      )
  }),
  columns: {
    identityUid: { type: "text" },
    roleUid: { type: "text" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" },
    // Added by a migration, so after the others.
    startTime: { type: "integer", nullable: true },
    expireTime: { type: "integer", nullable: true },
    endedTime: { type: "integer", nullable: true },
    condition: { type: "json", nullable: true },
    elevationUid: { type: "text", nullable: true }
  },
  unique: [["parent", "identityUid", "roleUid"]],
  indexes: [["parent"], ["identityUid"], ["roleUid"], ["createTime"], ["updateTime"], ["expireTime"]],
  versions: [Versions.grants]
}
