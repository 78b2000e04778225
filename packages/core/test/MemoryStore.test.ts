import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as MemoryStore from "../src/engine/MemoryStore.js"
import { Store } from "../src/engine/Store.js"
import { ConcurrencySuite, StoreContract } from "../src/testing/index.js"

StoreContract.suite("memory", MemoryStore.layer)
// Two engines on one in-memory store, as an embedder with two runtimes over one store has them.
ConcurrencySuite.suite("memory", Effect.map(MemoryStore.make, (store) => Layer.succeed(Store, store)))
