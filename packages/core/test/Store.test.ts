import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import { Store } from "../src/index.js"

describe("Store.compareText", () => {
  it("orders strings as their UTF-8 bytes do", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.fullUnicodeString(), FastCheck.fullUnicodeString(), (a, b) => {
        assert.strictEqual(
          Math.sign(Store.compareText(a, b)),
          Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
          JSON.stringify([a, b])
        )
      }),
      { numRuns: 5000 }
    )
    assert.isBelow(Store.compareText("\uFFFD", "😀"), 0, "U+FFFD before U+1F600, though its code unit is larger")
  })
})
