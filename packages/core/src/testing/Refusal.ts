/**
 * Expected refusals in tests, said as such: the error an operation failed with, or, when it succeeded instead, a
 * failure that says so ("expected a refusal, got …", with what it returned). `Effect.flip` of an effect that succeeds
 * fails with the value itself, and the test then reports a resource where it should report a missed refusal.
 */
import * as Effect from "effect/Effect"
import { inspect } from "node:util"

const shown = (value: unknown) => inspect(value, { depth: 3, breakLength: Infinity }).slice(0, 2_000)

/** The error `effect` fails with; a defect "expected a refusal, got …" when it succeeds. */
export const of = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.matchEffect(effect, {
    onFailure: Effect.succeed,
    onSuccess: (value) => Effect.dieMessage(`expected a refusal, got ${shown(value)}`)
  })

/** The error `effect` fails with, which must be tagged `tag`: else a defect naming the tag and what came instead. */
export const tagged = <A, E extends { readonly _tag: string }, R, T extends E["_tag"]>(
  effect: Effect.Effect<A, E, R>,
  tag: T
): Effect.Effect<Extract<E, { readonly _tag: T }>, never, R> => {
  const isTagged = (error: E): error is Extract<E, { readonly _tag: T }> => error._tag === tag
  return Effect.matchEffect(effect, {
    onFailure: (error) =>
      isTagged(error)
        ? Effect.succeed(error)
        : Effect.dieMessage(`expected a refusal tagged ${tag}, got ${error._tag}: ${shown(error)}`),
    onSuccess: (value) => Effect.dieMessage(`expected a refusal tagged ${tag}, got ${shown(value)}`)
  })
}
