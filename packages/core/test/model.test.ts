import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as TestContext from "effect/TestContext"
import * as MemoryStore from "../src/engine/MemoryStore.js"
import { Store } from "../src/engine/Store.js"
import { ModelSuite } from "../src/testing/index.js"

ModelSuite.suite("memory", MemoryStore.layer)

/** A store with a bug the suite must find: deleting role bindings does nothing, so a revoked role stays held. */
const keepsRevokedBindings = Layer.effect(
  Store,
  Effect.map(Store, (store) => ({
    ...store,
    delete: (table, where) => table.name === "role_bindings" ? Effect.succeed(0) : store.delete(table, where)
  }))
).pipe(Layer.provide(MemoryStore.layer))

describe("model-based suite", () => {
  it.live("finds a store's bug and shrinks it to a handful of commands", () =>
    Effect.gen(function*() {
      const result = yield* Effect.promise(() =>
        FastCheck.check(
          FastCheck.asyncProperty(
            ModelSuite.commands,
            (steps) =>
              Effect.runPromise(
                ModelSuite.run(keepsRevokedBindings, steps).pipe(Effect.provide(TestContext.TestContext))
              )
          ),
          { numRuns: 50, seed: 1 }
        )
      )
      assert.isTrue(result.failed, "the bug went unnoticed")
      const [shrunk] = result.counterexample!
      const steps = [...shrunk].map(String)
      assert.isAtMost(steps.length, 3, String(shrunk))
      assert.isTrue(steps.some((step) => step.startsWith("Unbind")), String(shrunk))
      // The counterexample reads in names, and its failure says which check of which list, page and options failed.
      const unbind = steps.find((step) => step.startsWith("Unbind"))!
      assert.match(unbind, /\(binding [a-z/]+ → [a-z ]+ at [a-z/]+\)$/)
      const failure = String(result.errorInstance)
      // The command and what it picked (after its outcome, when the outcome is what differed).
      const [command, picked] = [unbind.slice(0, unbind.indexOf(" (")), unbind.slice(unbind.indexOf(" ("))]
      assert.include(failure, command)
      assert.include(failure, picked)
      assert.match(
        failure,
        /lists \w+.*, page \d+ \(page_size \d+, skip \d+.*\): (the page's items|skipped|totalCount|a nextPageToken)|gained|at [a-z/]+ |expected '\w+' to equal '\w+'/
      )
    }), { timeout: 300_000 })
})
