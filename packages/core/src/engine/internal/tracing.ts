import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type * as Tracer from "effect/Tracer"

/** Effect's built-in tracer, which keeps spans in memory and exports them nowhere. */
const builtIn: Tracer.Tracer = Effect.runSync(Effect.tracer)

/**
 * `effect` as a span named `name` (`Groups.get`, `Store.find`) when a tracer is installed that exports spans
 * (OpenTelemetry's, in the server when an OTLP endpoint is set); with Effect's built-in tracer alone, or the tracer
 * off, `effect` as it is. A span costs several microseconds (Effect.fn's, with its two stack captures, about 11),
 * which is the cost of a whole read here, so nobody pays for spans that no one reads. `Effect.fnUntraced`'s pipeable
 * form takes it: `Effect.fnUntraced(function*(…) {…}, operation("Groups.get"))`.
 */
export const operation =
  (name: string, attributes?: Record<string, unknown>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) =>
      spansWanted(fiber) ? Effect.withSpan(effect, name, { attributes, captureStackTrace: false }) : effect
    )

/** True when `fiber` runs under a tracer that exports spans (see `operation`). */
export const spansWanted = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.getFiberRef(FiberRef.currentTracerEnabled) && fiber.currentTracer !== builtIn
