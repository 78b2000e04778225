/**
 * The outermost piece of the server's middleware: gives each request an id (its `x-request-id`, a field of every line
 * logged while it is answered, an attribute of its span, the change log's `requestId`) and, once it is answered,
 * writes its log line and records its metrics. The pieces inside note what the line should say on its
 * `CurrentRequest`. A client's own `X-Request-ID` is echoed in the answer's (AuthZEN 1.0 §10.1.1, and what proxies
 * expect) and logged beside the server's id as `clientRequestId`; the server's id stays the one its records carry,
 * which a client cannot choose.
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

/** A client's `X-Request-ID`, when it is one to echo: printable ASCII, at most 200 characters. */
const clientRequestId = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const sent = request.headers["x-request-id"]
  return sent !== undefined && sent.length <= 200 && /^[\x20-\x7e]+$/.test(sent) ? sent : undefined
}

/** `app` with a request id, its log line and its metrics. */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const current = CurrentRequest.begin(request, nextId())
    const echoed = clientRequestId(request)
    const started = performance.now()
    yield* onSpan("arbor.request_id", current.id)
    const response = yield* ChangeLog.withRequestId(current.id)(app)
    const millis = performance.now() - started
    const path = request.url.split("?")[0]!
    yield* Logs.request({
      requestId: current.id,
      ...(echoed === undefined ? {} : { clientRequestId: echoed }),
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
    return HttpServerResponse.setHeader(response, "x-request-id", echoed ?? current.id)
  })
