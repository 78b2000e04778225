/**
 * The storage port over `@effect/sql`: every list is one keyset query plus one count, visibility arrives as uid
 * ranges on the primary key, and every statement is built from portable fragments and a `Dialect`.
 */
import { Store } from "@arbor/core"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import type { Dialect } from "./Dialect.js"
import { constraintColumns, snake } from "./Dialect.js"

type Row = Store.Row
type Table = Store.Table
type Query = Store.Query
type Where = Store.Where
type OrderKey = Store.OrderKey
type Scalar = Store.Scalar
type Range = { readonly from: string; readonly to: string }

/** How many uids one `IN` list carries at most. */
const chunkSize = 500

/**
 * How many values one multi-row `INSERT` binds at most (SQLite allows 32,766, PostgreSQL 65,535): a few hundred rows,
 * so that one statement of SQLite, which runs on the server's thread, holds it for a few milliseconds.
 */
const insertParameters = 2_000

type CountQuery = Where & {
  readonly order?: ReadonlyArray<OrderKey>
  readonly after?: ReadonlyArray<Scalar> | undefined
}

/** The SQL store: the port, and the statements its lists run (for query-plan checks). */
export interface SqlStoreService extends Store.StoreService {
  readonly statements: {
    readonly find: (table: Table, query: Query) => Statement.Statement<Record<string, unknown>>
    readonly count: (table: Table, query: CountQuery) => Statement.Statement<{ n: number | bigint }>
  }
}

/**
 * Runs a read at once, outside any transaction, on a connection of its own that sees only committed data (SQLite's
 * WAL lets one such reader run beside the writer); it throws the driver's error.
 */
export type Reader = (sql: string, params: ReadonlyArray<unknown>) => ReadonlyArray<Record<string, unknown>>

/** How the store runs its statements. */
export interface Options {
  /**
   * Where reads outside a transaction run, skipping the client's per-statement span and connection lock (for
   * SQLite, where those cost several times the statement); reads inside a transaction always run on its connection.
   */
  readonly reader?: Reader | undefined
  /**
   * A value that changes whenever any connection but the reader's commits (SQLite's `PRAGMA data_version` on the
   * reader's connection; the store's own writer is such a connection), read at once: the store's `changeMarker`
   * outside a transaction. Without it the store cannot tell.
   */
  readonly changeMarker?: (() => unknown) | undefined
}

/** The SQL store, beside the port it serves. */
export class SqlStore extends Context.Tag("@arbor/store-sql/SqlStore")<SqlStore, SqlStoreService>() {}

