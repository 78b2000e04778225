/**
 * Lists (docs/api.md §4), one implementation for every resource: hierarchy filters, `name`, `order_by`, keyset
 * cursors in authenticated page tokens, `skip`, `totalCount`, and page-size coercion. Authorization filtering is
 * part of the query, so pages are never short because of hidden items.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { Grants, Target } from "../iam/Authorization.js"
import type { Capability } from "../iam/Capability.js"
import type { Principal } from "../iam/Principal.js"
import type { Internal, Unavailable } from "./Errors.js"
import { FieldViolation, InvalidArgument } from "./Errors.js"
import * as PageToken from "./internal/lists/pageToken.js"
import type { Operations } from "./internal/operations.js"
import type { Repository } from "./Repository.js"
import type { Condition, OrderKey, Row, Scalar, Table, Where } from "./Store.js"
import type { Range, Uid } from "./Uid.js"
import * as Uids from "./Uid.js"

/** The page size when none is given. */
export const defaultPageSize = 50

/** The largest page served; larger requests are served this many. */
export const maxPageSize = 200

/** A list request, as the API's list parameters. */
export interface ListOptions {
  /** Only resources strictly below this group (`uidp.descendants_of`). */
  readonly descendantsOf?: string | undefined
  /** Only resources whose parent is this group (`uidp.children_of`). */
  readonly childrenOf?: string | undefined
  /** Only resources that are ancestors of this uid (`uidp.ancestors_of`). */
  readonly ancestorsOf?: string | undefined
  /** Only root-level resources (`uidp.in_root`). */
  readonly inRoot?: boolean | undefined
  /** Only these uids (`uidp.ids`). */
  readonly ids?: ReadonlyArray<string> | undefined
  /** Only resources with exactly this name. */
  readonly name?: string | undefined
  /** At most this many items; 0 or absent means 50, above 200 means 200. */
  readonly pageSize?: number | undefined
  /** Continue after the page that returned this token. */
  readonly pageToken?: string | undefined
  /** Comma-separated sort keys, each optionally followed by `asc` or `desc`. */
  readonly orderBy?: string | undefined
  /** Skip this many items from the current position. */
  readonly skip?: number | undefined
}

/** One page of a list. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  /** Token for the next page; undefined on the last page. */
  readonly nextPageToken: string | undefined
  /** Items matching the filters and visible to the caller, across all pages. */
  readonly totalCount: number
  /** Items actually skipped because of `skip`. */
  readonly skipped: number
}

/**
 * Filters a resource adds to the common ones: conditions, a canonical form for the page-token digest, and the
 * violations found reading them (reported with those of the common parameters).
 */
export interface Filters {
  readonly conditions: ReadonlyArray<Condition>
  readonly digest: unknown
  readonly violations?: ReadonlyArray<FieldViolation>
  /**
   * True when the conditions select only the caller's own resources (an identity's own role bindings), which it
   * sees whatever its grants; what it sees of the resources they embed is still its grants' to decide.
   */
  readonly own?: boolean
}

/** How one resource is listed: its repository of records `R`, turned into items `A`. */
export interface ListSpec<A, R = A> {
  readonly repository: Repository<R>
  /** The capability that makes an item visible. */
  readonly capability: Capability
  /** Where the capability must be held: at the item itself (groups) or at its parent group. */
  readonly visibleAt: "self" | "parent"
  /**
   * How a check about one item names it (`Resources.targetOf`): given, a conditional grant shows each item exactly
   * where a check about it would allow it (DECISIONS §21); absent, a list counts conditional grants as nothing.
   */
  readonly target?: (uid: Uid) => Target
  /** Uids every caller may see (the built-in roles). */
  readonly public?: ReadonlyArray<string>
  /** The order when `order_by` is absent. */
  readonly defaultOrder?: string
  /** Turns records into the items returned (hydration), or returns them as they are (`asIs`). */
  readonly load: (records: ReadonlyArray<R>, grants: Grants) => Effect.Effect<ReadonlyArray<A>, Internal | Unavailable>
}

/**
 * A list filter that is a time (`updated_since`, `since`, `until`): RFC 3339, as epoch milliseconds; when it is not
 * one, a violation naming `field` joins `violations`. Undefined when absent or refused.
 */
export const timeFilter = (
  violations: Array<FieldViolation>,
  field: string,
  value: string | undefined
): number | undefined => {
  if (value === undefined) return undefined
  const parsed = DateTime.make(value)
  if (parsed._tag === "None" || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    violations.push(new FieldViolation({ field, description: "must be an RFC 3339 timestamp" }))
    return undefined
  }
  return DateTime.toEpochMillis(parsed.value)
}

/** The `load` of a resource listed as it is stored. */
export const asIs = <A>(records: ReadonlyArray<A>): Effect.Effect<ReadonlyArray<A>> => Effect.succeed(records)

