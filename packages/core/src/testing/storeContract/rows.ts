/**
 * The storage contract's rows: stored and read back, versions and markers, unique keys, batches, updates and deletes.
 */
import { assert, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Versions from "../../engine/internal/storage/versions.js"
import type { Row } from "../../engine/Store.js"
import * as Store from "../../engine/Store.js"
import * as Uid from "../../engine/Uid.js"
import * as Group from "../../iam/Group.js"
import * as Identity from "../../iam/Identity.js"
import { byUid, child, group, root, runnerOf, uids } from "./support.js"

/** The storage contract's rows, against `layer`. */
export const rows = <E>(layer: Layer.Layer<Store.Store, E>): void => {
  const { run, seed } = runnerOf(layer)

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
}
