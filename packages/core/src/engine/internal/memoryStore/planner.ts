/**
 * Query planning over the in-memory store's tables: walk an index that already yields rows in the requested order
 * (seeking to the page's position), unless a much smaller candidate set (uids given, an equality prefix, narrow uid
 * ranges) can be collected and sorted; counts from ranks where the indexes allow.
 */
import type { Tree } from "functional-red-black-tree"
import type { OrderKey, Query, Row, Scalar, Where } from "../../Store.js"
import { compareScalars, matches } from "../../Store.js"
import type { Range } from "../../Uid.js"
import type { Key, TableState } from "./tables.js"
import { compareKeys, compareStrings, equalityPrefix, rangeSize, sameColumns, TOP } from "./tables.js"

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
  return (row) => (ranges === undefined || inRanges(ranges, row.uid)) && conditions.every((c) => matches(row, c))
}

const orderComparator = (order: ReadonlyArray<OrderKey>) => (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => {
  for (let i = 0; i < order.length; i++) {
    const c = compareScalars(a[i], b[i])
    if (c !== 0) return order[i]!.direction === "asc" ? c : -c
  }
  return 0
}

const sortValues = (order: ReadonlyArray<OrderKey>, row: Row): Array<unknown> => order.map((k) => row[k.column] ?? null)

/** Counts the rows a planner visits, for tests that check how much a query reads. */
export interface Reads {
  count: number
}

/** The planner of one store, counting into `reads`. */
export const make = (reads: Reads) => {
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
      reads.count++
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
      reads.count++
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

  return { scan, count }
}