const orderAliases: Readonly<Record<string, string>> = {
  uid: "uid",
  name: "name",
  create_time: "createTime",
  created_at: "createTime",
  createTime: "createTime",
  createdAt: "createTime",
  update_time: "updateTime",
  updated_at: "updateTime",
  updateTime: "updateTime",
  updatedAt: "updateTime",
  time: "time"
}

/**
 * Parses `order_by` for `table`: keys `uid`, `name`, `create_time`, `update_time`, `time` (and their aliases) where
 * the table has them. A table with a position column (the change log) breaks ties by it, before the uid. `uid` is appended as the final key, in the direction of the key before it, so the order is total.
 */
export const parseOrderBy = (table: Table, orderBy: string): Either.Either<ReadonlyArray<OrderKey>, string> => {
  const keys: Array<OrderKey> = []
  for (const part of orderBy.split(",")) {
    const words = part.trim().split(/\s+/).filter((w) => w !== "")
    if (words.length === 0) continue
    const [key, direction = "asc", ...rest] = words
    const column = orderAliases[key!]
    if (column === undefined || (column !== "uid" && !(column in table.columns))) {
      return Either.left(`unknown sort key '${key}'`)
    }
    const dir = direction.toLowerCase()
    if ((dir !== "asc" && dir !== "desc") || rest.length > 0) {
      return Either.left(`'${part.trim()}' must be a sort key optionally followed by asc or desc`)
    }
    if (keys.some((k) => k.column === column)) return Either.left(`sort key '${key}' is given twice`)
    keys.push({ column, direction: dir })
    if (column === "uid") break
  }
  const last = keys[keys.length - 1]
  // A table with a position (the change log) breaks ties by it: entries of one millisecond keep their log order.
  const position = Object.entries(table.columns).find(([, c]) => c.type === "position")?.[0]
  if (position !== undefined && last?.column !== "uid" && !keys.some((k) => k.column === position)) {
    keys.push({ column: position, direction: last?.direction ?? "asc" })
  }
  if (keys[keys.length - 1]?.column !== "uid") {
    keys.push({ column: "uid", direction: keys[keys.length - 1]?.direction ?? "asc" })
  }
  return Either.right(keys)
}

interface Request {
  readonly where: Where
  readonly order: ReadonlyArray<OrderKey>
  readonly pageSize: number
  readonly skip: number
  readonly digest: string
}

const checkUid = (violations: Array<FieldViolation>, field: string, value: string | undefined) => {
  if (value !== undefined && !Uids.isUid(value)) {
    violations.push(new FieldViolation({ field, description: `'${value}' is not a valid uid` }))
  }
}

const checkCount = (violations: Array<FieldViolation>, field: string, value: number | undefined) => {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    violations.push(new FieldViolation({ field, description: "must be a non-negative integer" }))
  }
}

/** Validates `options` into a store query (before visibility is applied). */
const request = <A, R>(
  spec: ListSpec<A, R>,
  options: ListOptions,
  filters: Filters
): Effect.Effect<Request, InvalidArgument> => {
  const table = spec.repository.table
  const violations: Array<FieldViolation> = []
  checkUid(violations, "uidp.descendants_of", options.descendantsOf)
  checkUid(violations, "uidp.children_of", options.childrenOf)
  checkUid(violations, "uidp.ancestors_of", options.ancestorsOf)
  for (const id of options.ids ?? []) checkUid(violations, "uidp.ids", id)
  if (options.name !== undefined && !("name" in table.columns)) {
    violations.push(new FieldViolation({ field: "name", description: "this resource has no name to filter by" }))
  }
  checkCount(violations, "page_size", options.pageSize)
  checkCount(violations, "skip", options.skip)
  violations.push(...(filters.violations ?? []))
  const parsed = parseOrderBy(table, options.orderBy ?? spec.defaultOrder ?? "uid")
  if (Either.isLeft(parsed)) violations.push(new FieldViolation({ field: "order_by", description: parsed.left }))
  const order = Either.getOrElse(parsed, () => [])
  const [first, ...rest] = violations
  if (first !== undefined) return Effect.fail(new InvalidArgument({ violations: [first, ...rest] }))

  const conditions: Array<Condition> = [...filters.conditions]
  if (options.childrenOf !== undefined) conditions.push({ _tag: "Equals", column: "parent", value: options.childrenOf })
  if (options.inRoot === true) conditions.push({ _tag: "Equals", column: "parent", value: null })
  if (options.ancestorsOf !== undefined) {
    conditions.push({ _tag: "In", column: "uid", values: Uids.ancestors(options.ancestorsOf as Uid) })
  }
  if (options.ids !== undefined) conditions.push({ _tag: "In", column: "uid", values: [...new Set(options.ids)] })
  if (options.name !== undefined) conditions.push({ _tag: "Equals", column: "name", value: options.name })
  const below = [options.descendantsOf, options.childrenOf].flatMap((uid) =>
    uid === undefined ? [] : [[Uids.descendants(uid)]]
  )
  const ranges = below.reduce<ReadonlyArray<Range> | undefined>(intersect, undefined)
  const size = options.pageSize ?? 0

  return Effect.succeed({
    where: { ranges, conditions },
    order,
    pageSize: size === 0 ? defaultPageSize : Math.min(size, maxPageSize),
    skip: options.skip ?? 0,
    digest: PageToken.digest({
      t: table.name,
      d: options.descendantsOf,
      c: options.childrenOf,
      a: options.ancestorsOf,
      r: options.inRoot === true,
      i: options.ids === undefined ? undefined : [...new Set(options.ids)].sort(),
      n: options.name,
      o: order,
      x: filters.digest
    })
  })
}

