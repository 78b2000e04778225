/**
 * Typed access to one table: rows are encoded from and decoded into domain values with their schema, and store
 * failures become internal errors. The engine's services read and write only through repositories.
 */
import { CompiledSchema } from "@arbor/schema-compiler"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ChangeLog from "../events/ChangeLog.js"
import type { FailedPrecondition, Internal, Unavailable } from "./Errors.js"
import { internal, storeUnavailable } from "./Errors.js"
import { invariantsOf } from "./internal/invariants.js"
import * as Versions from "./internal/storage/versions.js"
import type { Query, Row, Table, UniqueViolation, Where } from "./Store.js"
import type { StoreError } from "./Store.js"
import { isStoreError, Store } from "./Store.js"
import { parentOrNull } from "./Uid.js"
import type { Uid } from "./Uid.js"

/** Store failures as the engine's errors: UNAVAILABLE when the store cannot be reached now, else INTERNAL. */
export const orInternal = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, StoreError> | Internal | Unavailable, R> =>
  Effect.catchIf(
    effect,
    isStoreError,
    (e): Effect.Effect<never, Internal | Unavailable> =>
      // A lost race the store retries is logged by the store only if it gives up.
      e.unavailable === true
        ? storeUnavailable(e.cause, e.retried !== true, e.retried === true)
        : internal(e.cause, undefined, e.retried !== true)
  ) as Effect.Effect<A, Exclude<E, StoreError> | Internal | Unavailable, R>