/** Makes the storage port over the ambient `SqlClient`. */
export const make = (
  dialect: Dialect,
  options: Options = {}
): Effect.Effect<SqlStoreService, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reader = options.reader
    const marker = options.changeMarker
    /** A read: on the reader when there is one and no transaction is open, else through the client. */
    const read = <A extends object>(statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError> =>
      reader === undefined ? statement : Effect.withFiberRuntime((fiber) => {
        if (Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)._tag === "Some") return statement
        try {
          const [text, params] = statement.compile()
          return Effect.succeed(reader(text, params) as ReadonlyArray<A>)
        } catch (cause) {
          return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
        }
      })
    const column = (name: string) => sql(snake(name))
    type Column = { readonly name: string; readonly stored: string; readonly type: Store.ColumnType }
    type Columns = { readonly list: ReadonlyArray<Column>; readonly byName: ReadonlyMap<string, Column> }
    const columnsByTable = new Map<string, Columns>()
    const columnsOf = (table: Table) => {
      let columns = columnsByTable.get(table.name)
      if (columns === undefined) {
        const list = Object.entries(table.columns).map(([name, c]) => ({ name, stored: snake(name), type: c.type }))
        columns = { list, byName: new Map(list.map((c) => [c.name, c])) }
        columnsByTable.set(table.name, columns)
      }
      return columns
    }

    const encodeValue = (table: Table, name: string, value: unknown): unknown => {
      if (value === null || value === undefined) return null
      switch (columnsOf(table).byName.get(name)?.type) {
        case "boolean":
          return dialect.encodeBoolean(value as boolean)
        case "json":
          return dialect.encodeJson(value)
        default:
          return typeof value === "boolean" ? dialect.encodeBoolean(value) : value
      }
    }

    const encodeRow = (table: Table, row: Row): Record<string, unknown> => {
      const out: Record<string, unknown> = { uid: row.uid, parent: row.parent ?? null }
      for (const c of columnsOf(table).list) {
        // The database fills position columns (each dialect's schema gives the column its default).
        if (c.type !== "position") out[c.stored] = encodeValue(table, c.name, row[c.name])
      }
      return out
    }

    const decodeRow = (table: Table) => (raw: Record<string, unknown>): Row => {
      const out: Record<string, unknown> = { uid: raw.uid, parent: raw.parent ?? null }
      for (const c of columnsOf(table).list) {
        const value = raw[c.stored]
        out[c.name] = value === null || value === undefined
          ? null
          : c.type === "boolean"
          ? dialect.decodeBoolean(value)
          : c.type === "json"
          ? dialect.decodeJson(value)
          : c.type === "integer"
          ? Number(value)
          : value
      }
      return out as Row
    }

    /** An OR of many clauses as a balanced tree, so thousands of ranges stay within the parser's depth limit. */
    const anyOf = (clauses: ReadonlyArray<Statement.Fragment>): Statement.Fragment =>
      clauses.length <= 16
        ? sql.or(clauses)
        : sql.or([anyOf(clauses.slice(0, clauses.length >> 1)), anyOf(clauses.slice(clauses.length >> 1))])

    const never = sql.literal("1 = 0")

    const condition = (table: Table, c: Store.Condition): Statement.Fragment => {
      switch (c._tag) {
        case "Equals":
          return c.value === null
            ? sql`${column(c.column)} IS NULL`
            : sql`${column(c.column)} = ${encodeValue(table, c.column, c.value)}`
        case "In":
          return c.values.length === 0
            ? never
            : sql`${column(c.column)} IN ${sql.in(c.values.map((v) => encodeValue(table, c.column, v)))}`
        case "AtLeast":
          return sql`${column(c.column)} >= ${c.value}`
        case "Below":
          return sql`${column(c.column)} < ${c.value}`
        case "Overlaps":
          return c.values.length === 0 ? never : dialect.overlaps(sql, snake(c.column), c.values)
        case "Contains":
          return dialect.contains(sql, snake(c.column), c.value)
      }
    }

    /** Rows strictly after `after` in `order`: a row-value comparison when every key runs one way. */
    const afterPosition = (
      table: Table,
      order: ReadonlyArray<OrderKey>,
      after: ReadonlyArray<Scalar>
    ): Statement.Fragment => {
      const values = after.map((v, i) => encodeValue(table, order[i]!.column, v))
      const direction = order[0]!.direction
      if (order.every((k) => k.direction === direction) && values.every((v) => v !== null)) {
        const op = sql.literal(direction === "asc" ? ">" : "<")
        return sql`(${sql.csv(order.map((k) => sql`${column(k.column)}`))}) ${op} (${
          sql.csv(values.map((v) => sql`${v}`))
        })`
      }
      // Nulls sort first: "after null" ascending is "not null", "after x" descending includes nulls.
      const beyond = (k: OrderKey, v: unknown) =>
        k.direction === "asc"
          ? v === null ? sql`${column(k.column)} IS NOT NULL` : sql`${column(k.column)} > ${v}`
          : v === null
          ? never
          : sql`(${column(k.column)} < ${v} OR ${column(k.column)} IS NULL)`
      const equal = (k: OrderKey, v: unknown) =>
        v === null ? sql`${column(k.column)} IS NULL` : sql`${column(k.column)} = ${v}`
      return sql.or(
        order.map((k, i) => sql.and([...order.slice(0, i).map((p, j) => equal(p, values[j])), beyond(k, values[i])]))
      )
    }

    const whereClause = (
      table: Table,
      where: Where,
      order?: ReadonlyArray<OrderKey>,
      after?: ReadonlyArray<Scalar>
    ) => {
      const clauses: Array<Statement.Fragment> = []
      if (where.ranges !== undefined) {
        clauses.push(
          where.ranges.length === 0
            ? never
            : anyOf(where.ranges.map((r) => sql`(${column("uid")} >= ${r.from} AND ${column("uid")} < ${r.to})`))
        )
      }
      for (const c of where.conditions ?? []) clauses.push(condition(table, c))
      if (order !== undefined && after !== undefined) clauses.push(afterPosition(table, order, after))
      // No `WHERE 1 = 1`: SQLite then tests every row, where a bare `count(*)` counts the b-tree's pages (7x faster).
      return clauses.length === 0 ? sql.literal("") : sql`WHERE ${sql.and(clauses)}`
    }

    const orderClause = (order: ReadonlyArray<OrderKey>) =>
      sql.csv(order.map((k) => sql`${column(k.column)} ${sql.literal(k.direction === "asc" ? "ASC" : "DESC")}`))

    /** Failures of the database as the port's errors: unique violations typed, the rest a StoreError. */
    const failure = (table: Table) => (error: unknown): Store.UniqueViolation | Store.StoreError => {
      const cause = (error as { cause?: unknown }).cause ?? error
      const constraint = dialect.uniqueViolation(cause)
      const columns = constraint === undefined ? undefined : constraintColumns(table, constraint)
      return columns === undefined ? storeError(error) : new Store.UniqueViolation({ table: table.name, columns })
    }
    /**
     * A failure of the database as the port's error, saying whether the database could not be reached now: down, or
     * (past every retry) a race with concurrent transactions still lost, which a caller may retry shortly as well.
     */
    const storeError = (error: unknown) => {
      const retried = isRetryable(error)
      return new Store.StoreError({
        cause: error,
        unavailable: retried || dialect.isUnavailable(error) ||
          dialect.isUnavailable((error as { cause?: unknown }).cause),
        retried
      })
    }
    /** A transaction's failure: the database's own as a StoreError, the transaction body's as it is. */
    const asStoreError = <E>(e: E | SqlError | Store.StoreError): E | Store.StoreError =>
      Predicate.isTagged(e, "SqlError") ? storeError(e) : e as E | Store.StoreError

    /** The statement of a page: one keyset query. */
    const findStatement = (table: Table, query: Query) =>
      sql<Record<string, unknown>>`SELECT * FROM ${sql(table.name)} ${
        whereClause(table, query, query.order, query.after)
      } ORDER BY ${orderClause(query.order)} ${dialect.limitOffset(sql, query.limit, query.offset ?? 0)}`

    /**
     * A page in uid order over several ranges: one seek per range, in order, until the page is full, so no range's
     * rows are sorted or read beyond the page (an OR of ranges would read and sort every visible row). Skipped
     * rows are counted range by range.
     */
    const findAcrossRanges = (table: Table, query: Query, ranges: ReadonlyArray<Range>) =>
      Effect.gen(function*() {
        const desc = query.order[0]!.direction === "desc"
        const after = query.after?.[0] as string | undefined
        const ordered = (desc ? [...ranges].reverse() : ranges).filter((r) =>
          after === undefined || (desc ? r.from < after : r.to > after)
        )
        const rows: Array<Record<string, unknown>> = []
        let offset = query.offset ?? 0
        let remaining = query.limit ?? Number.POSITIVE_INFINITY
        for (const range of ordered) {
          if (remaining <= 0) break
          const within: Query = {
            ...query,
            ranges: [range],
            offset,
            limit: Number.isFinite(remaining) ? remaining : undefined
          }
          if (offset > 0) {
            const [counted] = yield* read(countStatement(table, within))
            const n = Number(counted?.n ?? 0)
            if (n <= offset) {
              offset -= n
              continue
            }
          }
          const found = yield* read(findStatement(table, within))
          rows.push(...found)
          remaining -= found.length
          offset = 0
        }
        return rows
      })

    const findRows = (table: Table, query: Query): Effect.Effect<ReadonlyArray<Record<string, unknown>>, SqlError> =>
      query.ranges !== undefined && query.ranges.length > 1 && query.order.length === 1
        ? findAcrossRanges(table, query, query.ranges)
        : read(findStatement(table, query))

    /** The statement of a count. */
    const countStatement = (table: Table, query: CountQuery) =>
      sql<{ n: number | bigint }>`SELECT count(*) AS n FROM ${sql(table.name)} ${
        whereClause(table, query, query.order, query.after)
      }`

    /** True when `error` or an error it was caused by says so. */
    const saysAnywhere = (error: unknown, says: (cause: unknown) => boolean): boolean => {
      for (let e: unknown = error; typeof e === "object" && e !== null; e = (e as { cause?: unknown }).cause) {
        if (says(e)) return true
      }
      return false
    }
    const isRetryable = (error: unknown): boolean => saysAnywhere(error, dialect.isRetryable)

    /**
     * `effect` inside a savepoint of the open transaction: released when it succeeds, rolled back to and released when
     * it fails. (`@effect/sql`'s nested transactions never release theirs: on SQLite every open savepoint makes each
     * later write dearer, so a transaction of many writes, an `:apply`, grew quadratically.)
     */
    const savepoint = <A, E, R>(
      [connection, depth]: readonly [SqlConnection.Connection, number],
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A, E | SqlError, R> => {
      const name = `arbor_${depth + 1}`
      const run = (statement: string) => sql.unsafe(statement).pipe(Effect.asVoid)
      return Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(
          run(`SAVEPOINT ${name}`),
          Effect.exit(restore(Effect.provideService(effect, SqlClient.TransactionConnection, [connection, depth + 1])))
        ).pipe(
          Effect.flatMap((exit) =>
            Effect.zipRight(
              Exit.isSuccess(exit)
                ? run(`RELEASE SAVEPOINT ${name}`)
                : Effect.zipRight(run(`ROLLBACK TO SAVEPOINT ${name}`), run(`RELEASE SAVEPOINT ${name}`)),
              exit
            )
          )
        )
      )
    }

    /** What an outermost transaction runs first: its isolation level, and whether its commit may be lazy. */
    const begin = Effect.flatMap(FiberRef.get(Store.lazyCommits), (lazy) =>
      Effect.all([
        dialect.beginTransaction?.(sql) ?? Effect.void,
        lazy && dialect.lazyCommit !== undefined ? dialect.lazyCommit(sql) : Effect.void
      ], { discard: true }))

    const service: Store.StoreService = {
      get: (table, uid) =>
        read(sql<Record<string, unknown>>`SELECT * FROM ${sql(table.name)} WHERE uid = ${uid}`).pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), decodeRow(table))),
          Effect.mapError(storeError)
        ),
      getMany: (table, uids) =>
        Effect.forEach(
          Array.from(
            { length: Math.ceil(uids.length / chunkSize) },
            (_, i) => uids.slice(i * chunkSize, (i + 1) * chunkSize)
          ),
          (chunk) => read(sql<Record<string, unknown>>`SELECT * FROM ${sql(table.name)} WHERE uid IN ${sql.in(chunk)}`)
        ).pipe(Effect.map((chunks) => chunks.flat().map(decodeRow(table))), Effect.mapError(storeError)),
      find: (table, query) =>
        findRows(table, query).pipe(Effect.map((rows) => rows.map(decodeRow(table))), Effect.mapError(storeError)),
      count: (table, query) =>
        read(countStatement(table, query)).pipe(
          Effect.map((rows) => Number(rows[0]?.n ?? 0)),
          Effect.mapError(storeError)
        ),
      insert: (table, row) =>
        sql`INSERT INTO ${sql(table.name)} ${sql.insert(encodeRow(table, row))}`.pipe(
          Effect.asVoid,
          Effect.mapError(failure(table))
        ),
      insertMany: (table, rows) => {
        if (rows.length === 0) return Effect.void
        const perStatement = Math.max(1, Math.floor(insertParameters / (columnsOf(table).list.length + 2)))
        const statements = Effect.forEach(
          Array.from(
            { length: Math.ceil(rows.length / perStatement) },
            (_, i) => rows.slice(i * perStatement, (i + 1) * perStatement)
          ),
          // A yield before each statement but the first: a turn for the event loop when one is due (`Fairness`),
          // between statements of SQLite, which run on the server's thread; none for the one statement of most calls
          // (every write's change-log entry). (A yield at a point of our own: one between a library's steps could let
          // an event it awaits pass unheard.)
          (chunk, i) => {
            const statement = sql`INSERT INTO ${sql(table.name)} ${
              sql.insert(chunk.map((row) => encodeRow(table, row)))
            }`
            return i === 0 ? statement : Effect.zipRight(Effect.yieldNow(), statement)
          },
          { discard: true }
        ).pipe(Effect.mapError(failure(table)))
        // Several statements: all or none, as one.
        return rows.length <= perStatement ? statements : service.transaction(statements)
      },
      update: (table, row) => {
        const { uid, ...values } = encodeRow(table, row)
        return sql`UPDATE ${sql(table.name)} SET ${sql.update(values)} WHERE uid = ${uid} RETURNING uid`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(failure(table))
        )
      },
      delete: (table, where) =>
        sql`DELETE FROM ${sql(table.name)} ${whereClause(table, where)} RETURNING uid`.pipe(
          Effect.map((rows) => rows.length),
          Effect.mapError(storeError)
        ),
      // A nested call is a savepoint; only the outermost transaction retries, so a retry always starts afresh.
      transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.flatMap(
          Effect.serviceOption(SqlClient.TransactionConnection),
          (outer) =>
            Option.isSome(outer)
              ? Effect.flatMap(
                FiberRef.get(Store.oneWhole),
                (whole) => Effect.mapError(whole ? effect : savepoint(outer.value, effect), (e) => asStoreError<E>(e))
              )
              : sql.withTransaction(Effect.zipRight(begin, effect)).pipe(
                // `@effect/sql` turns a failed COMMIT or ROLLBACK into a defect: a lost race found at commit (a
                // serialization failure) is retried like one found earlier, and a database gone at that moment (shut
                // down, its connection dropped) is UNAVAILABLE, as at any other (DECISIONS §20).
                Effect.catchAllDefect((defect) =>
                  isRetryable(defect) || saysAnywhere(defect, dialect.isUnavailable)
                    ? Effect.fail(storeError(defect))
                    : Effect.die(defect)
                ),
                // A lost race is over in milliseconds; a lock that outlasts 3 s of retries (another process holding
                // SQLite's file) is no race: the request is UNAVAILABLE rather than kept waiting.
                Effect.retry({
                  while: isRetryable,
                  schedule: Schedule.exponential("5 millis").pipe(
                    Schedule.jittered,
                    Schedule.intersect(Schedule.recurs(12)),
                    Schedule.upTo("3 seconds")
                  )
                }),
                // Given up: the one log line of a transaction that kept losing its race.
                Effect.tapError((e) =>
                  isRetryable(e)
                    ? Effect.logError(
                      "a transaction kept losing to concurrent ones (3 s, 13 tries at most); given up",
                      e
                    )
                    : Effect.void
                ),
                Effect.mapError((e) => asStoreError<E>(e))
              )
        ),
      claim: (name) =>
        dialect.claim === undefined
          ? Effect.succeed(true)
          : dialect.claim(sql, name).pipe(
            Effect.map((rows) => rows[0]?.claimed === true),
            Effect.mapError(storeError)
          ),
      changeMarker: (fiber) => {
        // Inside a transaction the marker does not see its own writes: the store cannot tell.
        if (
          marker === undefined ||
          Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)._tag === "Some"
        ) {
          return undefined
        }
        try {
          return marker()
        } catch {
          return undefined
        }
      },
      settledPosition: dialect.settledPosition === undefined
        ? Effect.succeed(undefined)
        : dialect.settledPosition(sql).pipe(
          Effect.map((rows) => rows[0]?.position),
          Effect.mapError(storeError)
        )
    }
    return { ...Store.withSpans(service), statements: { find: findStatement, count: countStatement } }
  })
