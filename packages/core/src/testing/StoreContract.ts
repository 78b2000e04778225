/**
 * The storage contract: the behaviour every adapter of the `Store` port must have. An adapter's test file runs it
 * against the adapter's Layer:
 *
 * ```ts
 * import { StoreContract } from "@arbor/core/testing"
 * StoreContract.suite("sqlite :memory:", SqliteStore.layer({ filename: ":memory:" }))
 * ```
 *
 * Each test builds the Layer afresh, so it must give an empty store every time it is built.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Condition, OrderKey, Query, Row, Scalar, Where } from "../engine/Store.js"
import * as Store from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Group from "../iam/Group.js"
import * as Identity from "../iam/Identity.js"
import * as RoleBinding from "../iam/RoleBinding.js"
import * as Advisory from "../registry/Advisory.js"
import * as Tag from "../registry/Tag.js"

const root = (n: number) => n.toString(16).padStart(40, "0")
const child = (parent: string, n: number) => `${parent}/${n.toString(16).padStart(16, "0")}`

const group = (uid: string, name: string, t = 1000, extra: Partial<Row> = {}): Row => ({
  uid,
  parent: Uid.parentOrNull(uid as Uid.Uid),
  name,
  description: `group ${name}`,
  verified: false,
  createTime: t,
  updateTime: t,
  ...extra
})

const byUid: ReadonlyArray<OrderKey> = [{ column: "uid", direction: "asc" }]

const uids = (rows: ReadonlyArray<Row>) => rows.map((r) => r.uid)

/**
 * The order every store sorts scalars in, worked out here on its own terms rather than with the stores' comparator:
 * null first, then numbers, booleans, and strings by their UTF-8 bytes. (A column holds one type of scalar.)
 */
const scalarOrder = (a: unknown, b: unknown): number => {
  const rank = (
    v: unknown
  ) => (v === null || v === undefined ? 0 : typeof v === "number" ? 1 : typeof v === "boolean" ? 2 : 3)
  if (rank(a) !== rank(b)) return rank(a) < rank(b) ? -1 : 1
  if (typeof a === "number" && typeof b === "number") return Math.sign(a - b)
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b)
  if (typeof a === "string" && typeof b === "string") return Math.sign(utf8Order(a, b))
  return 0
}

const utf8 = new TextEncoder()
const utf8Order = (a: string, b: string): number => {
  const [x, y] = [utf8.encode(a), utf8.encode(b)]
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return x.length - y.length
}

