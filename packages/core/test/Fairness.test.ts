/**
 * The fair scheduler (`Fairness`): a busy fiber gives the event loop a turn about every `turnMillis`, whether it is
 * busy with many quick steps or with a few slow ones (statements of SQLite, which run on the server's thread).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Fairness } from "../src/index.js"

/** Synchronous work for `millis`, as a statement of SQLite holds the thread. */
const busy = (millis: number) => {
  const until = performance.now() + millis
  while (performance.now() < until) {
    // the thread is held
  }
}

/** How many times a timer ran on the event loop while `effect` ran under the fair scheduler. */
const turnsDuring = <A>(effect: Effect.Effect<A>) =>
  Effect.promise(async () => {
    let turns = 0
    const timer = setInterval(() => turns++, 1)
    try {
      await Effect.runPromise(Effect.withScheduler(effect, Fairness.make()))
      return turns
    } finally {
      clearInterval(timer)
    }
  })

describe("Fairness", () => {
  it.live("a run of slow steps, far fewer than Effect's 2,048 between yields, lets the event loop in between", () =>
    Effect.gen(function*() {
      // 60 steps of 5 ms: 300 ms, a turn due every 10 ms (and looked for every few steps).
      const turns = yield* turnsDuring(Effect.forEach(Array.from({ length: 60 }), () => Effect.sync(() => busy(5))))
      assert.isAtLeast(turns, 5)
    }))

  it.live("many quick steps let the event loop in between", () =>
    Effect.gen(function*() {
      const turns = yield* turnsDuring(
        Effect.forEach(Array.from({ length: 2_000 }), () => Effect.sync(() => busy(0.05)))
      )
      assert.isAtLeast(turns, 5)
    }))
})
