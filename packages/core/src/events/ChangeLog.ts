/**
 * The change log (DECISIONS §14): every committed write appends, in its own transaction, an entry per resource it
 * created, updated or deleted, named by a CloudEvent type. The types are the reference protos' (each write method's
 * `chainguard.annotations.events` option); a write the protos name none for is named in the same scheme, and
 * listed in docs/api.md. Each resource declares how it is logged beside its table (`Table.events`); its
 * repository appends the entries, so no path that writes can leave one out.
 *
 * An entry records who made the change (`actor`, from the principal the write ran as, see `attributedTo`), the
 * request it answered (`requestId`, see `withRequestId`), and the resource after the write (before it, for a
 * delete) with its secrets left out.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Change, Fields, Logged, Row, StoreError, StoreService, Table } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import { Act, type Principal } from "../iam/Principal.js"

/** The kinds of resource the log records. */
export const ResourceKind = Schema.Literal(
  "group",
  "identity",
  "role",
  "role_binding",
  "identity_provider",
  "account_association",
  "group_invite",
  "repo",
  "tag",
  "advisory",
  "subscription",
  "terms_acceptance",
  "identity_metadata",
  "repo_readme",
  "group_access_request",
  "external_group_role_mapping",
  "scim_credential",
  "scim_user",
  "scim_group",
  "decision_vocabulary",
  "eligibility",
  "elevation"
)
export type ResourceKind = typeof ResourceKind.Type

/** How a table's writes are logged, what happened and the fields written: declared with the store's tables. */
export type { Change, EventTypes, Fields, Logged } from "../engine/Store.js"

/** A `body` that needs nothing but each row. */
export const eachRow =
  (body: (row: Row) => Fields) => (rows: ReadonlyArray<Row>): Effect.Effect<ReadonlyArray<Fields>> =>
    Effect.succeed(rows.map(body))

/** The rows of `table` with those uids, by uid, in one read. */
export const rowsByUid = (store: StoreService, table: Table, uids: ReadonlyArray<unknown>) =>
  Effect.map(
    store.getMany(table, [...new Set(uids.map(String))]),
    (rows) => new Map(rows.map((row) => [row.uid as string, row]))
  )

/** A table's logging: its kind and the types `<prefix>.created.v1`, `<prefix>.updated.v1`, `<prefix>.deleted.v1`. */
export const logged = (
  kind: ResourceKind,
  prefix: string,
  options: Pick<Logged, "groupOf" | "body"> = {}
): Logged => ({
  kind,
  types: { created: `${prefix}.created.v1`, updated: `${prefix}.updated.v1`, deleted: `${prefix}.deleted.v1` },
  ...options
})

/** A json column's object, or no fields when it holds something else. */
export const fieldsOf = (value: unknown): Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : {}

/** The fields of `value` (a row, a json column's object) but `names`. */
export const without = (value: unknown, ...names: ReadonlyArray<string>): Fields =>
  Object.fromEntries(Object.entries(fieldsOf(value)).filter(([name]) => !names.includes(name)))

/** The row without its `parent` and some of its columns (secrets, internal bookkeeping). */
export const omitting = (...columns: ReadonlyArray<string>) => (row: Row): Fields => without(row, "parent", ...columns)

/** The upstream token behind an exchanged token (its `act` claim): the principal's (`Principal.Act`). */
export { Act } from "../iam/Principal.js"

/** Who made a change: an identity's uid, or `system`; how it signed in, when known. */
export const Actor = Schema.Struct({
  subject: Schema.String,
  act: Schema.optional(Act),
  email: Schema.optional(Schema.String)
})
export type Actor = typeof Actor.Type

/** The actor of the system principal. */
export const systemActor: Actor = { subject: "system" }

/** The actor a principal's writes are attributed to. */
export const actorOf = (principal: Principal): Actor =>
  principal._tag === "System" ? systemActor : {
    subject: principal.uid,
    ...(principal.act === undefined ? {} : { act: principal.act }),
    ...(principal.email === undefined ? {} : { email: principal.email })
  }

