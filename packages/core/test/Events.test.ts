/**
 * Following the change log in process (`Events`) when the store is out of reach: a follower is told Unavailable, as
 * every other reader is (DECISIONS §20), so that a watch ends with a final event saying so rather than a defect.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { Arbor, Events, MemoryStore, Secrets, Store } from "../src/index.js"

describe("Events", () => {
  it.effect("a follower that starts while the store is out of reach fails with Unavailable, not a defect", () =>
    Effect.gen(function*() {
      let armed = false
      const faulty = Layer.effect(
        Store.Store,
        Effect.map(MemoryStore.MemoryStore, (store): Store.StoreService => ({
          ...store,
          settledPosition: Effect.suspend(() =>
            armed
              ? Effect.fail(new Store.StoreError({ cause: "connection reset", unavailable: true }))
              : store.settledPosition
          )
        }))
      ).pipe(Layer.provideMerge(MemoryStore.layer))
      yield* Effect.gen(function*() {
        const events = yield* Events.Events
        armed = true
        const exit = yield* Effect.exit(events.relay(undefined, { offer: () => true, take: () => Effect.void }))
        assert.isTrue(Exit.isFailure(exit) && Cause.isFailType(exit.cause), String(exit))
        assert.strictEqual(Exit.isFailure(exit) && Cause.isFailType(exit.cause) && exit.cause.error._tag, "Unavailable")
      }).pipe(Effect.provide(Arbor.layer.pipe(Layer.provideMerge(faulty), Layer.provide(Secrets.layerEphemeral))))
    }))
})