/** Whether a row meets one condition, as the storage port documents each kind. */
const holds = (row: Row, condition: Condition): boolean => {
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

/** Runs the storage contract against `layer`. */
export const suite = <E>(name: string, layer: Layer.Layer<Store.Store, E>): void => {
  const run = <A, E2>(effect: Effect.Effect<A, E2, Store.Store>) => Effect.provide(effect, layer)

  const seed = (rows: ReadonlyArray<Row>) =>
    Effect.flatMap(Store.Store, (store) => Effect.forEach(rows, (r) => store.insert(Group.table, r), { discard: true }))

  describe(`storage contract: ${name}`, () => {
    it.effect("stores and returns rows, absent nullable columns as null, json as parsed values", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const g = group(root(1), "acme")
        yield* store.insert(Group.table, g)
        assert.deepStrictEqual(yield* store.get(Group.table, g.uid), Option.some(g))
        assert.isTrue(Option.isNone(yield* store.get(Group.table, root(2))))

        const identity: Row = {
          uid: child(root(1), 1),
          parent: root(1),
          name: "ci",
          description: "",
          claimMatch: { issuer: "https://issuer.example", claims: { ref: "main" }, list: [1, "two", true, null] },
          lastSeenTime: 5,
          createTime: 5,
          updateTime: 5
        }
        yield* store.insert(Identity.table, identity)
        const back = yield* store.get(Identity.table, identity.uid)
        assert.deepStrictEqual(back, Option.some({ ...identity, staticKeys: null, email: null, emailUnverified: null }))
        assert.deepStrictEqual(yield* store.getMany(Group.table, [root(2), g.uid]), [g])
      })))

    it.effect("keeps version rows: each bump a new value, read back by any reader; a rolled-back bump undone", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        assert.strictEqual(yield* Versions.current(Versions.grants), "")
        yield* Versions.bump(Versions.grants)
        const first = yield* Versions.current(Versions.grants)
        assert.notStrictEqual(first, "")
        yield* Versions.bump(Versions.grants)
        const second = yield* Versions.current(Versions.grants)
        assert.notStrictEqual(second, first)
        yield* store.transaction(Effect.zipRight(Versions.bump(Versions.grants), Effect.fail("undo"))).pipe(
          Effect.ignore
        )
        assert.strictEqual(yield* Versions.current(Versions.grants), second)
      })))

    it.effect("a change marker moves with every write its reader sees (or the store says it cannot tell)", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const marker = Effect.withFiberRuntime((fiber) => Effect.succeed(store.changeMarker(fiber)))
        /** True when the marker moved from `before` or cannot tell. */
        const moved = (before: unknown) => Effect.map(marker, (now) => now === undefined || now !== before)
        const start = yield* marker
        if (start !== undefined) assert.strictEqual(yield* marker, start, "nothing was written")
        yield* seed([group(root(1), "acme")])
        assert.isTrue(yield* moved(start), "a commit")
        yield* store.transaction(Effect.gen(function*() {
          const inside = yield* marker
          yield* store.insert(Group.table, group(root(2), "other"))
          assert.isTrue(yield* moved(inside), "a write of the reader's own transaction")
          return yield* Effect.fail("undo")
        })).pipe(Effect.ignore)
      })))

    it.effect("refuses a duplicate uid and a duplicate unique key, naming the constraint", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        yield* seed([group(root(1), "acme"), group(child(root(1), 1), "team")])
        const sameUid = yield* Effect.flip(store.insert(Group.table, group(root(1), "other")))
        assert.deepStrictEqual([sameUid._tag, sameUid._tag === "UniqueViolation" && sameUid.columns], [
          "UniqueViolation",
          ["uid"]
        ])
        const sameName = yield* Effect.flip(store.insert(Group.table, group(child(root(1), 2), "team")))
        assert.deepStrictEqual(sameName._tag === "UniqueViolation" && sameName.columns, ["parent", "name"])
        const sameRootName = yield* Effect.flip(store.insert(Group.table, group(root(2), "acme")))
        assert.strictEqual(sameRootName._tag, "UniqueViolation", "null parents count as equal")
        yield* store.insert(Group.table, group(child(root(1), 3), "acme"))
        assert.strictEqual(yield* store.count(Group.table, {}), 3)
      })))

    it.effect("inserts many rows at once, all or none, a clash anywhere among them inserting none", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        yield* seed([group(root(1), "acme")])
        yield* store.insertMany(Group.table, [])
        // More than a SQL store binds in one statement.
        const many = Array.from({ length: 3_000 }, (_, i) => group(child(root(1), i + 1), `g${i}`))
        yield* store.insertMany(Group.table, many)
        assert.strictEqual(yield* store.count(Group.table, {}), 3_001)
        assert.deepStrictEqual(yield* store.get(Group.table, many[2_999]!.uid), Option.some(many[2_999]!))
        const more = Array.from({ length: 3_000 }, (_, i) => group(child(root(1), 10_000 + i), `h${i}`))
        for (
          const [rows, columns] of [
            [[...more, group(child(root(1), 20_000), "g7")], ["parent", "name"]],
            [[...more, group(child(root(1), 20_000), "h0")], ["parent", "name"]],
            [[group(many[0]!.uid, "fresh"), ...more], ["uid"]]
          ] as const
        ) {
          const clash = yield* Effect.flip(store.insertMany(Group.table, rows))
          assert.deepStrictEqual(clash._tag === "UniqueViolation" && clash.columns, columns)
          assert.strictEqual(yield* store.count(Group.table, {}), 3_001, "none of them inserted")
        }
        // Inside a transaction, undone with it.
        yield* store.transaction(Effect.zipRight(store.insertMany(Group.table, more), Effect.fail("undo"))).pipe(
          Effect.ignore
        )
        assert.strictEqual(yield* store.count(Group.table, {}), 3_001)
      })))

    it.effect("parts of one whole: a failed part fails the transaction, which changes nothing", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const inserted = (n: number) => store.transaction(store.insert(Group.table, group(root(n), `o${n}`)))
        yield* store.transaction(Store.asOneWhole(Effect.all([inserted(1), inserted(2)])))
        const failed = yield* Effect.exit(
          store.transaction(Store.asOneWhole(Effect.all([inserted(3), inserted(2)])))
        )
        assert.isTrue(Exit.isFailure(failed))
        assert.deepStrictEqual(uids(yield* store.find(Group.table, { order: byUid })), [root(1), root(2)])
      })))

    it.live("a claim holds until its transaction ends: another transaction's claim meanwhile is false, or waits", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const claimed = yield* Deferred.make<void>()
        const answered = yield* Deferred.make<void>()
        let holding = false
        const holder = yield* Effect.fork(store.transaction(Effect.gen(function*() {
          assert.isTrue(yield* store.claim("x"))
          assert.isTrue(yield* store.claim("x"), "again, by the transaction that holds it")
          holding = true
          yield* Deferred.succeed(claimed, undefined)
          // A store whose transactions run one at a time starts the other only once this one ends.
          yield* Deferred.await(answered).pipe(Effect.timeout("500 millis"), Effect.ignore)
          holding = false
        })))
        yield* Deferred.await(claimed)
        const other = yield* store.transaction(
          Effect.map(store.claim("x"), (claimed) => ({ claimed, whileHeld: holding }))
        )
        yield* Deferred.succeed(answered, undefined)
        yield* Fiber.join(holder)
        assert.deepStrictEqual(other, { claimed: !other.whileHeld, whileHeld: other.whileHeld })
        assert.isTrue(yield* store.transaction(store.claim("x")), "free once its holder ended")
      })))

    it.effect("updates by uid, refusing a unique conflict without changing anything", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const a = group(child(root(1), 1), "a")
        const b = group(child(root(1), 2), "b")
        yield* seed([group(root(1), "acme"), a, b])
        assert.isTrue(yield* store.update(Group.table, { ...a, name: "a2", updateTime: 2000 }))
        assert.deepStrictEqual(
          yield* store.get(Group.table, a.uid),
          Option.some({ ...a, name: "a2", updateTime: 2000 })
        )
        const clash = yield* Effect.flip(store.update(Group.table, { ...b, name: "a2" }))
        assert.strictEqual(clash._tag, "UniqueViolation")
        assert.deepStrictEqual(yield* store.get(Group.table, b.uid), Option.some(b))
        assert.isFalse(yield* store.update(Group.table, group(child(root(1), 9), "z")))
        assert.isTrue(Option.isNone(yield* store.get(Group.table, child(root(1), 9))))
        assert.isTrue(yield* store.update(Group.table, { ...b, name: "a" }), "a name freed by a rename is free")
      })))

    it.effect("deletes what a where matches and says how many", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const org = root(1)
        const rows = [group(org, "acme"), group(child(org, 1), "x"), group(child(child(org, 1), 1), "y")]
        yield* seed(rows)
        assert.strictEqual(yield* store.delete(Group.table, { ranges: [Uid.only(org)] }), 1)
        assert.strictEqual(yield* store.delete(Group.table, { ranges: [Uid.only(org)] }), 0)
        assert.strictEqual(
          yield* store.delete(Group.table, { conditions: [{ _tag: "In", column: "name", values: ["x", "y", "q"] }] }),
          2
        )
        assert.strictEqual(yield* store.count(Group.table, {}), 0)
      })))

    it.effect("ranges follow whole segments: a/b is not an ancestor of a/bc", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const org = root(1)
        const ab = child(org, 0xb)
        const abc = `${org}/${"0".repeat(14)}bc`
        const abChild = child(ab, 1)
        const abcChild = child(abc, 1)
        yield* seed([
          group(org, "o"),
          group(ab, "ab"),
          group(abc, "abc"),
          group(abChild, "abx"),
          group(abcChild, "abcx")
        ])
        const below = yield* store.find(Group.table, { ranges: [Uid.descendants(ab)], order: byUid })
        assert.deepStrictEqual(uids(below), [abChild])
        const subtree = yield* store.find(Group.table, { ranges: [Uid.subtree(ab)], order: byUid })
        assert.deepStrictEqual(uids(subtree), [ab, abChild])
        assert.strictEqual(yield* store.count(Group.table, { ranges: [Uid.descendants(org)] }), 4)
        assert.deepStrictEqual(yield* store.find(Group.table, { ranges: [], order: byUid }), [])
        assert.strictEqual(yield* store.count(Group.table, { ranges: [] }), 0)
        assert.deepStrictEqual(
          yield* store.find(Group.table, { conditions: [{ _tag: "In", column: "uid", values: [] }], order: byUid }),
          []
        )
      })))

    it.effect("conditions compare with null as a value", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        yield* seed([group(root(1), "a"), group(root(2), "b"), group(child(root(1), 1), "c")])
        const roots = yield* store.find(Group.table, {
          conditions: [{ _tag: "Equals", column: "parent", value: null }],
          order: byUid
        })
        assert.deepStrictEqual(uids(roots), [root(1), root(2)])
        const bindings = yield* store.find(RoleBinding.table, { order: byUid })
        assert.deepStrictEqual(bindings, [])
      })))

    it.effect("AtLeast, Below, Overlaps and Contains agree with the reference", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const org = root(1)
        const repo = child(org, 1)
        const tags = [0, 5, 10, 15].map((t, i): Row => ({
          uid: child(repo, i + 1),
          parent: repo,
          name: `t${i}`,
          digest: `sha256:${String(i).repeat(64).slice(0, 64)}`,
          deprecated: i % 2 === 0,
          createTime: t,
          updateTime: t
        }))
        for (const t of tags) yield* store.insert(Tag.table, t)
        const since = yield* store.find(Tag.table, {
          conditions: [{ _tag: "AtLeast", column: "updateTime", value: 10 }],
          order: byUid
        })
        assert.deepStrictEqual(uids(since), uids(tags.slice(2)))
        const before = yield* store.find(Tag.table, {
          conditions: [{ _tag: "Below", column: "updateTime", value: 10 }],
          order: byUid
        })
        assert.deepStrictEqual(uids(before), uids(tags.slice(0, 2)))

        const advisory = (
          i: number,
          aliases: ReadonlyArray<string>,
          types: ReadonlyArray<string>,
          search: string
        ): Row => ({
          uid: child(org, 100 + i),
          parent: org,
          advisoryId: `CGA-${i}`,
          packageName: `p${i % 2}`,
          aliases,
          events: [],
          eventTypes: types,
          latestEventType: types[types.length - 1] ?? "fixed",
          search,
          createTime: i,
          updateTime: i
        })
        const rows = [
          advisory(1, ["CVE-1", "GHSA-a"], ["detection", "fixed"], "curl\ncga-1\ncve-1"),
          advisory(2, ["CVE-2"], ["fixed"], "openssl\ncga-2\ncve-2"),
          advisory(3, [], ["detection"], "curl-rustls\ncga-3"),
          advisory(4, ["GHSA-a"], ["false-positive-determination"], "git\ncga-4\nghsa-a")
        ]
        for (const r of rows) yield* store.insert(Advisory.table, r)
        for (
          const condition of [
            { _tag: "Overlaps", column: "aliases", values: ["GHSA-a", "CVE-2"] },
            { _tag: "Overlaps", column: "aliases", values: [] },
            { _tag: "Overlaps", column: "eventTypes", values: ["detection"] },
            { _tag: "Contains", column: "search", value: "curl" },
            { _tag: "Contains", column: "search", value: "cve-" },
            { _tag: "Contains", column: "search", value: "%" },
            { _tag: "Contains", column: "search", value: "_" },
            { _tag: "In", column: "packageName", values: ["p0"] },
            { _tag: "AtLeast", column: "createTime", value: 3 }
          ] as ReadonlyArray<Condition>
        ) {
          const query: Query = { conditions: [condition], order: byUid }
          assert.deepStrictEqual(
            uids(yield* store.find(Advisory.table, query)),
            uids(reference.find(rows, query)),
            JSON.stringify(condition)
          )
          assert.strictEqual(yield* store.count(Advisory.table, query), reference.find(rows, query).length)
        }
      })))

    it.live("position columns: given at insert, increasing in commit order, kept by updates, never reused", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const entry = (n: number): Row => ({
          uid: child(root(1), n),
          parent: root(1),
          id: `id-${n}`,
          type: "t",
          kind: "group",
          subject: root(1),
          time: n,
          actorSubject: "system",
          actor: { subject: "system" },
          requestId: null,
          body: { n }
        })
        const positionOf = (n: number) =>
          Effect.map(store.get(ChangeLog.table, child(root(1), n)), (row) => String(Option.getOrThrow(row).position))
        yield* store.insert(ChangeLog.table, entry(1))
        yield* store.transaction(Effect.zipRight(store.insert(ChangeLog.table, entry(9)), Effect.fail("undo"))).pipe(
          Effect.ignore
        )
        yield* store.transaction(
          Effect.zipRight(store.insert(ChangeLog.table, entry(2)), store.insert(ChangeLog.table, entry(3)))
        )
        const [p1, p2, p3] = [yield* positionOf(1), yield* positionOf(2), yield* positionOf(3)]
        for (const p of [p1, p2, p3]) assert.match(p, /^[0-9]{40}$/)
        assert.isTrue(p1 < p2 && p2 < p3, `${p1} < ${p2} < ${p3}`)
        assert.isTrue(yield* store.update(ChangeLog.table, { ...entry(2), body: { n: 22 } }))
        assert.strictEqual(yield* positionOf(2), p2)
        yield* store.delete(ChangeLog.table, { ranges: [Uid.only(child(root(1), 3))] })
        yield* store.insert(ChangeLog.table, entry(4))
        assert.isTrue((yield* positionOf(4)) > p3, "a deleted row's position is not given again")
        // Nothing is still being written, so every committed row is final.
        const settled = yield* store.settledPosition
        if (settled !== undefined) assert.isTrue(settled > (yield* positionOf(4)), `settled ${settled}`)
        const after = yield* store.find(ChangeLog.table, {
          conditions: [{ _tag: "AtLeast", column: "position", value: p2 }, {
            _tag: "Below",
            column: "position",
            value: yield* positionOf(4)
          }],
          order: [{ column: "position", direction: "asc" }, { column: "uid", direction: "asc" }]
        })
        assert.deepStrictEqual(after.map((r) => r.id), ["id-2"])
      })))

    it.effect("text sorts by UTF-8 bytes: U+E000 to U+FFFF before characters above U+FFFF", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const sorted = ["a", "ab", "é", "中", "\uE000", "\uFFFD", "𐀀", "😀", "😀a"]
        yield* seed([...sorted].reverse().map((name, i) => group(root(i + 1), name)))
        const order = (direction: "asc" | "desc") =>
          [{ column: "name", direction }, { column: "uid", direction }] as const
        const names = (rows: ReadonlyArray<Row>) => rows.map((r) => r.name)
        assert.deepStrictEqual(names(yield* store.find(Group.table, { order: order("asc") })), sorted)
        assert.deepStrictEqual(names(yield* store.find(Group.table, { order: order("desc") })), [...sorted].reverse())
        const after = yield* store.find(Group.table, { order: order("asc"), after: ["\uFFFD", root(4)] })
        assert.deepStrictEqual(names(after), ["𐀀", "😀", "😀a"])
        const atLeast = yield* store.count(Group.table, {
          conditions: [{ _tag: "AtLeast", column: "name", value: "\uFFFD" }]
        })
        assert.strictEqual(atLeast, 4)
      })))

    it.effect("a nested transaction that fails undoes only its own writes; the outer one recovers and commits", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        yield* store.transaction(Effect.gen(function*() {
          yield* store.insert(Group.table, group(root(1), "kept before"))
          const inner = yield* Effect.exit(store.transaction(Effect.gen(function*() {
            yield* store.insert(Group.table, group(root(2), "undone"))
            yield* store.update(Group.table, group(root(1), "renamed, undone"))
            return yield* Effect.fail("inner")
          })))
          assert.isTrue(Exit.isFailure(inner))
          assert.deepStrictEqual(uids(yield* store.find(Group.table, { order: byUid })), [root(1)])
          const died = yield* Effect.exit(store.transaction(
            Effect.zipRight(store.insert(Group.table, group(root(3), "undone too")), Effect.die("defect"))
          ))
          assert.isTrue(Exit.isFailure(died))
          yield* store.transaction(store.insert(Group.table, group(root(4), "kept inside")))
          yield* store.insert(Group.table, group(root(5), "kept after"))
        }))
        const rows = yield* store.find(Group.table, { order: byUid })
        assert.deepStrictEqual(uids(rows), [root(1), root(4), root(5)])
        assert.strictEqual(rows[0]!.name, "kept before")
      })))

    it.effect("a failed transaction changes nothing, nested ones that succeeded included", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const failed = yield* Effect.exit(store.transaction(Effect.gen(function*() {
          yield* store.insert(Group.table, group(root(1), "a"))
          yield* store.transaction(store.insert(Group.table, group(root(2), "b")))
          assert.strictEqual(yield* store.count(Group.table, {}), 2, "a transaction sees its own writes")
          return yield* Effect.fail("boom")
        })))
        assert.isTrue(Exit.isFailure(failed))
        assert.strictEqual(yield* store.count(Group.table, {}), 0)
        const died = yield* Effect.exit(store.transaction(
          Effect.zipRight(store.insert(Group.table, group(root(3), "c")), Effect.die("defect"))
        ))
        assert.isTrue(Exit.isFailure(died))
        assert.strictEqual(yield* store.count(Group.table, {}), 0)
        yield* store.transaction(Effect.all([
          store.insert(Group.table, group(root(1), "a")),
          store.insert(Group.table, group(root(2), "b"))
        ]))
        assert.strictEqual(yield* store.count(Group.table, {}), 2)
      })))

    it.live("transactions serialize: read-then-write from many fibers loses nothing", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const writers = 8
        const each = 10
        yield* Effect.forEach(
          Array.from({ length: writers }, (_, w) => w),
          (w) =>
            Effect.forEach(Array.from({ length: each }, (_, i) => i), (i) =>
              store.transaction(Effect.gen(function*() {
                const n = yield* store.count(Group.table, {})
                yield* Effect.yieldNow()
                yield* store.insert(Group.table, group(root(1 + w * each + i), `g${n}`))
              })), { discard: true }),
          { concurrency: "unbounded", discard: true }
        )
        const rows = yield* store.find(Group.table, { order: byUid })
        assert.strictEqual(rows.length, writers * each)
        assert.strictEqual(new Set(rows.map((r) => r.name)).size, writers * each, "each write saw every earlier one")
      })))

    it.live("reads outside a transaction never see another transaction's uncommitted writes", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const written = yield* Deferred.make<void>()
        const undo = yield* Deferred.make<void>()
        const writer = yield* Effect.fork(store.transaction(Effect.gen(function*() {
          yield* store.insert(Group.table, group(root(1), "a"))
          yield* Deferred.succeed(written, undefined)
          yield* Deferred.await(undo)
          return yield* Effect.fail("undone")
        })))
        yield* Deferred.await(written)
        // A store may read around the open transaction or wait for its end; either way the row never shows.
        const reader = yield* Effect.fork(Effect.all([
          store.get(Group.table, root(1)),
          store.getMany(Group.table, [root(1)]),
          store.find(Group.table, { order: byUid }),
          store.count(Group.table, {})
        ]))
        yield* Effect.sleep("20 millis")
        yield* Deferred.succeed(undo, undefined)
        yield* Fiber.await(writer)
        const [got, many, found, counted] = yield* Fiber.join(reader)
        assert.deepStrictEqual([Option.isNone(got), many, found, counted], [true, [], [], 0])
        yield* store.transaction(store.insert(Group.table, group(root(1), "a")))
        assert.deepStrictEqual(uids(yield* store.find(Group.table, { order: byUid })), [root(1)], "committed: seen")
      })))

    it.live("an interrupted transaction changes nothing", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const fiber = yield* Effect.fork(store.transaction(
          Effect.zipRight(store.insert(Group.table, group(root(1), "a")), Effect.never)
        ))
        yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(fiber)
        assert.strictEqual(yield* store.count(Group.table, {}), 0)
        yield* store.insert(Group.table, group(root(1), "a"))
        assert.strictEqual(yield* store.count(Group.table, {}), 1)
      })))

    it.live("a transaction interrupted while it waits for another holds up no one after it, and changes nothing unless its body ran", () =>
      run(Effect.gen(function*() {
        const store = yield* Store.Store
        const go = yield* Deferred.make<void>()
        const first = yield* Effect.fork(store.transaction(
          Effect.zipRight(store.insert(Group.table, group(root(1), "a")), Deferred.await(go))
        ))
        yield* Effect.sleep("20 millis")
        const ran = yield* Ref.make(false)
        const waiting = yield* Effect.fork(store.transaction(
          Effect.zipRight(store.insert(Group.table, group(root(2), "b")), Ref.set(ran, true))
        ))
        const after = yield* Effect.fork(store.transaction(store.insert(Group.table, group(root(3), "c"))))
        yield* Effect.sleep("20 millis")
        // Without waiting for it to end: a store may take its lock uninterruptibly, and end it once it holds it.
        yield* Fiber.interruptFork(waiting)
        yield* Deferred.succeed(go, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(after).pipe(
          Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "stuck behind the interrupted one" })
        )
        const exit = yield* Fiber.await(waiting)
        const stored = uids(yield* store.find(Group.table, { order: byUid }))
        // A store whose writers of different rows do not wait for one another (PostgreSQL) may have run the body and
        // committed before the interrupt came, or while it committed (the fiber then ends interrupted all the same):
        // the second row is there only if the body ran, and surely if the fiber succeeded.
        const expected = !(yield* Ref.get(ran))
          ? [root(1), root(3)]
          : Exit.isSuccess(exit)
          ? [root(1), root(2), root(3)]
          : stored.includes(root(2))
          ? [root(1), root(2), root(3)]
          : [root(1), root(3)]
        assert.deepStrictEqual(stored, expected)
      })))

    it.effect.prop(
      "find and count agree with the reference on random rows and queries",
      [rowsArbitrary, queryArbitrary],
      ([rows, q]) =>
        run(Effect.gen(function*() {
          const store = yield* Store.Store
          yield* seed(rows)
          const query = materialize(q, rows)
          const expected = reference.find(rows, query)
          const found = yield* store.find(Group.table, query)
          assert.deepStrictEqual(uids(found), uids(expected))
          const where: Where = { ranges: query.ranges, conditions: query.conditions }
          assert.strictEqual(
            yield* store.count(Group.table, where),
            reference.find(rows, { ...where, order: byUid }).length
          )
          const remaining = reference.find(rows, { ...where, order: query.order, after: query.after }).length
          assert.strictEqual(
            yield* store.count(Group.table, { ...where, order: query.order, after: query.after }),
            remaining
          )
        })),
      { fastCheck: { numRuns: 150 }, timeout: 120_000 }
    )
  })
}

/**
 * Names from ASCII and from both sides of the point where UTF-16 and UTF-8 orders part: U+E000 to U+FFFF sort
 * after every character above U+FFFF in UTF-16 code units, before them in UTF-8 bytes (the order every store keeps).
 */
const names = ["a", "b", "c", "d", "e", "f", "ab", "é", "中", "\uE000", "\uFF5E", "\uFFFD", "😀", "𐀀", "a😀", "a\uFFFD"]

/** A random forest of groups: uids, names (unique among siblings), and times with many ties. */
const rowsArbitrary = FastCheck.array(
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

interface QuerySpec {
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

const queryArbitrary: FastCheck.Arbitrary<QuerySpec> = FastCheck.record({
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
const materialize = (q: QuerySpec, rows: ReadonlyArray<Row>): Query => {
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
