/**
 * What the storage contract's tests share (`StoreContract`): rows to write, the reference semantics of `find` and
 * `count` by brute force, random rows and queries, and how a test runs against an adapter's Layer.
 */
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import type * as Layer from "effect/Layer"
import type { Condition, OrderKey, Query, Row, Scalar, Where } from "../../engine/Store.js"
import * as Store from "../../engine/Store.js"
import * as Uid from "../../engine/Uid.js"
import * as Group from "../../iam/Group.js"

export const root = (n: number) => n.toString(16).padStart(40, "0")
export const child = (parent: string, n: number) => `${parent}/${n.toString(16).padStart(16, "0")}`

export const group = (uid: string, name: string, t = 1000, extra: Partial<Row> = {}): Row => ({
  uid,
  parent: Uid.parentOrNull(uid as Uid.Uid),
  name,
  description: `group ${name}`,
  verified: false,
  createTime: t,
  updateTime: t,
  ...extra
})

export const byUid: ReadonlyArray<OrderKey> = [{ column: "uid", direction: "asc" }]

export const uids = (rows: ReadonlyArray<Row>) => rows.map((r) => r.uid)

/**
 * The order every store sorts scalars in, worked out here on its own terms rather than with the stores' comparator:
 * null first, then numbers, booleans, and strings by their UTF-8 bytes. (A column holds one type of scalar.)
 */
export const scalarOrder = (a: unknown, b: unknown): number => {
  const rank = (
    v: unknown
  ) => (v === null || v === undefined ? 0 : typeof v === "number" ? 1 : typeof v === "boolean" ? 2 : 3)
  if (rank(a) !== rank(b)) return rank(a) < rank(b) ? -1 : 1
  if (typeof a === "number" && typeof b === "number") return Math.sign(a - b)
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b)
  if (typeof a === "string" && typeof b === "string") return Math.sign(utf8Order(a, b))
  return 0
}

