/**
 * The in-memory storage adapter: for tests, demos and embedders that keep state elsewhere.
 *
 * Every table and index is a persistent (immutable) order-statistic tree, so a transaction works on its own
 * snapshot and commits by swapping one reference, a page is a seek plus a walk of `limit` rows, and counting a uid
 * range or an index prefix costs O(log n).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import createTree from "functional-red-black-tree"
import type { Tree } from "functional-red-black-tree"
import type { Condition, OrderKey, Query, Row, Scalar, StoreService, Table, Where } from "./Store.js"
import { compareScalars, compareText, Store, UniqueViolation, withSpans } from "./Store.js"
import type { Range } from "./Uid.js"

/** Sorts after every scalar; closes a prefix range in an index. */
const TOP: unique symbol = Symbol("TOP")
type KeyPart = Scalar | typeof TOP
type Key = ReadonlyArray<KeyPart>

const compareParts = (a: KeyPart, b: KeyPart): number =>
  a === TOP ? (b === TOP ? 0 : 1) : b === TOP ? -1 : compareScalars(a, b)

const compareKeys = (a: Key, b: Key): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const c = compareParts(a[i]!, b[i]!)
    if (c !== 0) return c
  }
  return a.length - b.length
}

const compareStrings = compareText

interface Index {
  readonly columns: ReadonlyArray<string>
  readonly unique: boolean
  readonly tree: Tree<Key, Row>
}

interface TableState {
  readonly rows: Tree<string, Row>
  readonly indexes: ReadonlyArray<Index>
}

type State = ReadonlyMap<string, TableState>

const sameColumns = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((c, i) => c === b[i])

const emptyTable = (table: Table): TableState => {
  const indexes: Array<Index> = []
  const add = (columns: ReadonlyArray<string>, unique: boolean) => {
    const existing = indexes.findIndex((i) => sameColumns(i.columns, columns))
    if (existing >= 0) {
      if (unique) indexes[existing] = { ...indexes[existing]!, unique }
      return
    }
    indexes.push({ columns, unique, tree: createTree<Key, Row>(compareKeys) })
  }
  for (const u of table.unique) add(u, true)
  for (const i of table.indexes) add(i, false)
  return { rows: createTree<string, Row>(compareStrings), indexes }
}

const indexKey = (index: Index, row: Row): Key => [...index.columns.map((c) => row[c] as Scalar), row.uid]

const normalize = (table: Table, row: Row): Row => {
  const out: Record<string, unknown> = { uid: row.uid, parent: row.parent ?? null }
  for (const column of Object.keys(table.columns)) out[column] = row[column] ?? null
  return out as Row
}

const rangeSize = <K, V>(tree: Tree<K, V>, from: K, to: K): number => tree.ge(to).index - tree.ge(from).index

/** The prefix of an index's columns fixed by `Equals` conditions, and the values they are fixed to. */
const equalityPrefix = (index: Index, conditions: ReadonlyArray<Condition>): Array<Scalar> => {
  const values: Array<Scalar> = []
  for (const column of index.columns) {
    const c = conditions.find((c) => c._tag === "Equals" && c.column === column)
    if (c === undefined || c._tag !== "Equals") break
    values.push(c.value)
  }
  return values
}

const matchesCondition = (row: Row, c: Condition): boolean => {
  const v = row[c.column] ?? null
  switch (c._tag) {
    case "Equals":
      return compareScalars(v, c.value) === 0
    case "In":
      return c.values.some((x) => compareScalars(v, x) === 0)
    case "AtLeast":
      return v !== null && compareScalars(v, c.value) >= 0
    case "Overlaps":
      return Array.isArray(v) && v.some((x) => c.values.includes(x))
    case "Contains":
      return typeof v === "string" && v.includes(c.value)
  }
}

const inRanges = (ranges: ReadonlyArray<Range>, uid: string): boolean => {
  let lo = 0
  let hi = ranges.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const r = ranges[mid]!
    if (uid < r.from) hi = mid - 1
    else if (uid >= r.to) lo = mid + 1
    else return true
  }
  return false
}

const sortedRanges = (ranges: ReadonlyArray<Range>): Array<Range> =>
  [...ranges].sort((a, b) => compareStrings(a.from, b.from))

const matcher = (where: Where): (row: Row) => boolean => {
  const ranges = where.ranges === undefined ? undefined : sortedRanges(where.ranges)
  const conditions = where.conditions ?? []
  return (row) =>
    (ranges === undefined || inRanges(ranges, row.uid)) && conditions.every((c) => matchesCondition(row, c))
}

