/**
 * Advisories: vulnerability advisories for the packages of a group, each a history of events (detected, fixed,
 * determined a false positive, ...). Read-only through the API; loaded by the advisory importer.
 */
import type * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import type * as Capability from "../iam/Capability.js"

/** The capability each operation on advisories needs: they are read only (written by the import command). */
export const permissions = { list: "advisories.list" } as const satisfies Capability.Operations

/** The event types, in the order of docs/api.md §2. */
export const eventTypes = [
  "detection",
  "true-positive-determination",
  "fixed",
  "false-positive-determination",
  "analysis-not-planned",
  "fix-not-planned",
  "pending-upstream-fix"
] as const
export const EventType = Schema.Literal(...eventTypes)
export type EventType = typeof EventType.Type

const Note = Schema.Struct({ note: Schema.optional(Schema.String) })

/** A finding by a scanner, by hand, or by a CPE match in the NVD. */
export const Detection = Schema.Struct({
  type: Schema.Literal("scan/v1", "manual", "nvdapi"),
  scan: Schema.optional(Schema.Struct({
    subpackageName: Schema.optional(Schema.String),
    componentId: Schema.optional(Schema.String),
    componentName: Schema.optional(Schema.String),
    componentVersion: Schema.optional(Schema.String),
    componentType: Schema.optional(Schema.String),
    componentLocation: Schema.optional(Schema.String),
    scanner: Schema.optional(Schema.String)
  })),
  nvdapi: Schema.optional(Schema.Struct({ cpeSearched: Schema.String, cpeFound: Schema.String }))
})

/**
 * One event of an advisory: its type, its time (as `time` encodes it), and the data of that type under the
 * type's camelCase name.
 */
export const eventOf = <I>(time: Schema.Schema<DateTime.Utc, I>) =>
  Schema.Union(
    Schema.Struct({ type: Schema.Literal("detection"), time, detection: Detection }),
    Schema.Struct({
      type: Schema.Literal("true-positive-determination"),
      time,
      truePositiveDetermination: Schema.optional(Note)
    }),
    Schema.Struct({
      type: Schema.Literal("fixed"),
      time,
      fixed: Schema.Struct({ fixedVersion: Schema.String })
    }),
    Schema.Struct({
      type: Schema.Literal("false-positive-determination"),
      time,
      falsePositiveDetermination: Schema.Struct({ type: Schema.String, note: Schema.optional(Schema.String) })
    }),
    Schema.Struct({
      type: Schema.Literal("analysis-not-planned"),
      time,
      analysisNotPlanned: Schema.optional(Note)
    }),
    Schema.Struct({ type: Schema.Literal("fix-not-planned"), time, fixNotPlanned: Schema.optional(Note) }),
    Schema.Struct({
      type: Schema.Literal("pending-upstream-fix"),
      time,
      pendingUpstreamFix: Schema.optional(Note)
    })
  )

/** One event of an advisory, its time stored as epoch milliseconds. */
export const Event = eventOf(Timestamp)
export type Event = typeof Event.Type

/** An advisory id: `CGA-` and three groups of four characters of `23456789cfghjmpqrvwx`. */
export const advisoryIdPattern = /^CGA(?:-[23456789cfghjmpqrvwx]{4}){3}$/

/** An advisory. */
export class Advisory extends Schema.Class<Advisory>("@arbor/core/Advisory")({
  uid: Uid,
  advisoryId: Schema.String,
  packageName: Schema.String,
  aliases: Schema.Array(Schema.String),
  events: Schema.Array(Event),
  latestEventType: EventType,
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** An advisory as stored, with the columns its list filters search: event types and folded search text. */
export const Record = Schema.Struct({
  ...Advisory.fields,
  eventTypes: Schema.Array(EventType),
  search: Schema.String
})
export type Record = typeof Record.Type

/** The folded text that `query` searches: package name, advisory id and aliases. */
export const searchText = (a: Pick<Advisory, "advisoryId" | "packageName" | "aliases">): string =>
  [a.packageName, a.advisoryId, ...a.aliases].join("\n").toLowerCase()

/** How advisories are stored. */
export const table: Table = {
  name: "advisories",
  events: ChangeLog.logged("advisory", "dev.chainguard.api.vulnerabilities.advisory", {
    body: ChangeLog.eachRow(ChangeLog.omitting("eventTypes", "search"))
  }),
  columns: {
    advisoryId: { type: "text" },
    packageName: { type: "text" },
    aliases: { type: "json" },
    events: { type: "json" },
    latestEventType: { type: "text" },
    eventTypes: { type: "json" },
    search: { type: "text" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [["parent", "advisoryId"]],
  indexes: [
    ["parent", "advisoryId"],
    ["parent"],
    ["advisoryId"],
    ["packageName"],
    ["latestEventType"],
    ["createTime"],
    ["updateTime"]
  ]
}
