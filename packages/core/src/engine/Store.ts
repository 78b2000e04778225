/**
 * The storage port. Adapters (in-memory, SQLite, ...) implement this narrow interface over plain rows; ids,
 * validation, pagination tokens, authorization and hydration all live in the engine, never in an adapter.
 *
 * A list is one `find` (a keyset seek from `after`, then `offset` and `limit`) plus one `count`, so an adapter can
 * serve any page at the same cost.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { operation } from "./internal/tracing.js"
import type { Range, Uid } from "./Uid.js"

/**
 * The type of a column. `json` columns hold any JSON value (objects, arrays). A `position` column is text the adapter
 * fills at insert (the engine never writes it): 40 digits, unique, increasing along the order in which rows become
 * final (see `settledPosition`), never reused, also after deletes. The change log orders its entries by it.
 */
export type ColumnType = "text" | "integer" | "boolean" | "json" | "position"

/** A column: its type and whether it may be null (absent in a row means null). */
export interface Column {
  readonly type: ColumnType
  readonly nullable?: boolean
}

/**
 * A stored kind of resource. Every table has the columns `uid` (text, primary key) and `parent` (text, nullable:
 * the uid of the parent, null at the root). `unique` lists column sets that must be unique together (null counts as
 * a value); `indexes` lists column sets the engine filters or sorts by (the adapter appends `uid`), a unique key's
 * among them when its lists read in the key's order. The SQL stores' schemas are rendered from these descriptors
 * (`@arbor/store-sql`'s `Ddl`).
 */
export interface Table {
  readonly name: string
  readonly columns: Readonly<Record<string, Column>>
  readonly unique: ReadonlyArray<ReadonlyArray<string>>
  readonly indexes: ReadonlyArray<ReadonlyArray<string>>
  /**
   * Some rows have no parent (organizations, built-in roles, people). A unique key over `parent` treats null parents
   * as equal on every table; a store may need to know where they occur (SQLite keys over `ifnull(parent, '')`).
   */
  readonly roots?: boolean
  /** Version rows (`Versions`) that every write to this table replaces, written by the engine, not the adapter. */
  readonly versions?: ReadonlyArray<string>
  /** How the change log records this table's writes, for the tables of the API's resources. */
  readonly events?: Logged
}

/** A resource's fields as JSON. */
export type Fields = { readonly [field: string]: unknown }

/** What happened to the resource. */
export type Change = "created" | "updated" | "deleted"

/** The CloudEvent types of a resource's writes. */
export type EventTypes = { readonly [C in Change]: string }

/** How a table's writes are logged (`ChangeLog.logged` makes one; its kind one of the log's). */
export interface Logged {
  readonly kind: string
  readonly types: EventTypes
  /** The group an entry belongs to: the resource's parent (itself at the root), unless the kind says otherwise. */
  readonly groupOf?: (uid: Uid) => Uid
  /**
   * The entries' bodies from the stored rows, one each, in order: the resource as the engine's class for it encodes
   * it, secrets left out and references hydrated (read for all the rows of a write at once). By default, each row
   * without its `parent`.
   */
  readonly body?: (rows: ReadonlyArray<Row>, store: StoreService) => Effect.Effect<ReadonlyArray<Fields>, StoreError>
}

/** A scalar a column holds or a condition compares with. */
export type Scalar = string | number | boolean | null

/** A stored row: column name to value; json columns hold parsed JSON. */
export type Row = { readonly uid: string; readonly parent: string | null } & { readonly [column: string]: unknown }

/** A condition on one column. */
export type Condition =
  /** The column equals the value (null included). */
  | { readonly _tag: "Equals"; readonly column: string; readonly value: Scalar }
  /** The column equals one of the values; none matches nothing. */
  | { readonly _tag: "In"; readonly column: string; readonly values: ReadonlyArray<Scalar> }
  /** The column is at least the value (null never is). */
  | { readonly _tag: "AtLeast"; readonly column: string; readonly value: string | number }
  /** The column is less than the value (null never is). */
  | { readonly _tag: "Below"; readonly column: string; readonly value: string | number }
  /** The column, a json array of strings, holds at least one of the values. */
  | { readonly _tag: "Overlaps"; readonly column: string; readonly values: ReadonlyArray<string> }
  /** The column, a text, contains the value as a substring (case-sensitive; the engine stores folded text). */
  | { readonly _tag: "Contains"; readonly column: string; readonly value: string }

