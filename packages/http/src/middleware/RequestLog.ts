/**
 * The outermost piece of the server's middleware: gives each request an id (its `x-request-id`, an annotation of
 * everything logged while it runs, an attribute of its span) and, once it is answered, writes its log line and
 * records its metrics. The pieces inside note what the line should say through `CurrentRequest`.
 */
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Logs from "../Logs.js"
import * as Metrics from "../Metrics.js"

/** The request being answered, as the pieces of the middleware share it. */
export interface Request {
  readonly id: string
  /** The gRPC status, when the request was a gRPC call. */
  grpcStatus: number | undefined
  /** Why permission was denied (for the log only, never the client). */
  denied: string | undefined
}

/** The request being answered. */
export class CurrentRequest extends Context.Tag("@arbor/http/CurrentRequest")<CurrentRequest, Request>() {}

/** Request ids: unique within this process's life (its start time and a counter), cheap to make. */
const processTag = Date.now().toString(36)
let requests = 0
const nextId = () => `${processTag}-${(++requests).toString(36)}`

/** `app` with a request id, its log line and its metrics. */
export const middleware = <E, R>(
  app: HttpApp.Default<E, R | CurrentRequest>
): HttpApp.Default<E, Exclude<R, CurrentRequest>> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const current: Request = { id: nextId(), grpcStatus: undefined, denied: undefined }
    const started = performance.now()
    yield* Effect.annotateCurrentSpan("arbor.request_id", current.id)
    const response = yield* app.pipe(
      Effect.provideService(CurrentRequest, current),
      Effect.annotateLogs("requestId", current.id)
    )
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