/** A table's rows as domain values. */
export interface Repository<A> {
  readonly table: Table
  readonly get: (uid: string) => Effect.Effect<Option.Option<A>, Internal | Unavailable>
  readonly getMany: (uids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>, Internal | Unavailable>
  readonly find: (query: Query) => Effect.Effect<ReadonlyArray<A>, Internal | Unavailable>
  /** Rows as stored, for their sort positions. */
  readonly findRows: (query: Query) => Effect.Effect<ReadonlyArray<Row>, Internal | Unavailable>
  readonly count: (
    query: Where & Partial<Pick<Query, "order" | "after">>
  ) => Effect.Effect<number, Internal | Unavailable>
  /**
   * Writes: each also appends its change-log entries, in the same transaction, for a table the log records, and
   * fails with FailedPrecondition, changing nothing, where it would break one of the engine's invariants.
   */
  readonly insert: (value: A) => Effect.Effect<void, UniqueViolation | Internal | Unavailable | FailedPrecondition>
  /** Inserts `values` as `insert` does each, all or none, in as few statements as the store can. */
  readonly insertMany: (
    values: ReadonlyArray<A>
  ) => Effect.Effect<void, UniqueViolation | Internal | Unavailable | FailedPrecondition>
  readonly update: (value: A) => Effect.Effect<boolean, UniqueViolation | Internal | Unavailable | FailedPrecondition>
  readonly delete: (where: Where) => Effect.Effect<number, Internal | Unavailable | FailedPrecondition>
  /**
   * Replaces a row with no change-log entry: for what is not a change of the resource (when an identity was last
   * seen, a secret sealed again under a new key).
   */
  readonly rewrite: (value: A) => Effect.Effect<boolean, UniqueViolation | Internal | Unavailable>
  readonly decode: (rows: ReadonlyArray<Row>) => Effect.Effect<ReadonlyArray<A>, Internal | Unavailable>
}

/** A schema's row codecs, compiled once per schema however many engines are built (a test suite builds many). */
const codecs = new WeakMap<Schema.Schema.Any, unknown>()
const codecsOf = <A, I>(schema: Schema.Schema<A, I>) => {
  const make = () => {
    const rowsSchema = Schema.Array(schema)
    return {
      decodeRows: Schema.decodeUnknownEither(rowsSchema),
      compiled: CompiledSchema.decoder(rowsSchema),
      encodeOne: Schema.encode(schema),
      encodeCompiled: CompiledSchema.encoder(schema)
    }
  }
  // The value under a schema was made from that very schema, above: its type is this one's.
  const known = codecs.get(schema) as ReturnType<typeof make> | undefined
  if (known !== undefined) return known
  const made = make()
  codecs.set(schema, made)
  return made
}

/** A repository over `table` whose rows are the encoded form of `schema`. */
export const make = <A extends { readonly uid: Uid }, I>(
  table: Table,
  schema: Schema.Schema<A, I>
): Effect.Effect<Repository<A>, never, Store> =>
  Effect.gen(function*() {
    const store = yield* Store
    const versions = table.versions ?? []
    const logged = table.events
    const versionRows = Versions.of(store)
    const guards = invariantsOf(table.name)
    /** A write that is no change of the resource, and in the same transaction the replacement of the version rows. */
    const quietly = <A, E>(write: Effect.Effect<A, E>): Effect.Effect<A, E | StoreError> =>
      versions.length === 0 ?
        write :
        store.transaction(Effect.tap(write, () => Effect.forEach(versions, versionRows.bump, { discard: true })))
    /**
     * A write, and in the same transaction the replacement of the table's version rows, the change-log entries of
     * the rows it changed (`changed`: from its result, or read before it for a delete), and the engine's invariants:
     * each that held before the write for what the write touches (`stored`, and the rows `previous` reads as they
     * were) holds after it, or the write fails with its refusal and changes nothing.
     */
    const written = <A, E>(
      write: Effect.Effect<A, E>,
      log: {
        readonly change: ChangeLog.Change
        readonly changed: (result: A) => ReadonlyArray<Row>
        readonly before?: Effect.Effect<ReadonlyArray<Row>, StoreError>
        readonly previous?: Effect.Effect<ReadonlyArray<Row>, StoreError>
        readonly stored?: ReadonlyArray<Row>
      }
    ): Effect.Effect<A, E | StoreError | FailedPrecondition> => {
      const logging = logged !== undefined
      const guarding = guards.length > 0
      if (versions.length === 0 && !logging && !guarding) return write
      return store.transaction(Effect.gen(function*() {
        const before = log.before === undefined ? [] : yield* log.before
        // Read before an update when an invariant guards it, or when its entry keeps what it changed.
        const previous = (guarding || logging) && log.previous !== undefined ? yield* log.previous : []
        const held = guarding ? yield* holding([...before, ...previous, ...(log.stored ?? [])]) : []
        const result = yield* write
        yield* Effect.forEach(versions, versionRows.bump, { discard: true })
        if (logging) yield* ChangeLog.append(store, logged, log.change, [...before, ...log.changed(result)], previous)
        for (const { invariant, key } of held) {
          if (!(yield* invariant.holds(store, key))) {
            const refusal = invariant.broken(key)
            yield* Effect.logWarning(`a write was refused: ${refusal.message}`).pipe(Effect.annotateLogs({ key }))
            return yield* refusal
          }
        }
        return result
      }))
    }
    /** The invariants a write of `rows` may break that hold now, each with what it holds for. */
    const holding = (rows: ReadonlyArray<Row>) =>
      Effect.filter(
        guards.flatMap((invariant) =>
          [...new Set(invariant.affected(table.name, rows))].map((key) => ({ invariant, key }))
        ),
        ({ invariant, key }) => invariant.holds(store, key)
      )
    const { compiled, decodeRows, encodeCompiled, encodeOne } = codecsOf(schema)
    /**
     * Values decoded before, by the row they were decoded from: a store that hands out the rows it keeps (the
     * in-memory store's rows are immutable) has each decoded once; rows read afresh (SQL) are simply new keys.
     */
    const decoded = new WeakMap<Row, A>()
    const remember = (rows: ReadonlyArray<Row>, values: ReadonlyArray<A>) => {
      for (let i = 0; i < rows.length; i++) decoded.set(rows[i]!, values[i]!)
      return values
    }
    const decodeAfresh = (rows: ReadonlyArray<Row>): Effect.Effect<ReadonlyArray<A>, Internal | Unavailable> => {
      const values = compiled === undefined ? CompiledSchema.failed : compiled(rows)
      return values !== CompiledSchema.failed
        ? Effect.succeed(remember(rows, values))
        : Either.match(decodeRows(rows), {
          onLeft: (cause) => internal(cause, "CORRUPT_ROW"),
          onRight: (values) => Effect.succeed(remember(rows, values))
        })
    }
    const decode = (rows: ReadonlyArray<Row>): Effect.Effect<ReadonlyArray<A>, Internal | Unavailable> => {
      const values: Array<A> = []
      for (const row of rows) {
        const value = decoded.get(row)
        if (value === undefined) return decodeAfresh(rows)
        values.push(value)
      }
      return Effect.succeed(values)
    }
    const asRow = (encoded: unknown, value: A): Row => ({
      ...(encoded as object),
      uid: value.uid,
      parent: parentOrNull(value.uid)
    })
    const encode = (value: A): Effect.Effect<Row, Internal | Unavailable> => {
      const encoded = encodeCompiled === undefined ? CompiledSchema.failed : encodeCompiled(value)
      return encoded !== CompiledSchema.failed
        ? Effect.succeed(asRow(encoded, value))
        : encodeOne(value).pipe(
          Effect.map((encoded) => asRow(encoded, value)),
          Effect.catchAll((cause) => internal(cause))
        )
    }
    return {
      table,
      decode,
      get: (uid) =>
        store.get(table, uid).pipe(
          orInternal,
          Effect.flatMap(Option.match({
            onNone: () => Effect.succeedNone,
            onSome: (row) => Effect.map(decode([row]), (values) => Option.fromNullable(values[0]))
          }))
        ),
      getMany: (uids) =>
        uids.length === 0 ? Effect.succeed([]) : Effect.flatMap(orInternal(store.getMany(table, uids)), decode),
      find: (query) => Effect.flatMap(orInternal(store.find(table, query)), decode),
      findRows: (query) => orInternal(store.find(table, query)),
      count: (query) => orInternal(store.count(table, query)),
      insert: (value) =>
        Effect.flatMap(encode(value), (row) =>
          orInternal(written(store.insert(table, row), { change: "created", changed: () => [row], stored: [row] }))),
      insertMany: (values) =>
        Effect.flatMap(Effect.forEach(values, encode), (rows) =>
          orInternal(
            written(store.insertMany(table, rows), {
              change: "created",
              changed: () =>
                rows,
              stored: rows
            })
          )),
      update: (value) =>
        Effect.flatMap(encode(value), (row) =>
          orInternal(written(store.update(table, row), {
            change: "updated",
            changed: (updated) =>
              updated ? [row] : [],
            previous: Effect.map(store.get(table, row.uid), Option.toArray),
            stored: [row]
          }))),
      rewrite: (value) => Effect.flatMap(encode(value), (row) => orInternal(quietly(store.update(table, row)))),
      delete: (where) =>
        orInternal(written(store.delete(table, where), {
          change: "deleted",
          changed: () => [],
          before: store.find(table, { ...where, order: [{ column: "uid", direction: "asc" }] })
        }))
    }
  })
