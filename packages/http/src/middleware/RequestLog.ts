/**
 * The outermost piece of the server's middleware: gives each request an id (its `x-request-id`, a field of every line
 * logged while it is answered, an attribute of its span) and, once it is answered, writes its log line and records
 * its metrics. The pieces inside note what the line should say on its `CurrentRequest`.
 */
import { ChangeLog } from "@arbor/core"
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as Logs from "../Logs.js"
import * as Metrics from "../Metrics.js"
import * as CurrentRequest from "./CurrentRequest.js"

/** Request ids: unique within this process's life (its start time and a counter), cheap to make. */
const processTag = Date.now().toString(36)
let requests = 0
const nextId = () => `${processTag}-${(++requests).toString(36)}`

/**
 * Sets an attribute of the request's span, when there is one: `Effect.annotateCurrentSpan` fails inside when there is
 * none, and its error's stack trace costs more than the rest of this middleware.
 */
const onSpan = (key: string, value: string) =>
  Effect.withFiberRuntime((fiber) => {
    const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
    if (Option.isSome(span) && span.value._tag === "Span") span.value.attribute(key, value)
    return Effect.void
  })

/** `app` with a request id, its log line and its metrics. */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const current = CurrentRequest.begin(request, nextId())
    const started = performance.now()
    yield* onSpan("arbor.request_id", current.id)
    const response = yield* ChangeLog.withRequestId(current.id)(app)
    const millis = performance.now() - started
    const path = request.url.split("?")[0]!
    yield* Logs.request({
      requestId: current.id,
      method: request.method,
      path,
      status: response.status,
      ms: Math.round(millis * 10) / 10,
      ...(current.grpcStatus === undefined ? {} : { grpcStatus: current.grpcStatus }),
      ...(current.denied === undefined ? {} : { denied: current.denied })
    })
    yield* current.grpcStatus === undefined
      ? Metrics.recordRequest(request.method, path, response.status, millis / 1000)
      : Metrics.recordCall(path, current.grpcStatus, millis / 1000)
    return HttpServerResponse.setHeader(response, "x-request-id", current.id)
  })
