/**
 * Following the change log in process (`Events`) when the store is out of reach: a follower is told Unavailable, as
 * every other reader is (DECISIONS §20), so that a watch ends with a final event saying so rather than a defect.
 */
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Events } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { connectionLost, engineOver } from "./fixtures.js"

describe("Events", () => {
  it.effect("a follower that starts while the store is out of reach fails with Unavailable, not a defect", () =>
    Effect.gen(function*() {
      let armed = false
      const engine = engineOver((store) => ({
        settledPosition: Effect.suspend(() => armed ? connectionLost() : store.settledPosition)
      }))
      yield* Effect.gen(function*() {
        const events = yield* Events.Events
        armed = true
        yield* Refusal.tagged(events.relay(undefined, { offer: () => true, take: () => Effect.void }), "Unavailable")
      }).pipe(Effect.provide(engine))
    }))
})
