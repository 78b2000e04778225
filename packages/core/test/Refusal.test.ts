import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Errors } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"

/** What a test that expected a refusal would report. */
const reported = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(effect), (exit) => Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "succeeded")

describe("Refusal (a test's expected refusal)", () => {
  it.effect("gives the error; an operation that succeeded instead is reported as a missed refusal, with what it returned", () =>
    Effect.gen(function*() {
      const denied = new Errors.PermissionDenied({ capability: "groups.list", resource: "x" })
      assert.strictEqual(yield* Refusal.of(Effect.fail(denied)), denied)
      assert.match(
        yield* reported(Refusal.of(Effect.succeed({ name: "kept" }))),
        /expected a refusal, got \{ name: 'kept' \}/
      )
      assert.strictEqual(yield* Refusal.tagged(Effect.fail(denied), "PermissionDenied"), denied)
      const other = Effect.fail(new Errors.NotFound({ resourceType: "group", uid: "x" })) as Effect.Effect<
        never,
        Errors.NotFound | Errors.PermissionDenied
      >
      assert.match(
        yield* reported(Refusal.tagged(other, "PermissionDenied")),
        /expected a refusal tagged PermissionDenied, got NotFound/
      )
    }))
})
