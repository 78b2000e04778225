/**
 * The in-memory storage adapter: for tests, demos and embedders that keep state elsewhere.
 *
 * Every table and index is a persistent (immutable) order-statistic tree, so a transaction works on its own
 * snapshot and commits by swapping one reference, a page is a seek plus a walk of `limit` rows, and counting a uid
 * range or an index prefix costs O(log n).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Planner from "./internal/memoryStore/planner.js"
import type { State, TableState } from "./internal/memoryStore/tables.js"
import { checkUnique, emptyTable, normalize, setTable, withoutRow, withRow } from "./internal/memoryStore/tables.js"
import * as Transactions from "./internal/memoryStore/transactions.js"
import type { Row, StoreService, Table } from "./Store.js"
import { Store, UniqueViolation, withSpans } from "./Store.js"

/** The in-memory store's own interface: the port plus a count of rows it has read, for tests. */
export interface MemoryStoreService extends StoreService {
  /** Rows visited by reads since the store was made (index walks, candidate checks). */
  readonly rowsRead: () => number
}

/** The in-memory store, for tests that inspect it. */
export class MemoryStore extends Context.Tag("@arbor/core/MemoryStore")<MemoryStore, MemoryStoreService>() {}

/** Makes an empty in-memory store. */
export const make: Effect.Effect<MemoryStoreService> = Effect.gen(function*() {
  const reads: Planner.Reads = { count: 0 }
  const { changeMarker, read, transaction, write } = yield* Transactions.make
  const { count, scan } = Planner.make(reads)
  const tableState = (state: State, table: Table): TableState => state.get(table.name) ?? emptyTable(table)
  /** The last position given out: writers commit one at a time, so positions increase in commit order. */
  let lastPosition = 0
  const positionColumns = new Map<string, ReadonlyArray<string>>()
  const positionsOf = (table: Table): ReadonlyArray<string> => {
    let columns = positionColumns.get(table.name)
    if (columns === undefined) {
      columns = Object.entries(table.columns).flatMap(([name, c]) => c.type === "position" ? [name] : [])
      positionColumns.set(table.name, columns)
    }
    return columns
  }
  /** `row` with its position columns: new ones at insert, kept at update. */
  const positioned = (table: Table, row: Row, old?: Row): Row => {
    const columns = positionsOf(table)
    if (columns.length === 0) return row
    const out: Record<string, unknown> = { ...row }
    for (const column of columns) {
      out[column] = old === undefined ? String(++lastPosition).padStart(40, "0") : old[column]
    }
    return out as Row
  }

  const service: MemoryStoreService = {
    rowsRead: () => reads.count,
    get: (table, uid) =>
      read((state) => {
        const row = tableState(state, table).rows.get(uid)
        if (row === undefined) return Option.none()
        reads.count++
        return Option.some(row)
      }),
    getMany: (table, uids) =>
      read((state) => {
        const rows = tableState(state, table).rows
        return uids.flatMap((uid) => {
          const row = rows.get(uid)
          if (row === undefined) return []
          reads.count++
          return [row]
        })
      }),
    find: (table, query) => read((state) => scan(tableState(state, table), query)),
    count: (table, query) => read((state) => count(tableState(state, table), query)),
    insert: (table, input) =>
      write((state) => {
        const ts = tableState(state, table)
        const row = positioned(table, normalize(table, input))
        if (ts.rows.get(row.uid) !== undefined) {
          return Effect.fail(new UniqueViolation({ table: table.name, columns: ["uid"] }))
        }
        return Effect.as(checkUnique(table, ts, row), [setTable(state, table, withRow(ts, row)), undefined] as const)
      }),
    insertMany: (table, inputs) =>
      write((state) =>
        Effect.map(
          Effect.reduce(inputs, tableState(state, table), (ts, input) => {
            const row = positioned(table, normalize(table, input))
            return ts.rows.get(row.uid) !== undefined
              ? Effect.fail(new UniqueViolation({ table: table.name, columns: ["uid"] }))
              : Effect.as(checkUnique(table, ts, row), withRow(ts, row))
          }),
          (ts) => [setTable(state, table, ts), undefined] as const
        )
      ),
    update: (table, input) =>
      write((state) => {
        const ts = tableState(state, table)
        const old = ts.rows.get(input.uid)
        if (old === undefined) return Effect.succeed([state, false] as const)
        const row = positioned(table, normalize(table, input), old)
        return Effect.as(
          checkUnique(table, ts, row),
          [setTable(state, table, withRow(withoutRow(ts, old), row)), true] as const
        )
      }),
    delete: (table, where) =>
      write((state) => {
        const ts = tableState(state, table)
        const doomed = scan(ts, { ...where, order: [{ column: "uid", direction: "asc" }] })
        const next = doomed.length === 0 ? state : setTable(state, table, doomed.reduce(withoutRow, ts))
        return Effect.succeed([next, doomed.length] as const)
      }),
    transaction,
    // Transactions run one at a time.
    claim: () => Effect.succeed(true),
    settledPosition: Effect.succeed(undefined),
    // The state the reader sees: the committed one, or its own transaction's (which each write replaces).
    changeMarker
  }
  return { ...service, ...withSpans(service) }
})

/** A Layer with a fresh, empty in-memory store, as both the storage port and `MemoryStore`. */
export const layer: Layer.Layer<Store | MemoryStore> = Layer.effectContext(
  Effect.map(make, (service) => Context.make(Store, service).pipe(Context.add(MemoryStore, service)))
)