export const utf8 = new TextEncoder()
export const utf8Order = (a: string, b: string): number => {
  const [x, y] = [utf8.encode(a), utf8.encode(b)]
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

/** Whether a row meets one condition, as the storage port documents each kind. */
export const holds = (row: Row, condition: Condition): boolean => {
  const value = row[condition.column] ?? null
  const same = (other: Scalar) => scalarOrder(value, other) === 0
  if (condition._tag === "Equals") return same(condition.value)
  if (condition._tag === "In") return condition.values.some(same)
  if (condition._tag === "AtLeast") return value !== null && scalarOrder(value, condition.value) >= 0
  if (condition._tag === "Below") return value !== null && scalarOrder(value, condition.value) < 0
  if (condition._tag === "Overlaps") {
    return Array.isArray(value) && condition.values.some((wanted) => value.includes(wanted))
  }
  return typeof value === "string" && value.indexOf(condition.value) >= 0
}

/** The reference semantics of `find` and `count`, by brute force. */
export const reference = {
  matches: (where: Where, row: Row): boolean =>
    (where.ranges === undefined || where.ranges.some((r) => row.uid >= r.from && row.uid < r.to)) &&
    (where.conditions ?? []).every((c) => holds(row, c)),
  compare: (order: ReadonlyArray<OrderKey>) => (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>): number => {
    for (let i = 0; i < order.length; i++) {
      const c = scalarOrder(a[i], b[i])
      if (c !== 0) return order[i]!.direction === "asc" ? c : -c
    }
    return 0
  },
  find: (rows: ReadonlyArray<Row>, query: Query): Array<Row> => {
    const key = (r: Row) => query.order.map((k) => r[k.column] ?? null)
    const compare = reference.compare(query.order)
    const offset = query.offset ?? 0
    return rows
      .filter((r) => reference.matches(query, r))
      .filter((r) => query.after === undefined || compare(key(r), query.after) > 0)
      .sort((a, b) => compare(key(a), key(b)))
      .slice(offset, query.limit === undefined ? undefined : offset + query.limit)
  }
}

/**
 * Names from ASCII and from both sides of the point where UTF-16 and UTF-8 orders part: U+E000 to U+FFFF sort
 * after every character above U+FFFF in UTF-16 code units, before them in UTF-8 bytes (the order every store keeps).
 */
export const names = [
  "a",
  "b",
  "c",
  "d",
  "e",
  "f",
  "ab",
  "é",
  "中",
  "\uE000",
  "\uFF5E",
  "\uFFFD",
  "😀",
  "𐀀",
  "a😀",
  "a\uFFFD"
]

/** A random forest of groups: uids, names (unique among siblings), and times with many ties. */
export const rowsArbitrary = FastCheck.array(
  FastCheck.record({
    parentPick: FastCheck.nat(),
    name: FastCheck.constantFrom(...names),
    createTime: FastCheck.integer({ min: 0, max: 4 }),
    updateTime: FastCheck.integer({ min: 0, max: 4 }),
    verified: FastCheck.boolean()
  }),
  { maxLength: 300, size: "max" }
).map((specs) => {
  const rows: Array<Row> = []
  specs.forEach((s, i) => {
    const parents = rows.filter((r) => r.uid.split("/").length < 4)
    const parent = i % 7 === 0 || parents.length === 0 ? null : parents[s.parentPick % parents.length]!.uid
    const uid = parent === null ? root(i + 1) : child(parent, i + 1)
    if (rows.some((r) => r.parent === parent && r.name === s.name)) return
    rows.push(group(uid, s.name, s.createTime, { updateTime: s.updateTime, verified: s.verified }))
  })
  return rows
})

export interface QuerySpec {
  readonly ranges:
    | ReadonlyArray<{ readonly pick: number; readonly kind: "descendants" | "subtree" | "only" }>
    | undefined
  readonly condition: "none" | "parent" | "root" | "name" | "uids"
  readonly pick: number
  readonly order: ReadonlyArray<{ readonly column: string; readonly direction: "asc" | "desc" }>
  readonly afterPick: number | undefined
  readonly offset: number
  readonly limit: number | undefined
}

export const queryArbitrary: FastCheck.Arbitrary<QuerySpec> = FastCheck.record({
  ranges: FastCheck.option(
    FastCheck.array(
      FastCheck.record({ pick: FastCheck.nat(), kind: FastCheck.constantFrom("descendants", "subtree", "only") }),
      { maxLength: 3 }
    ),
    { nil: undefined }
  ),
  condition: FastCheck.constantFrom("none", "parent", "root", "name", "uids"),
  pick: FastCheck.nat(),
  order: FastCheck.uniqueArray(
    FastCheck.record({
      column: FastCheck.constantFrom("name", "createTime", "updateTime", "verified"),
      direction: FastCheck.constantFrom("asc", "desc")
    }),
    { maxLength: 2, selector: (k) => k.column }
  ),
  afterPick: FastCheck.option(FastCheck.nat(), { nil: undefined }),
  offset: FastCheck.integer({ min: 0, max: 5 }),
  limit: FastCheck.option(FastCheck.integer({ min: 1, max: 10 }), { nil: undefined })
}) as FastCheck.Arbitrary<QuerySpec>

/** Turns a random query description into a query over `rows`, picking uids and positions from them. */
export const materialize = (q: QuerySpec, rows: ReadonlyArray<Row>): Query => {
  const pickRow = (n: number) => rows.length === 0 ? undefined : rows[n % rows.length]
  const ranges = q.ranges?.flatMap((r) => {
    const row = pickRow(r.pick)
    if (row === undefined) return []
    return [
      r.kind === "descendants"
        ? Uid.descendants(row.uid)
        : r.kind === "subtree"
        ? Uid.subtree(row.uid)
        : Uid.only(row.uid)
    ]
  })
  const target = pickRow(q.pick)
  const conditions: Array<Condition> = []
  if (q.condition === "parent" && target !== undefined) {
    conditions.push({ _tag: "Equals", column: "parent", value: target.uid })
  }
  if (q.condition === "root") conditions.push({ _tag: "Equals", column: "parent", value: null })
  if (q.condition === "name") {
    conditions.push({ _tag: "Equals", column: "name", value: (target?.name ?? "a") as string })
  }
  if (q.condition === "uids") {
    conditions.push({
      _tag: "In",
      column: "uid",
      values: rows.filter((_, i) => (i + q.pick) % 3 === 0).map((r) => r.uid)
    })
  }
  const last = q.order[q.order.length - 1]?.direction ?? "asc"
  const order: Array<OrderKey> = [...q.order, { column: "uid", direction: q.pick % 2 === 0 ? last : "asc" }]
  const afterRow = q.afterPick === undefined ? undefined : pickRow(q.afterPick)
  const after = afterRow === undefined ? undefined : order.map((k) => (afterRow[k.column] ?? null) as Scalar)
  return {
    ranges: ranges === undefined ? undefined : Uid.normalizeRanges(ranges),
    conditions,
    order,
    after,
    offset: q.offset,
    limit: q.limit
  }
}

/** How a contract's tests run against `layer`: each on the store it builds afresh, seeded with groups when asked. */
export const runnerOf = <E>(layer: Layer.Layer<Store.Store, E>) => ({
  run: <A, E2>(effect: Effect.Effect<A, E2, Store.Store>) => Effect.provide(effect, layer),
  seed: (rows: ReadonlyArray<Row>) =>
    Effect.flatMap(Store.Store, (store) => Effect.forEach(rows, (r) => store.insert(Group.table, r), { discard: true }))
})
