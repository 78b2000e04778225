/**
 * Elevations (DECISIONS §21; docs/api.md §2): an identity's request to hold, for a stated reason and a while, the role
 * an eligibility of its allows. Granted, it is an expiring role binding made for it (`bindingUid`), which gives its
 * role only while the elevation stands: its eligibility still there and resting on its maker's authority, and its
 * approver (when it needed one) still holding the approver role. Every step is a change-log entry.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import { Seconds } from "./Eligibility.js"

/**
 * Where an elevation stands: waiting for an approver, granted (until `expireTime`), denied, ended (its time is up), or
 * revoked (its eligibility, or its approver's authority, went before it ended).
 */
export const State = Schema.Literal("PENDING", "ACTIVE", "DENIED", "ENDED", "REVOKED")
export type State = typeof State.Type

/** An elevation; its uid is below its eligibility's group. */
export class Elevation extends Schema.Class<Elevation>("@arbor/core/Elevation")({
  uid: Uid,
  eligibilityUid: Uid,
  identityUid: Uid,
  roleUid: Uid,
  reason: Schema.String,
  durationSeconds: Schema.Number,
  state: State,
  /** Who approved or denied it; null while pending, or when no approval was needed. */
  approverUid: Schema.NullOr(Uid),
  /** The binding it made, while it is granted. */
  bindingUid: Schema.NullOr(Uid),
  /** When what it grants ends. */
  expireTime: Schema.NullOr(Timestamp),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** An elevation as stored. */
export const Record = Schema.Struct({ ...Elevation.fields, parent: Uid })
export type Record = typeof Record.Type

/** Where a stored elevation stands at `now` (epoch milliseconds): a granted one whose time is up has ended. */
export const stateAt = (elevation: Record, now: number): State =>
  elevation.state === "ACTIVE" && elevation.expireTime !== null && now >= elevation.expireTime.epochMillis
    ? "ENDED"
    : elevation.state

/** The longest reason, in characters. */
export const maxReason = 1000

/** What an identity gives to ask for an elevation in a group: the role it is eligible for there, why, how long. */
export const CreateElevation = Schema.Struct({
  roleUid: Schema.propertySignature(Uid).annotations({ missingMessage: () => "is required" }),
  reason: Schema.propertySignature(
    Schema.String.pipe(
      Schema.filter((s) => s.trim().length > 0 && s.length <= maxReason, {
        message: () => `must say why, in 1 to ${maxReason} characters`
      })
    )
  ).annotations({ missingMessage: () => "is required: say why" }),
  duration: Schema.propertySignature(Seconds).annotations({ missingMessage: () => "is required" })
})
export type CreateElevation = typeof CreateElevation.Encoded

/** How elevations are stored: below their eligibility's group. */
export const table: Table = {
  name: "elevations",
  events: ChangeLog.logged("elevation", "dev.chainguard.api.iam.elevations"),
  columns: {
    eligibilityUid: { type: "text" },
    identityUid: { type: "text" },
    roleUid: { type: "text" },
    reason: { type: "text" },
    durationSeconds: { type: "integer" },
    state: { type: "text" },
    approverUid: { type: "text", nullable: true },
    bindingUid: { type: "text", nullable: true },
    expireTime: { type: "integer", nullable: true },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [],
  indexes: [["parent"], ["eligibilityUid"], ["identityUid"], ["state"], ["createTime"]],
  // A granted elevation's state decides whether its binding gives anything.
  versions: [Versions.grants]
}
