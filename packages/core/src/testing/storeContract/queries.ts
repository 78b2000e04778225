/**
 * The storage contract's queries: ranges, conditions, text order, and find and count against the reference.
 */
import { assert, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { Condition, Query, Row, Where } from "../../engine/Store.js"
import * as Store from "../../engine/Store.js"
import * as Uid from "../../engine/Uid.js"
import * as Group from "../../iam/Group.js"
import * as RoleBinding from "../../iam/RoleBinding.js"
import * as Advisory from "../../registry/Advisory.js"
import * as Tag from "../../registry/Tag.js"
import {
  byUid,
  child,
  group,
  materialize,
  queryArbitrary,
  reference,
  root,
  rowsArbitrary,
  runnerOf,
  uids
} from "./support.js"

/** The storage contract's queries, against `layer`. */
export const queries = <E>(layer: Layer.Layer<Store.Store, E>): void => {
  const { run, seed } = runnerOf(layer)

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
}
