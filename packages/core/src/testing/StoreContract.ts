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
import { describe } from "@effect/vitest"
import type * as Layer from "effect/Layer"
import type * as Store from "../engine/Store.js"
import { queries } from "./storeContract/queries.js"
import { rows } from "./storeContract/rows.js"
import { transactions } from "./storeContract/transactions.js"

export { reference } from "./storeContract/support.js"

/** Runs the storage contract against `layer`, by concern (as OpenFGA splits its conformance suite). */
export const suite = <E>(name: string, layer: Layer.Layer<Store.Store, E>): void => {
  describe(`storage contract: ${name}`, () => {
    rows(layer)
    queries(layer)
    transactions(layer)
  })
}
