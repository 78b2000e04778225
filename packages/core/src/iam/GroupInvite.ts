/**
 * Group invites: a one-time or reusable code that, redeemed by an identity, binds it to the invite's role in the
 * invite's group. The code is returned once, by create; only its hash is stored.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "./Capability.js"
import * as Role from "./Role.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("group_invites")

/** An email address, compared case-insensitively. */
export const Email = Schema.String.pipe(
  Schema.filter((s) => s.length <= 254 && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s), {
    message: () => "must be an email address"
  })
)

/** The longest an invite may live. */
export const maxTtl = Duration.days(30)

/** How long an invite lives when no `ttl` is given. */
export const defaultTtl = Duration.days(7)

/** A protobuf duration string (`"604800s"`) of more than zero and at most 30 days. */
export const Ttl = Schema.transformOrFail(
  Schema.String,
  Schema.DurationFromSelf,
  {
    strict: true,
    decode: (s, _, ast) => {
      const match = /^(\d{1,10})(?:\.(\d{1,9}))?s$/.exec(s)
      const millis = match === null ? Number.NaN : Number(match[1]) * 1000 + Number(`0.${match[2] ?? "0"}`) * 1000
      return Number.isFinite(millis) && millis > 0 && millis <= Duration.toMillis(maxTtl)
        ? ParseResult.succeed(Duration.millis(millis))
        : ParseResult.fail(
          new ParseResult.Type(ast, s, "must be a duration in seconds such as \"604800s\", at most 30 days")
        )
    },
    encode: (d) => ParseResult.succeed(`${Duration.toMillis(d) / 1000}s`)
  }
)

/** A group invite as returned; `code` only in the response to create. */
export class GroupInvite extends Schema.Class<GroupInvite>("@arbor/core/GroupInvite")({
  uid: Uid,
  roleUid: Uid,
  role: Schema.Struct({ uid: Uid, name: Schema.String, description: Schema.String }),
  email: Schema.optional(Schema.String),
  expirationTime: Timestamp,
  singleUse: Schema.Boolean,
  keyId: Schema.String,
  code: Schema.optional(Schema.String),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** A group invite as stored: the code's hash, never the code. */
export const Record = Schema.Struct({
  uid: Uid,
  parent: Uid,
  roleUid: Uid,
  email: Schema.NullOr(Schema.String),
  expirationTime: Timestamp,
  singleUse: Schema.Boolean,
  keyId: Schema.String,
  codeHash: Schema.String,
  redeemed: Schema.Boolean,
  /** Whose authority the invite rests on: who created or last changed it; null for the system (docs/api.md §7). */
  grantedBy: Schema.NullOr(Uid),
  createTime: Timestamp,
  updateTime: Timestamp
})
export type Record = typeof Record.Type

/** What a caller gives to create an invite. */
export const CreateGroupInvite = Schema.Struct({
  roleUid: Uid,
  email: Schema.optional(Email),
  ttl: Schema.optional(Ttl),
  singleUse: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type CreateGroupInvite = typeof CreateGroupInvite.Encoded

/** What a caller gives to redeem an invite for itself. */
export const RedeemGroupInvite = Schema.Struct({ code: Schema.String })
export type RedeemGroupInvite = typeof RedeemGroupInvite.Encoded

/** What an update may change: the email and whether the invite is single-use. */
export const UpdateGroupInvite = Schema.Struct({
  email: Schema.optional(Email),
  singleUse: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

/** Fields an update may change. */
export const fields = {
  mutable: ["email", "singleUse"],
  immutable: ["roleUid", "ttl"],
  outputOnly: ["uid", "role", "expirationTime", "keyId", "code", "createTime", "updateTime"]
} as const

/** How group invites are stored. */
export const table: Table = {
  name: "group_invites",
  events: ChangeLog.logged("group_invite", "dev.chainguard.api.iam.group_invite", {
    // The code is a secret, kept only as a hash: neither is logged. The role is embedded, as invites are returned.
    body: (rows, store) =>
      Effect.map(ChangeLog.rowsByUid(store, Role.table, rows.map((row) => row.roleUid)), (roles) =>
        rows.map((row) => {
          const { email, ...rest } = ChangeLog.omitting("codeHash", "redeemed", "grantedBy")(row)
          const role = roles.get(String(row.roleUid))
          return {
            ...rest,
            ...(email === null ? {} : { email }),
            role: role === undefined
              ? { uid: row.roleUid, name: "", description: "" }
              : { uid: role.uid, name: role.name, description: role.description }
          }
        }))
  }),
  columns: {
    roleUid: { type: "text" },
    email: { type: "text", nullable: true },
    expirationTime: { type: "integer" },
    singleUse: { type: "boolean" },
    keyId: { type: "text" },
    codeHash: { type: "text" },
    redeemed: { type: "boolean" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" },
    grantedBy: { type: "text", nullable: true }
  },
  unique: [["keyId"]],
  indexes: [["parent"], ["roleUid"], ["createTime"], ["updateTime"]]
}
