import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Logs from "../src/Logs.js"

/** What `effect` writes to standard output once its batch is flushed, line by line. */
const printed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const write = process.stdout.write
    process.stdout.write = ((chunk: string) => {
      lines.push(...chunk.split("\n").filter((l) => l !== ""))
      return true
    }) as typeof process.stdout.write
    try {
      yield* effect
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    } finally {
      process.stdout.write = write
    }
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  })

const fields = { requestId: "r-1", method: "GET", path: "/iam/v2beta1/groups", status: 200, ms: 1.5 }
const general = Effect.annotateLogs(Effect.logInfo("request"), fields)
const comparable = ({ fiberId: _, timestamp, ...rest }: Record<string, unknown>) => {
  assert.match(String(timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  return rest
}

let expected: { readonly traceId: string; readonly spanId: string } | undefined

describe("Logs", () => {
  it.live("a request's line is the line Effect's JSON logger writes for the same fields, batched", () =>
    Effect.gen(function*() {
      const [fast, slow, other] = yield* printed(Effect.all([Logs.request(fields), general, Effect.logInfo("other")]))
      assert.deepStrictEqual(comparable(fast!), comparable(slow!))
      assert.deepStrictEqual(comparable(fast!), {
        message: "request",
        logLevel: "INFO",
        annotations: fields,
        spans: {}
      })
      assert.strictEqual(other?.message, "other")
    }).pipe(Effect.provide(Logs.layer)))

  it.live("a line logged inside a span carries the span's trace and span ids", () =>
    Effect.gen(function*() {
      const [inside, outside] = yield* printed(
        Effect.gen(function*() {
          const span = yield* Effect.withSpan(
            Effect.zipRight(Effect.logWarning("inside"), Effect.currentSpan),
            "work"
          )
          yield* Effect.logWarning("outside")
          return span
        }).pipe(Effect.tap((span) => Effect.sync(() => (expected = span))))
      )
      assert.strictEqual(inside?.traceId, expected?.traceId)
      assert.strictEqual(inside?.spanId, expected?.spanId)
      assert.isString(inside?.traceId)
      assert.isUndefined(outside?.traceId)
    }).pipe(Effect.provide(Logs.layer)))

  it.live("under another logger, a request's line is an ordinary log line with its fields as annotations", () =>
    Effect.gen(function*() {
      const seen: Array<Record<string, unknown>> = []
      const capture = Logger.add(Logger.make(({ annotations, message }) => {
        seen.push({ message, ...Object.fromEntries(annotations) })
      }))
      const lines = yield* printed(Logs.request(fields).pipe(Effect.provide(capture)))
      assert.deepStrictEqual(seen, [{ message: ["request"], ...fields }])
      assert.strictEqual(lines.length, 1, "this module's logger still writes it")
    }).pipe(Effect.provide(Logs.layer)))

  it.live("below the minimum level, or where this logger is not installed, nothing is written", () =>
    Effect.gen(function*() {
      const belowMinimum = Logs.request(fields).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
      assert.deepStrictEqual(yield* printed(belowMinimum.pipe(Effect.provide(Logs.layer))), [])
      for (const silence of [Logger.remove(Logger.defaultLogger), Logger.replace(Logger.defaultLogger, Logger.none)]) {
        assert.deepStrictEqual(yield* printed(Logs.request(fields).pipe(Effect.provide(silence))), [])
      }
    }))
})