/** The uid ranges a caller may see, or undefined when it may see everything. */
const visibleRanges = <A, R>(spec: ListSpec<A, R>, grants: Grants): ReadonlyArray<Range> | undefined => {
  const scopes = grants.scopes(spec.capability)
  if (scopes === "all") return undefined
  return Uids.normalizeRanges([
    ...scopes.map(spec.visibleAt === "self" ? Uids.subtree : Uids.descendants),
    ...(spec.public ?? []).map(Uids.only)
  ])
}

/**
 * The uid ranges a caller may see with its conditional grants too: the items a check about each would allow, with
 * the list's conditions (`where`), or undefined when it may see everything.
 */
const visibleWithConditions = <A, R>(
  ops: Operations,
  spec: ListSpec<A, R>,
  principal: Principal,
  grants: Grants,
  where: Where
): Effect.Effect<ReadonlyArray<Range> | undefined, Internal | Unavailable> => {
  const covered = visibleRanges(spec, grants)
  if (covered === undefined || spec.target === undefined || grants.conditional.length === 0) {
    return Effect.succeed(covered)
  }
  return Effect.map(
    ops.authorization.visibleRows(principal, grants, spec.capability, {
      visibleAt: spec.visibleAt,
      target: spec.target,
      covered,
      within: where.ranges,
      read: (range, after, limit) =>
        Effect.map(
          spec.repository.findRows({
            ranges: [range],
            conditions: where.conditions,
            order: [{ column: "uid", direction: "asc" }],
            ...(after === undefined ? {} : { after: [after] }),
            limit
          }),
          (rows) => rows.map((row) => row.uid as Uid)
        )
    }),
    (more) => more.length === 0 ? covered : Uids.normalizeRanges([...covered, ...more])
  )
}

const intersect = (a: ReadonlyArray<Range> | undefined, b: ReadonlyArray<Range> | undefined) =>
  a === undefined ? b : b === undefined ? a : Uids.intersectRanges(a, b)

const position = (order: ReadonlyArray<OrderKey>, row: Row): Array<Scalar> =>
  order.map((k) => (row[k.column] ?? null) as Scalar)

const noFilters: Filters = { conditions: [], digest: null }

/**
 * The filters a list of `O` must be given: none for the common options alone; for options a resource declares
 * beyond them (`TagListOptions.digest`), its `Filters`, which are what applies them. A service that declares an
 * option and lists without its filters does not compile, rather than accept the option and ignore it.
 */
export type FiltersOf<O extends ListOptions> = Exclude<keyof O, keyof ListOptions> extends never ? [filters?: Filters]
  : [filters: Filters]

/** Lists the items `principal` may see, one page at a time. */
export const list = <A, R, O extends ListOptions>(
  ops: Operations,
  spec: ListSpec<A, R>,
  principal: Principal,
  options: O,
  ...[filters = noFilters]: FiltersOf<O>
): Effect.Effect<Page<A>, InvalidArgument | Internal | Unavailable> =>
  Effect.gen(function*() {
    const { digest, order, pageSize, skip, where } = yield* request(spec, options, filters)
    const after = options.pageToken === undefined || options.pageToken === ""
      ? undefined
      : Option.getOrUndefined(yield* PageToken.read(ops.secrets, options.pageToken, digest))
    if (after !== undefined && after.length !== order.length) {
      return yield* InvalidArgument.field("page_token", "is not a page token issued by this service")
    }
    const grants = yield* ops.authorization.grants(principal)
    const visible: Where = filters.own === true
      ? where
      : { ...where, ranges: intersect(yield* visibleWithConditions(ops, spec, principal, grants, where), where.ranges) }
    const repository = spec.repository

    const rows = yield* repository.findRows({ ...visible, order, after, offset: skip, limit: pageSize + 1 })
    const totalCount = yield* repository.count(visible)
    const skipped = skip === 0 || rows.length > 0
      ? skip
      : Math.min(skip, yield* repository.count({ ...visible, order, after }))
    const page = rows.slice(0, pageSize)
    const last = page[page.length - 1]
    const nextPageToken = rows.length > pageSize && last !== undefined
      ? yield* PageToken.issue(ops.secrets, digest, position(order, last))
      : undefined
    const records = yield* repository.decode(page)
    const items = yield* spec.load(records, grants)
    return { items, nextPageToken, totalCount, skipped }
  })
