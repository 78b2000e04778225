/**
 * The storage contract's transactions: claims, positions, nesting, serializing, isolation and interruption.
 */
import { assert, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type { Row } from "../../engine/Store.js"
import * as Store from "../../engine/Store.js"
import * as Uid from "../../engine/Uid.js"
import * as ChangeLog from "../../events/ChangeLog.js"
import * as Group from "../../iam/Group.js"
import { byUid, child, group, root, runnerOf, uids } from "./support.js"

/** The storage contract's transactions, against `layer`. */
export const transactions = <E>(layer: Layer.Layer<Store.Store, E>): void => {
  const { run } = runnerOf(layer)

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
      // Nothing of this store is still being written, so every committed row is final once the transactions open
      // now end: at once on a quiet database; a little later where others share it (PostgreSQL's snapshot is the
      // cluster's, whose other databases other tests may be writing).
      const last = yield* positionOf(4)
      const settled = yield* store.settledPosition.pipe(
        Effect.filterOrFail((position) => position === undefined || position > last, () => "not settled yet"),
        Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 1_000 }),
        Effect.orElse(() => store.settledPosition)
      )
      if (settled !== undefined) assert.isTrue(settled > last, `settled ${settled}`)
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
}
