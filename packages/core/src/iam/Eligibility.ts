/**
 * Eligibilities (DECISIONS §21; docs/api.md §2): an identity eligible to hold a role at a group for a while, when it
 * asks with a reason (an `Elevation`), and, when the eligibility says so, once an identity holding its approver role
 * there approves. Making one needs what binding the role there needs (no escalation), and it rests on its maker's
 * authority as a group mapping does: when they could no longer bind the role, it gives nothing more, and the
 * elevations it gave end.
 */
import * as Duration from "effect/Duration"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "./Capability.js"

/** The capability each operation needs: a role binding's (an eligibility is a binding held back). */
export const permissions = Capability.operations("role_bindings")

/** The longest an elevation may be: a day. */
export const maxDuration = Duration.hours(24)

/** A protobuf duration string (`"3600s"`) of at least a minute and at most `maxDuration`, as whole seconds. */
export const Seconds = Schema.transformOrFail(Schema.String, Schema.Number, {
  strict: true,
  decode: (s, _, ast) => {
    const match = /^(\d{1,6})s$/.exec(s)
    const seconds = match === null ? Number.NaN : Number(match[1])
    return seconds >= 60 && seconds <= Duration.toSeconds(maxDuration)
      ? ParseResult.succeed(seconds)
      : ParseResult.fail(
        new ParseResult.Type(ast, s, "must be a duration in whole seconds such as \"3600s\", from 60s to 86400s")
      )
  },
  encode: (seconds) => ParseResult.succeed(`${seconds}s`)
})

/** An eligibility; its uid is below the group where the role would be held. */
export class Eligibility extends Schema.Class<Eligibility>("@arbor/core/Eligibility")({
  uid: Uid,
  identityUid: Uid,
  roleUid: Uid,
  /** The longest one elevation may last, in seconds. */
  maxDurationSeconds: Schema.Number,
  /** The role whose holders at the group approve its elevations (not the requester); null: none needed. */
  approverRoleUid: Schema.NullOr(Uid),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** An eligibility as stored: with whose authority it rests on (its maker; null for the system). */
export const Record = Schema.Struct({
  ...Eligibility.fields,
  parent: Uid,
  grantedBy: Schema.NullOr(Uid)
})
export type Record = typeof Record.Type

/** What a caller gives to make an eligibility. */
export const CreateEligibility = Schema.Struct({
  identityUid: Schema.propertySignature(Uid).annotations({ missingMessage: () => "is required" }),
  roleUid: Schema.propertySignature(Uid).annotations({ missingMessage: () => "is required" }),
  maxDuration: Schema.propertySignature(Seconds).annotations({ missingMessage: () => "is required" }),
  approverRoleUid: Schema.optionalWith(Schema.NullOr(Uid), { default: () => null })
})
export type CreateEligibility = typeof CreateEligibility.Encoded

/** How eligibilities are stored: below their group, one per identity and role there. */
export const table: Table = {
  name: "eligibilities",
  events: ChangeLog.logged("eligibility", "dev.chainguard.api.iam.eligibilities", {
    body: ChangeLog.eachRow(ChangeLog.omitting("grantedBy"))
  }),
  columns: {
    identityUid: { type: "text" },
    roleUid: { type: "text" },
    maxDurationSeconds: { type: "integer" },
    approverRoleUid: { type: "text", nullable: true },
    grantedBy: { type: "text", nullable: true },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [["parent", "identityUid", "roleUid"]],
  indexes: [["parent"], ["identityUid"], ["createTime"]],
  // What an elevation gives rests on its eligibility: a change of one changes its holder's grants.
  versions: [Versions.grants]
}