/**
 * True when `row` meets `condition`: what a condition means, wherever rows are held to one (the in-memory store, a
 * watch of the audit trail); the SQL stores render the same as SQL.
 */
export const matches = (row: { readonly [column: string]: unknown }, condition: Condition): boolean => {
  const v = row[condition.column] ?? null
  switch (condition._tag) {
    case "Equals":
      return compareScalars(v, condition.value) === 0
    case "In":
      return condition.values.some((x) => compareScalars(v, x) === 0)
    case "AtLeast":
      return v !== null && compareScalars(v, condition.value) >= 0
    case "Below":
      return v !== null && compareScalars(v, condition.value) < 0
    case "Overlaps":
      return Array.isArray(v) && v.some((x) => condition.values.includes(x))
    case "Contains":
      return typeof v === "string" && v.includes(condition.value)
  }
}

/** Conditions a row must meet, all of them. */
export interface Where {
  /**
   * The row's uid lies in one of these ranges (sorted and disjoint, as `Uid.normalizeRanges` makes them); an empty
   * array matches nothing; absent matches everything.
   */
  readonly ranges?: ReadonlyArray<Range> | undefined
  readonly conditions?: ReadonlyArray<Condition> | undefined
}

/** One sort key. */
export interface OrderKey {
  readonly column: string
  readonly direction: "asc" | "desc"
}

/** A page request: rows matching `where`, sorted by `order` (whose last key is `uid`), strictly after `after`. */
export interface Query extends Where {
  /** Sort keys; the last is always `uid`, so the order is total. */
  readonly order: ReadonlyArray<OrderKey>
  /** The sort-key values of the last row already seen; rows at or before it are excluded. */
  readonly after?: ReadonlyArray<Scalar> | undefined
  readonly offset?: number | undefined
  /** At most this many rows; absent means all. */
  readonly limit?: number | undefined
}

/** A write broke a unique constraint: `columns` names it (`["uid"]` for the primary key). */
export class UniqueViolation extends Schema.TaggedError<UniqueViolation>()("UniqueViolation", {
  table: Schema.String,
  columns: Schema.Array(Schema.String)
}) {}

/** The store failed (I/O, corruption, a bug); the engine reports it as an internal error. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  cause: Schema.Defect,
  /**
   * The store cannot serve this now (a connection refused or dropped, a locked or unwritable file, a race with
   * concurrent transactions lost past every retry): a retry shortly may work.
   */
  unavailable: Schema.optional(Schema.Boolean),
  /**
   * The transaction lost a race the store retries it for (a serialization failure, a lock): not worth a log line
   * unless the store gives up, which it logs itself.
   */
  retried: Schema.optional(Schema.Boolean)
}) {}

/** True for a UniqueViolation, recognized by its tag (so that two copies of this package agree). */
/** Whether the current fiber's outermost transactions may be acknowledged before they are durable (`lazyCommit`). */
export const lazyCommits: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * `effect`, its outermost transactions acknowledged before the database has made them durable (PostgreSQL's
 * `synchronous_commit = off`; SQLite's commits are never waited for on disk in WAL mode): a crash of the database,
 * not of Arbor, may lose their last moments. Only for records whose loss repeats work (a delivery's progress: its
 * entry is sent again), never for a write a caller is told was made.
 */
export const lazyCommit = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, lazyCommits, true)

/** Whether the current fiber's nested transactions are parts of one whole (`asOneWhole`). */
export const oneWhole: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * `effect`, its nested transactions run without savepoints: for a caller that fails its outermost transaction
 * whenever any part of it fails, so that no part is ever undone alone (an `:apply`, all or nothing). A savepoint
 * costs a part two statements (on PostgreSQL, two round trips); no part of `effect` may recover from a failed
 * write and go on.
 */
export const asOneWhole = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, oneWhole, true)

export const isUniqueViolation = (u: unknown): u is UniqueViolation => Predicate.isTagged(u, "UniqueViolation")

/** True for a StoreError, recognized by its tag. */
export const isStoreError = (u: unknown): u is StoreError => Predicate.isTagged(u, "StoreError")

