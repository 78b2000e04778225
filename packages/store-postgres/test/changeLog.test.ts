/**
 * The change log's order on PostgreSQL, where writers commit concurrently: an entry whose transaction took its
 * position first but commits last must not be passed over by a reader that goes on from the last position it read.
 */
import { ChangeLog, Events, Store } from "@arbor/core"
import { Refusal } from "@arbor/core/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { freshStore } from "./databases.js"

const org = "0123456789abcdef0123456789abcdef01234567"
const entry = (n: number) => ({
  uid: `${org}/${n.toString(16).padStart(16, "0")}`,
  parent: org,
  id: `entry-${n}`,
  type: "dev.chainguard.api.iam.group.updated.v1",
  kind: "group",
  subject: org,
  time: n,
  actorSubject: "system",
  actor: { subject: "system" },
  requestId: null,
  body: { n }
})

describe("the change log on PostgreSQL", () => {
  it.live("an entry that commits after a later one is read before it, never skipped", () =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      const events = yield* Events.Events
      const ids = (entries: ReadonlyArray<ChangeLog.Entry>) => entries.map((e) => e.id)
      const inserted = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // The first writer takes its position, then waits before committing.
      const first = yield* store.transaction(Effect.gen(function*() {
        yield* store.insert(ChangeLog.table, entry(1))
        yield* Deferred.succeed(inserted, undefined)
        yield* Deferred.await(release)
      })).pipe(Effect.fork)
      yield* Deferred.await(inserted)
      // The second takes a later position and commits at once.
      yield* store.transaction(store.insert(ChangeLog.table, entry(2)))
      assert.deepStrictEqual(ids(yield* events.after(undefined)), [], "nothing is final while the first one runs")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      const both = yield* events.after(undefined)
      assert.deepStrictEqual(ids(both), ["entry-1", "entry-2"])
      assert.deepStrictEqual(ids(yield* events.after(both[0]!.position)), ["entry-2"])

      // Retention: the older entry goes; a cursor from before it is refused, one at it goes on.
      assert.strictEqual(yield* events.prune(2), 1)
      assert.deepStrictEqual(ids(yield* events.after(undefined)), ["entry-2"])
      assert.deepStrictEqual(ids(yield* events.after(both[0]!.position)), ["entry-2"])
      const before = "0".repeat(40)
      assert.strictEqual((yield* Refusal.of(events.after(before)))._tag, "FailedPrecondition")
    }).pipe(Effect.provide(Events.Events.Default.pipe(Layer.provideMerge(freshStore())))))
})
