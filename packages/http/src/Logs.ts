/**
 * The server's logs: one JSON object per line on standard output, in the shape of Effect's JSON logger, with the
 * `requestId` of the request it was logged for and the `traceId` and `spanId` of the span it was logged in. Lines are
 * batched and written once per turn of the event loop (and at exit), so a request pays for formatting its line,
 * not for a write to the terminal or pipe. The line of each request (`request`) skips Effect's general logging path
 * when no other logger would see it (only this one, and the tracer's without a span to add to); under any other
 * logger (an embedder's, a test's) it is an ordinary `Effect.logInfo` with annotations.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import type * as Layer from "effect/Layer"
import * as List from "effect/List"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as CurrentRequest from "./middleware/CurrentRequest.js"

const pending: Array<string> = []
let scheduled = false
let hooked = false

const flush = () => {
  scheduled = false
  if (pending.length === 0) return
  const text = pending.join("\n") + "\n"
  pending.length = 0
  process.stdout.write(text)
}

const write = (line: string) => {
  pending.push(line)
  if (!hooked) {
    hooked = true
    process.on("exit", flush)
  }
  if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}

/** Effect's JSON line, with the request it was logged for and the span it was logged in (if any). */
const logger = Logger.make((options) => {
  const line = Logger.jsonLogger.log(options)
  const context = FiberRefs.getOrDefault(options.context, FiberRef.currentContext)
  const requestId = CurrentRequest.idIn(context)
  const span = Context.getOption(context, Tracer.ParentSpan)
  const extra = [
    ...(requestId === undefined ? [] : [`"requestId":${JSON.stringify(requestId)}`]),
    ...(Option.isNone(span)
      ? []
      : [`"traceId":${JSON.stringify(span.value.traceId)}`, `"spanId":${JSON.stringify(span.value.spanId)}`])
  ]
  write(extra.length === 0 ? line : `${line.slice(0, -1)},${extra.join(",")}}`)
})

/** JSON lines on standard output, batched, replacing the default logger. */
export const layer: Layer.Layer<never> = Logger.replace(Logger.defaultLogger, logger)

/** True when a log line from `fiber` would reach this module's logger and no other. */
const onlyOurs = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean => {
  let ours = false
  for (const each of fiber.getFiberRef(FiberRef.currentLoggers)) {
    if (each === logger) ours = true
    else if (
      each !== Logger.tracerLogger || Option.isSome(Context.getOption(fiber.currentContext, Tracer.ParentSpan))
    ) return false
  }
  return ours
}

/** The line of one request, at level INFO, its fields as annotations. */
export const request = (fields: Readonly<Record<string, string | number>>): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    if (
      !onlyOurs(fiber) || HashMap.size(fiber.getFiberRef(FiberRef.currentLogAnnotations)) > 0 ||
      List.isCons(fiber.getFiberRef(FiberRef.currentLogSpan))
    ) {
      return Effect.annotateLogs(Effect.logInfo("request"), fields)
    }
    if (LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)) return Effect.void
    write(JSON.stringify({
      message: "request",
      logLevel: LogLevel.Info.label,
      timestamp: new Date().toISOString(),
      annotations: fields,
      spans: {},
      fiberId: FiberId.threadName(fiber.id())
    }))
    return Effect.void
  })