/** The operations every adapter provides. */
export interface StoreService {
  readonly get: (table: Table, uid: string) => Effect.Effect<Option.Option<Row>, StoreError>
  /** Rows for those uids that exist, in no particular order. */
  readonly getMany: (table: Table, uids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Row>, StoreError>
  readonly find: (table: Table, query: Query) => Effect.Effect<ReadonlyArray<Row>, StoreError>
  /** Rows matching `where`, or, with `order` and `after`, those of them after that position. */
  readonly count: (
    table: Table,
    query: Where & { readonly order?: ReadonlyArray<OrderKey>; readonly after?: ReadonlyArray<Scalar> | undefined }
  ) => Effect.Effect<number, StoreError>
  readonly insert: (table: Table, row: Row) => Effect.Effect<void, UniqueViolation | StoreError>
  /**
   * Inserts `rows`, all or none: one that breaks a unique constraint (with a stored row or with another of `rows`)
   * fails the call, which inserts none of them. Position columns follow the order of `rows`. A store writes them in
   * as few statements as it can (a SQL store, a few hundred rows each).
   */
  readonly insertMany: (table: Table, rows: ReadonlyArray<Row>) => Effect.Effect<void, UniqueViolation | StoreError>
  /** Replaces the row with the same uid; false when there is none. */
  readonly update: (table: Table, row: Row) => Effect.Effect<boolean, UniqueViolation | StoreError>
  /** Deletes the rows matching `where`; returns how many. */
  readonly delete: (table: Table, where: Where) => Effect.Effect<number, StoreError>
  /**
   * Runs `effect` as one transaction: serialized with every other transaction, seeing its own writes, and either
   * fully applied or, on failure or interruption, not at all. A nested call is a savepoint of the outer
   * transaction: when it fails, its own writes are undone and the outer one may recover and go on. Contention
   * (a busy database, a serialization failure) retries the whole outermost transaction, never a savepoint alone.
   * Reads outside any transaction see only committed writes.
   */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /**
   * Inside a transaction, claims `name` until the transaction ends: false, at once, while another running
   * transaction (of any process or server on the same database) holds it. Stores whose transactions run one at a
   * time always answer true.
   */
  readonly claim: (name: string) => Effect.Effect<boolean, StoreError>
  /**
   * The position below which rows of `position` columns are final: no transaction still running can commit a row
   * below it, so a reader that goes on from the last position it read misses none. Undefined when every committed
   * row is final (stores whose writers commit one at a time, in position order). PostgreSQL's writers run
   * concurrently, and one that took position 7 may commit after one that took 8.
   */
  readonly settledPosition: Effect.Effect<string | undefined, StoreError>
  /**
   * A value that stays equal (`===`) between two reads of it only while nothing the reader could see of the store
   * changed: no commit by this process or any other, and no write in the reader's own transaction. Caches keyed by
   * rows the engine reads on every call (the version of the grants) keep a value while it holds, saving the read.
   * Undefined when the store cannot tell more cheaply than by reading the rows: the caller then reads them. Asked
   * synchronously, on every decision, of the asking fiber (whose transaction it sees: `Effect.withFiberRuntime`).
   */
  readonly changeMarker: (fiber: Fiber.RuntimeFiber<unknown, unknown>) => unknown
}

/** The storage port. */
export class Store extends Context.Tag("@arbor/core/Store")<Store, StoreService>() {}

/** A store operation's span: `Store.<operation>`, its table as `db.collection.name`. */
const spanned = <A, E, R>(effect: Effect.Effect<A, E, R>, name: string, table?: Table) =>
  operation(`Store.${name}`, table === undefined ? undefined : { "db.collection.name": table.name })(effect)

/**
 * `store`, each operation a span (`Store.get`, `Store.find`, …) inside the engine operation's span, as every adapter
 * gives its service. Spans are made only when a tracer that exports them is installed (`internal/tracing.ts`).
 */
export const withSpans = (store: StoreService): StoreService => ({
  get: (table, uid) => spanned(store.get(table, uid), "get", table),
  getMany: (table, uids) => spanned(store.getMany(table, uids), "getMany", table),
  find: (table, query) => spanned(store.find(table, query), "find", table),
  count: (table, query) => spanned(store.count(table, query), "count", table),
  insert: (table, row) => spanned(store.insert(table, row), "insert", table),
  insertMany: (table, rows) => spanned(store.insertMany(table, rows), "insertMany", table),
  update: (table, row) => spanned(store.update(table, row), "update", table),
  delete: (table, where) => spanned(store.delete(table, where), "delete", table),
  transaction: (effect) => spanned(store.transaction(effect), "transaction"),
  claim: (name) => spanned(store.claim(name), "claim"),
  settledPosition: spanned(store.settledPosition, "settledPosition"),
  // Asked on every decision and cheaper than any span: never spanned.
  changeMarker: store.changeMarker
})

/**
 * `store` with decisions allowed to be at most `bound` stale (docs/operations.md, "Consistency of decisions"; SpiceDB's
 * `minimize_latency` beside `fully_consistent`): what is written through the returned service (this process's writes)
 * moves the change marker at once, so this process decides on them from its very next decision; anything else
 * (another server on the same PostgreSQL database, another process on the same SQLite file) is seen within `bound`,
 * measured on the fiber's `Clock`. Inside a transaction the marker is `store`'s own, which sees the transaction's
 * writes. Opt-in: without it every decision sees every commit, wherever it was made.
 */
export const withBoundedStaleness = (store: StoreService, bound: Duration.DurationInput): StoreService => {
  const millis = Math.max(1, Duration.toMillis(bound))
  const inTransaction = FiberRef.unsafeMake(false)
  /** Writes finished through this service (committed or not: a spare move costs only a read). */
  let written = 0
  let marker = { written, window: -1 }
  const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.ensuring(effect, Effect.sync(() => written++))
  return {
    ...store,
    insert: (table, row) => counted(store.insert(table, row)),
    insertMany: (table, rows) => counted(store.insertMany(table, rows)),
    update: (table, row) => counted(store.update(table, row)),
    delete: (table, where) => counted(store.delete(table, where)),
    transaction: (effect) => counted(store.transaction(Effect.locally(effect, inTransaction, true))),
    changeMarker: (fiber) => {
      if (fiber.getFiberRef(inTransaction)) return store.changeMarker(fiber)
      const now = Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
      const window = Math.floor(now / millis)
      if (marker.written !== written || marker.window !== window) marker = { written, window }
      return marker
    }
  }
}

/** The `Store` below it, its decisions at most `bound` stale (`withBoundedStaleness`). */
export const layerBoundedStaleness = (bound: Duration.DurationInput): Layer.Layer<Store, never, Store> =>
  Layer.effect(Store, Effect.map(Store, (store) => withBoundedStaleness(store, bound)))

/** A UTF-16 code unit from U+D800 up: where `<` and the order of code points may disagree. */
const highCodeUnit = /[\ud800-\uffff]/

/**
 * Compares two strings by their UTF-8 bytes (the order of code points), as every adapter sorts text: JavaScript's
 * `<` compares UTF-16 code units, which puts characters above U+FFFF before U+E000 to U+FFFF.
 */
export const compareText = (a: string, b: string): number => {
  if (a === b) return 0
  // Without a code unit at or above U+D800 in either, the two orders agree, and `<` is native: a third of the loop's
  // time, the scan for such units included.
  if (!highCodeUnit.test(a) && !highCodeUnit.test(b)) return a < b ? -1 : 1
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) {
      // Surrogates (U+D800 to U+DFFF, halves of code points above U+FFFF) sort after U+E000 to U+FFFF.
      if (x >= 0xd800 && y >= 0xd800) return (x < 0xe000 ? x + 0x2800 : x) < (y < 0xe000 ? y + 0x2800 : y) ? -1 : 1
      return x < y ? -1 : 1
    }
  }
  return a.length < b.length ? -1 : 1
}

/** Compares two scalars in the order every adapter sorts by: null first, then numbers, booleans, strings. */
export const compareScalars = (a: unknown, b: unknown): number => {
  if (a === b) return 0
  if (a === null || a === undefined) return -1
  if (b === null || b === undefined) return 1
  if (typeof a === "boolean" || typeof b === "boolean") return Number(a) - Number(b)
  if (typeof a === "string" && typeof b === "string") return compareText(a, b)
  return (a as string | number) < (b as string | number) ? -1 : 1
}
