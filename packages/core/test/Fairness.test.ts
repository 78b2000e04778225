/**
 * The fair scheduler (`Fairness`): a fiber busy with many quick steps gives the event loop a turn about every
 * `turnMillis`, where Effect's own scheduler gives it none until the fiber is done.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Fairness } from "../src/index.js"

/** Synchronous work for `millis`. */
const busy = (millis: number) => {
  const until = performance.now() + millis
  while (performance.now() < until) {
    // the thread is held
  }
}

describe("Fairness", () => {
  it.live("a fiber of many quick steps lets the event loop in between", () =>
    Effect.promise(async () => {
      let turns = 0
      const timer = setInterval(() => turns++, 1)
      try {
        // 20,000 steps of 10 µs: 200 ms, a turn due every 10 ms.
        const work = Effect.forEach(Array.from({ length: 20_000 }), () => Effect.sync(() => busy(0.01)))
        await Effect.runPromise(Effect.withScheduler(work, Fairness.make()))
      } finally {
        clearInterval(timer)
      }
      assert.isAtLeast(turns, 5)
    }))
})
