/**
 * Subscriptions: webhooks that receive, as CloudEvents, every change-log entry of their group and of the groups below
 * it (docs/api.md §12).
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as Capability from "../iam/Capability.js"
import * as ChangeLog from "./ChangeLog.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("subscriptions")

/** How a subscription's deliveries stand, as its readers are shown them (output only). */
export class Health extends Schema.Class<Health>("@arbor/core/Subscription/Health")({
  /** `ACTIVE`: delivering (or nothing to deliver); `FAILING`: its sink fails and is retried; `STOPPED`: see `reason`. */
  state: Schema.Literal("ACTIVE", "FAILING", "STOPPED"),
  /** Why deliveries stopped. */
  reason: Schema.optional(Schema.String),
  /** When an entry was last delivered. */
  lastDeliveredTime: Schema.optional(Timestamp),
  /** Since when the next entry has failed. */
  failingSince: Schema.optional(Timestamp),
  /** Why the last delivery failed. */
  lastError: Schema.optional(Schema.String),
  /** When the failing entry is tried again. */
  nextRetryTime: Schema.optional(Timestamp),
  /** Since when the entry being sent now has waited for its sink's answer; absent when none is in flight. */
  sendingSince: Schema.optional(Timestamp),
  /** Entries waiting to be delivered. */
  pending: Schema.Number
}) {}

/** A subscription: where its group's entries are delivered, who it answers for, and how its deliveries stand. */
export class Subscription extends Schema.Class<Subscription>("@arbor/core/Subscription")({
  uid: Uid,
  sink: Schema.String,
  /**
   * Whose authority its deliveries rest on: the identity that created it (null: the system, or made before creators
   * were recorded). They stop while it no longer holds `subscriptions.create` at the subscription's group.
   */
  createdBy: Schema.NullOr(Uid),
  /** How its deliveries stand, on reads (`Subscriptions.get` and `list`). */
  health: Schema.optional(Health),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** The longest sink accepted. */
export const maxSinkLength = 2048

/** What a caller gives to create a subscription: its sink, an https URL (checked further by the service). */
export const CreateSubscription = Schema.Struct({
  sink: Schema.propertySignature(
    Schema.String.pipe(
      Schema.filter((s) => s.length > 0 && s.length <= maxSinkLength, {
        message: () => `must be an https:// URL of at most ${maxSinkLength} characters`
      })
    )
  ).annotations({ missingMessage: () => "must be an https:// URL" })
})
export type CreateSubscription = typeof CreateSubscription.Encoded

/** Where one subscription's deliveries stand: a row of `deliveriesTable`. */
export const DeliveryState = Schema.Struct({
  /** The subscription's uid. */
  uid: Uid,
  /** The position of the last entry delivered (or passed over); empty before the first. */
  delivered: Schema.String,
  /** The server delivering for it now, until `leaseUntil` (epoch milliseconds). */
  leaseOwner: Schema.NullOr(Schema.String),
  leaseUntil: Schema.Number,
  /** Failed attempts at the next entry, the time of the next one, and since when it has failed. */
  attempts: Schema.Number,
  retryAt: Schema.Number,
  failingSince: Schema.NullOr(Schema.Number),
  /** When an entry was last delivered (epoch milliseconds), and why the last attempt failed. */
  lastDelivered: Schema.NullOr(Schema.Number),
  lastError: Schema.NullOr(Schema.String),
  /** Why deliveries are stopped (its creator's authority ended), or null. */
  stopped: Schema.NullOr(Schema.String),
  /** Since when the entry being sent has waited for its sink's answer (epoch milliseconds), or null. */
  sendingSince: Schema.NullOr(Schema.Number)
})
export type DeliveryState = typeof DeliveryState.Type

/**
 * Where each subscription's deliveries stand (a row per subscription, its uid the subscription's; never logged): the
 * position of the last entry delivered, the server that holds the lease on delivering (until when), and the retries
 * of the next entry.
 */
export const deliveriesTable: Table = {
  name: "subscription_deliveries",
  columns: {
    delivered: { type: "text" },
    leaseOwner: { type: "text", nullable: true },
    leaseUntil: { type: "integer" },
    attempts: { type: "integer" },
    retryAt: { type: "integer" },
    failingSince: { type: "integer", nullable: true },
    lastDelivered: { type: "integer", nullable: true },
    lastError: { type: "text", nullable: true },
    stopped: { type: "text", nullable: true },
    sendingSince: { type: "integer", nullable: true }
  },
  unique: [],
  indexes: []
}

/** How subscriptions are stored. */
export const table: Table = {
  name: "subscriptions",
  events: ChangeLog.logged("subscription", "dev.chainguard.api.events.subscription"),
  columns: {
    sink: { type: "text" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" },
    createdBy: { type: "text", nullable: true }
  },
  unique: [],
  indexes: [["parent"], ["createTime"], ["updateTime"]]
}