/** One entry of the log. */
export class Entry extends Schema.Class<Entry>("@arbor/core/ChangeLog/Entry")({
  /** Unique; the CloudEvent id of its deliveries. */
  id: Schema.String,
  /** Where the entry stands in the log: readers go on from the last position they saw. */
  position: Schema.String,
  /** The CloudEvent type: `dev.chainguard.api.iam.group.created.v1`. */
  type: Schema.String,
  kind: ResourceKind,
  /** The resource's uid. */
  subject: Uid.Uid,
  /** The group the resource lives in; for a group, itself. */
  group: Uid.Uid,
  time: Timestamp,
  actor: Actor,
  /** The request whose answer carried this id (`x-request-id`), when the write answered one. */
  requestId: Schema.optional(Schema.String),
  /** The resource after the write (before it, for a delete), as the engine's class for the kind encodes it. */
  body: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** For an update, the resource before it, as `body` is written (secrets never): what changed is where they differ. */
  before: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}) {}

/** An entry as stored: its uid lies below its group, so the hierarchy filters and visibility apply to it. */
export const Record = Schema.Struct({
  uid: Uid.Uid,
  parent: Uid.Uid,
  id: Schema.String,
  position: Schema.String,
  type: Schema.String,
  kind: ResourceKind,
  subject: Uid.Uid,
  time: Timestamp,
  actorSubject: Schema.String,
  actor: Actor,
  requestId: Schema.NullOr(Schema.String),
  body: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  before: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type Record = typeof Record.Type

/** An entry from its stored record. */
export const fromRecord = (record: Record): Entry =>
  new Entry({
    id: record.id,
    position: record.position,
    type: record.type,
    kind: record.kind,
    subject: record.subject,
    group: record.parent,
    time: record.time,
    actor: record.actor,
    ...(record.requestId === null ? {} : { requestId: record.requestId }),
    body: record.body,
    ...(record.before === null ? {} : { before: record.before })
  }, { disableValidation: true })

/** An entry's columns as stored, those a list's conditions read (`AuditTrail.filters`): for a watch to hold it to them. */
export const columnsOf = (entry: Entry): { readonly [column: string]: unknown } => ({
  parent: entry.group,
  position: entry.position,
  type: entry.type,
  kind: entry.kind,
  subject: entry.subject,
  time: entry.time.epochMillis,
  actorSubject: entry.actor.subject
})

/** How the log is stored. */
export const table: Table = {
  name: "changes",
  columns: {
    id: { type: "text" },
    position: { type: "position" },
    type: { type: "text" },
    kind: { type: "text" },
    subject: { type: "text" },
    time: { type: "integer" },
    actorSubject: { type: "text" },
    actor: { type: "json" },
    requestId: { type: "text", nullable: true },
    body: { type: "json" },
    before: { type: "json", nullable: true }
  },
  unique: [["position"]],
  // Every index costs each write: the log keeps those of its order and of a resource's history; the other filters
  // (type, actor, group) read along the time index.
  indexes: [["time"], ["subject"]]
}

/** How many days the log keeps entries unless configured otherwise (`ARBOR_EVENTS_RETENTION_DAYS`). */
export const defaultRetentionDays = 90

/** The version row (`Versions.table`) holding the position of the newest entry pruned so far. */
const prunedThroughRow = "0000000000000000000000000000000000000002"

/** The position of the newest entry pruned so far, or undefined before the first pruning. */
export const prunedThrough = (store: StoreService): Effect.Effect<string | undefined, StoreError> =>
  Effect.map(Versions.of(store).current(prunedThroughRow), (value) => value === "" ? undefined : value)

/** How many entries one pruning transaction removes at most. */
const pruneBatch = 1_000

/**
 * Removes the entries older than `before` (epoch milliseconds), in transactions of at most 1,000, and records the
 * newest position removed, so that a reader whose cursor lies before it is told entries were pruned instead of
 * silently missing them. Returns how many it removed.
 */
export const prune = (store: StoreService, before: number): Effect.Effect<number, StoreError> =>
  Effect.gen(function*() {
    let removed = 0
    for (;;) {
      const batch = yield* store.transaction(Effect.gen(function*() {
        const rows = yield* store.find(table, {
          conditions: [{ _tag: "Below", column: "time", value: before }],
          order: [{ column: "position", direction: "asc" }, { column: "uid", direction: "asc" }],
          limit: pruneBatch
        })
        if (rows.length === 0) return 0
        yield* store.delete(table, { conditions: [{ _tag: "In", column: "uid", values: rows.map((r) => r.uid) }] })
        const newest = String(rows[rows.length - 1]!.position)
        const previous = yield* prunedThrough(store)
        if (previous === undefined || previous < newest) yield* Versions.of(store).set(prunedThroughRow, newest)
        return rows.length
      }))
      removed += batch
      if (batch < pruneBatch) return removed
    }
  })

/** The principal the current write runs as (set by each operation for the writes it makes). */
const currentActor = FiberRef.unsafeMake<Actor>(systemActor)

/** The request the current write answers. */
const currentRequestId = FiberRef.unsafeMake<string | undefined>(undefined)

/** `effect`, its writes attributed to `principal`. */
export const attributedTo = (principal: Principal) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locally(effect, currentActor, actorOf(principal))

/** `effect`, its writes attributed to `actor`: for writers that are no identity (a provider's SCIM client). */
export const actingAs = (actor: Actor) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locally(effect, currentActor, actor)

/** `effect`, its writes recorded as made answering the request `id`. */
export const withRequestId = (id: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.locally(effect, currentRequestId, id)

/** Event types that replace a kind's own for one change, where a method's write has a type of its own. */
const currentTypes = FiberRef.unsafeMake<
  ReadonlyArray<{ readonly kind: ResourceKind; readonly change: Change; readonly type: string }>
>([])

/**
 * `effect`, its writes' entries of `kind` and `change` typed `type` instead of the kind's own: the type a method's
 * events annotation gives the write as a whole (`BatchCreateRoleBindings`: `…rolebindings.created.batch.v1`).
 */
export const typedAs =
  (kind: ResourceKind, change: Change, type: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.locallyWith(effect, currentTypes, (types) => [{ kind, change, type }, ...types])

/** The group an entry about `uid` of `logged` belongs to. */
const groupOf = (logged: Logged, uid: Uid.Uid): Uid.Uid =>
  logged.groupOf === undefined ? Uid.parentOrNull(uid) ?? uid : logged.groupOf(uid)

const defaultBody = omitting()

/**
 * Appends, in the current transaction, an entry per row of `table` that `change` happened to. Rows are as stored
 * (after the write; before it, for a delete); for an update, `previous` holds the rows before it (by uid), whose
 * bodies the entries keep beside the new ones.
 */
export const append = (
  store: StoreService,
  logged: Logged,
  change: Change,
  rows: ReadonlyArray<Row>,
  previous: ReadonlyArray<Row> = []
): Effect.Effect<void, StoreError> =>
  rows.length === 0 ?
    Effect.void :
    Effect.flatMap(Clock.currentTimeMillis, (time) =>
      Effect.withFiberRuntime((fiber) => {
        const actor = fiber.getFiberRef(currentActor)
        const requestId = fiber.getFiberRef(currentRequestId) ?? null
        const typed = fiber.getFiberRef(currentTypes).find((t) => t.kind === logged.kind && t.change === change)
        const type = typed?.type ?? logged.types[change]
        // The rows before an update, in the order of `rows`: their bodies are written as the new ones are.
        const byUid = new Map(previous.map((row) => [row.uid, row] as const))
        const earlier = rows.flatMap((row) => byUid.get(row.uid) ?? [])
        const earlierAt = new Map(earlier.map((row, i) => [row.uid, i] as const))
        const bodiesOf = (of: ReadonlyArray<Row>) =>
          of.length === 0
            ? Effect.succeed([])
            : logged.body === undefined
            ? Effect.succeed(of.map(defaultBody))
            : logged.body(of, store)
        return Effect.map(
          Effect.all([bodiesOf(rows), bodiesOf(earlier)]),
          ([bodies, befores]) =>
            rows.map((row, i): Row => {
              const subject = row.uid as Uid.Uid
              return {
                uid: Uid.makeChild(groupOf(logged, subject)),
                parent: groupOf(logged, subject),
                id: globalThis.crypto.randomUUID(),
                type,
                kind: logged.kind,
                subject,
                time,
                actorSubject: actor.subject,
                actor,
                requestId,
                body: bodies[i],
                before: befores[earlierAt.get(row.uid) ?? -1] ?? null
              }
            })
        ).pipe(
          Effect.flatMap((entries) => store.insertMany(table, entries)),
          // Entry uids are 64 random bits below their group, and positions the store's own: neither can clash.
          Effect.catchTag("UniqueViolation", (e) => Effect.die(e))
        )
      }))