const orderComparator = (order: ReadonlyArray<OrderKey>) => (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => {
  for (let i = 0; i < order.length; i++) {
    const c = compareScalars(a[i], b[i])
    if (c !== 0) return order[i]!.direction === "asc" ? c : -c
  }
  return 0
}

const sortValues = (order: ReadonlyArray<OrderKey>, row: Row): Array<unknown> => order.map((k) => row[k.column] ?? null)

/** The in-memory store's own interface: the port plus a count of rows it has read, for tests. */
export interface MemoryStoreService extends StoreService {
  /** Rows visited by reads since the store was made (index walks, candidate checks). */
  readonly rowsRead: () => number
}

/** The in-memory store, for tests that inspect it. */
export class MemoryStore extends Context.Tag("@arbor/core/MemoryStore")<MemoryStore, MemoryStoreService>() {}

/** Makes an empty in-memory store. */
export const make: Effect.Effect<MemoryStoreService> = Effect.gen(function*() {
  const committed = { state: new Map() as State }
  const currentTx = FiberRef.unsafeMake<{ state: State } | undefined>(undefined)
  const lock = yield* Effect.makeSemaphore(1)
  let rowsRead = 0

  const tableState = (state: State, table: Table): TableState => state.get(table.name) ?? emptyTable(table)

  const read = <A>(f: (state: State) => A): Effect.Effect<A> =>
    Effect.map(FiberRef.get(currentTx), (tx) => f(tx?.state ?? committed.state))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(FiberRef.get(currentTx), (outer) => {
      if (outer !== undefined) {
        // A savepoint: the trees are persistent, so keeping the state to go back to costs nothing.
        const savepoint = outer.state
        return Effect.onExit(
          effect,
          (exit) => Exit.isFailure(exit) ? Effect.sync(() => (outer.state = savepoint)) : Effect.void
        )
      }
      return lock.withPermits(1)(
        Effect.suspend(() => {
          const tx = { state: committed.state }
          return effect.pipe(
            Effect.locally(currentTx, tx),
            Effect.tap(() => {
              committed.state = tx.state
            })
          )
        })
      )
    })

  /** Applies a write to the transaction's state, in a transaction of its own when outside one. */
  const write = <A, E>(f: (state: State) => Effect.Effect<readonly [State, A], E>): Effect.Effect<A, E> =>
    transaction(
      Effect.flatMap(FiberRef.get(currentTx), (tx) =>
        Effect.map(f(tx!.state), ([next, value]) => {
          tx!.state = next
          return value
        }))
    )

  /** Rows of `ts` matching `query`, in order, visiting as few rows as the indexes allow. */
  const scan = (ts: TableState, query: Query): Array<Row> => {
    const where = matcher(query)
    const order = query.order
    const offset = query.offset ?? 0
    const limit = query.limit ?? Number.POSITIVE_INFINITY
    const after = query.after
    const compare = orderComparator(order)
    const isAfter = after === undefined ? () => true : (row: Row) => compare(sortValues(order, row), after) > 0
    if ((query.ranges !== undefined && query.ranges.length === 0) || limit <= 0) return []

    const out: Array<Row> = []
    let skipped = 0
    const visit = (row: Row): boolean => {
      rowsRead++
      if (!where(row) || !isAfter(row)) return true
      if (skipped < offset) {
        skipped++
        return true
      }
      out.push(row)
      return out.length < limit
    }

    const plan = choosePlan(ts, query)
    if (plan._tag === "Stream") {
      plan.walk(visit)
      return out
    }
    const candidates = plan.rows.filter((row) => {
      rowsRead++
      return where(row) && isAfter(row)
    })
    candidates.sort((a, b) => compare(sortValues(order, a), sortValues(order, b)))
    return candidates.slice(offset, offset + limit)
  }

  type Plan =
    | { readonly _tag: "Stream"; readonly walk: (visit: (row: Row) => boolean) => void }
    | { readonly _tag: "Collect"; readonly rows: ReadonlyArray<Row> }

  /**
   * A plan: walk an index that already yields rows in the requested order (seeking to `after`), unless a much
   * smaller candidate set (uids given, an equality prefix, narrow uid ranges) can be collected and sorted.
   */
  const choosePlan = (ts: TableState, query: Query): Plan => {
    const conditions = query.conditions ?? []
    const wanted = (query.offset ?? 0) + (query.limit ?? Number.POSITIVE_INFINITY)

    const uidIn = conditions.find((c) => c._tag === "In" && c.column === "uid")
    if (uidIn !== undefined && uidIn._tag === "In") {
      return {
        _tag: "Collect",
        rows: uidIn.values.flatMap((uid) => {
          const row = typeof uid === "string" ? ts.rows.get(uid) : undefined
          return row === undefined ? [] : [row]
        })
      }
    }

    const stream = streamPlan(ts, query)
    const bounded = smallestBounded(ts, query)
    if (stream !== undefined && (bounded === undefined || bounded.size > 4 * wanted + 64)) return stream.plan
    if (bounded !== undefined) return { _tag: "Collect", rows: bounded.collect() }
    const all: Array<Row> = []
    ts.rows.forEach((_, row) => void all.push(row))
    return { _tag: "Collect", rows: all }
  }

  /** The cheapest candidate set whose size is known without reading it. */
  const smallestBounded = (ts: TableState, query: Where) => {
    let best: { size: number; collect: () => Array<Row> } | undefined
    const consider = (size: number, collect: () => Array<Row>) => {
      if (best === undefined || size < best.size) best = { size, collect }
    }
    if (query.ranges !== undefined) {
      const ranges = sortedRanges(query.ranges)
      consider(ranges.reduce((n, r) => n + rangeSize(ts.rows, r.from, r.to), 0), () => {
        const rows: Array<Row> = []
        for (const r of ranges) ts.rows.forEach((_, row) => void rows.push(row), r.from, r.to)
        return rows
      })
    }
    for (const index of ts.indexes) {
      const prefix = equalityPrefix(index, query.conditions ?? [])
      if (prefix.length === 0) continue
      const from: Key = prefix
      const to: Key = [...prefix, TOP]
      consider(rangeSize(index.tree, from, to), () => {
        const rows: Array<Row> = []
        index.tree.forEach((_, row) => void rows.push(row), from, to)
        return rows
      })
    }
    return best
  }

  /**
   * The cheapest walk that yields rows in the query's order: the uid tree over the query's ranges, or an index
   * whose columns, after those fixed by equality conditions, are the sort keys. Sizes are known from ranks.
   */
  const streamPlan = (ts: TableState, query: Query): { readonly size: number; readonly plan: Plan } | undefined => {
    const order = query.order
    const direction = order[0]?.direction ?? "asc"
    if (!order.every((k) => k.direction === direction)) return undefined
    const keys = order.map((k) => k.column)
    if (keys[keys.length - 1] !== "uid") return undefined
    const sortColumns = keys.slice(0, -1)
    const desc = direction === "desc"
    const candidates: Array<{ readonly size: number; readonly plan: Plan }> = []

    if (sortColumns.length === 0) {
      const ranges = query.ranges === undefined ? [{ from: "", to: "\uffff" }] : sortedRanges(query.ranges)
      const after = query.after?.[0] as string | undefined
      candidates.push({
        size: ranges.reduce((n, r) => n + rangeSize(ts.rows, r.from, r.to), 0),
        plan: {
          _tag: "Stream",
          walk: (visit) => {
            for (const r of desc ? [...ranges].reverse() : ranges) {
              if (!walkTree(ts.rows, compareStrings, r.from, r.to, after, desc, visit)) return
            }
          }
        }
      })
    }

    for (const index of ts.indexes) {
      const prefix = equalityPrefix(index, query.conditions ?? [])
      for (let fixed = prefix.length; fixed >= 0; fixed--) {
        if (!sameColumns(index.columns.slice(fixed), sortColumns)) continue
        const from: Key = prefix.slice(0, fixed)
        const to: Key = [...from, TOP]
        const after: Key | undefined = query.after === undefined ? undefined : [...from, ...query.after]
        candidates.push({
          size: rangeSize(index.tree, from, to),
          plan: {
            _tag: "Stream",
            walk: (visit) => void walkTree(index.tree, compareKeys, from, to, after, desc, visit)
          }
        })
        break
      }
    }
    return candidates.reduce<typeof candidates[number] | undefined>(
      (best, c) => best === undefined || c.size < best.size ? c : best,
      undefined
    )
  }

  /** Visits the entries in `[from, to)` strictly after `after` in the walk's direction; false once `visit` stops. */
  const walkTree = <K>(
    tree: Tree<K, Row>,
    compare: (a: K, b: K) => number,
    from: K,
    to: K,
    after: K | undefined,
    desc: boolean,
    visit: (row: Row) => boolean
  ): boolean => {
    if (!desc) {
      const start = after !== undefined && compare(after, from) >= 0 ? tree.gt(after) : tree.ge(from)
      for (const it = start; it.valid && compare(it.key!, to) < 0; it.next()) {
        if (!visit(it.value!)) return false
      }
    } else {
      const start = after !== undefined && compare(after, to) < 0 ? tree.lt(after) : tree.lt(to)
      for (const it = start; it.valid && compare(it.key!, from) >= 0; it.prev()) {
        if (!visit(it.value!)) return false
      }
    }
    return true
  }

  const count = (
    ts: TableState,
    query: Where & { order?: ReadonlyArray<OrderKey>; after?: ReadonlyArray<Scalar> | undefined }
  ): number => {
    const conditions = query.conditions ?? []
    if (query.ranges !== undefined && query.ranges.length === 0) return 0
    if (query.after === undefined) {
      if (conditions.length === 0) {
        if (query.ranges === undefined) return ts.rows.length
        return sortedRanges(query.ranges).reduce((n, r) => n + rangeSize(ts.rows, r.from, r.to), 0)
      }
      for (const index of ts.indexes) {
        const prefix = equalityPrefix(index, conditions)
        if (prefix.length !== conditions.length) continue
        if (query.ranges === undefined) return rangeSize(index.tree, prefix, [...prefix, TOP])
        if (prefix.length === index.columns.length) {
          // The index key is the prefix then the uid: each uid range is a key range.
          return sortedRanges(query.ranges).reduce(
            (n, r) => n + rangeSize<Key, Row>(index.tree, [...prefix, r.from], [...prefix, r.to]),
            0
          )
        }
      }
    }
    return scan(ts, { ...query, order: query.order ?? [{ column: "uid", direction: "asc" }] }).length
  }

  const checkUnique = (table: Table, ts: TableState, row: Row): Effect.Effect<void, UniqueViolation> => {
    for (const index of ts.indexes) {
      if (!index.unique) continue
      const prefix = index.columns.map((c) => row[c] as Scalar)
      const to: Key = [...prefix, TOP]
      for (const it = index.tree.ge(prefix); it.valid && compareKeys(it.key!, to) < 0; it.next()) {
        if (it.value!.uid !== row.uid) {
          return Effect.fail(new UniqueViolation({ table: table.name, columns: [...index.columns] }))
        }
      }
    }
    return Effect.void
  }

  const withoutRow = (ts: TableState, row: Row): TableState => ({
    rows: ts.rows.remove(row.uid),
    indexes: ts.indexes.map((index) => ({ ...index, tree: index.tree.remove(indexKey(index, row)) }))
  })

  const withRow = (ts: TableState, row: Row): TableState => ({
    rows: ts.rows.insert(row.uid, row),
    indexes: ts.indexes.map((index) => ({ ...index, tree: index.tree.insert(indexKey(index, row), row) }))
  })

  const setTable = (state: State, table: Table, ts: TableState): State => new Map(state).set(table.name, ts)

  const service: MemoryStoreService = {
    rowsRead: () => rowsRead,
    get: (table, uid) =>
      read((state) => {
        const row = tableState(state, table).rows.get(uid)
        if (row === undefined) return Option.none()
        rowsRead++
        return Option.some(row)
      }),
    getMany: (table, uids) =>
      read((state) => {
        const rows = tableState(state, table).rows
        return uids.flatMap((uid) => {
          const row = rows.get(uid)
          if (row === undefined) return []
          rowsRead++
          return [row]
        })
      }),
    find: (table, query) => read((state) => scan(tableState(state, table), query)),
    count: (table, query) => read((state) => count(tableState(state, table), query)),
    insert: (table, input) =>
      write((state) => {
        const ts = tableState(state, table)
        const row = normalize(table, input)
        if (ts.rows.get(row.uid) !== undefined) {
          return Effect.fail(new UniqueViolation({ table: table.name, columns: ["uid"] }))
        }
        return Effect.as(checkUnique(table, ts, row), [setTable(state, table, withRow(ts, row)), undefined] as const)
      }),
    update: (table, input) =>
      write((state) => {
        const ts = tableState(state, table)
        const row = normalize(table, input)
        const old = ts.rows.get(row.uid)
        if (old === undefined) return Effect.succeed([state, false] as const)
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
    transaction
  }
  return { ...service, ...withSpans(service) }
})

/** A Layer with a fresh, empty in-memory store, as both the storage port and `MemoryStore`. */
export const layer: Layer.Layer<Store | MemoryStore> = Layer.effectContext(
  Effect.map(make, (service) => Context.make(Store, service).pipe(Context.add(MemoryStore, service)))
)
