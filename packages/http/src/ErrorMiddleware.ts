/**
 * The server's outermost middleware: request ids, one log line and the metrics of every request, gRPC calls handed
 * to `Grpc`, the request limits (`RequestLimits`), and the rendering of every failure (engine errors, undecodable
 * parameters and bodies, unknown routes and methods, defects) as a google.rpc.Status body. No framework default
 * error body reaches a client.
 */
import { isArborError, render } from "@arbor/api/ErrorBody"
import { Errors, Validation } from "@arbor/core"
import { HttpApiBuilder, type HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Grpc from "./Grpc.js"
import * as Logs from "./Logs.js"
import * as Metrics from "./Metrics.js"
import * as RequestLimits from "./RequestLimits.js"

interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly _tag?: string
}

/** Undecodable parameters or bodies as one violation per field. */
const fromIssues = (issues: ReadonlyArray<Issue>): Errors.InvalidArgument => {
  const seen = new Set<string>()
  const violations: Array<Errors.FieldViolation> = []
  for (const issue of issues) {
    const field = Validation.fieldName(issue.path)
    if (seen.has(field)) continue
    seen.add(field)
    violations.push(
      new Errors.FieldViolation({ field, description: issue._tag === "Missing" ? "is required" : issue.message })
    )
  }
  const [first, ...rest] = violations
  return first === undefined
    ? Errors.InvalidArgument.field("request", "is not valid")
    : new Errors.InvalidArgument({ violations: [first, ...rest] })
}

/** The engine error a failure stands for, or undefined for an unexpected one (a defect). */
const classify = (error: unknown, request: HttpServerRequest.HttpServerRequest): Errors.ArborError | undefined => {
  if (isArborError(error)) return error
  const tag = (error as { _tag?: string })?._tag
  switch (tag) {
    case "HttpApiDecodeError":
    case "ParseError":
      return fromIssues((error as { issues?: ReadonlyArray<Issue> }).issues ?? [])
    case "RouteNotFound":
      return new Errors.NotFound({ resourceType: "route", uid: `${request.method} ${request.url.split("?")[0]}` })
  }
  // A body that `RequestLimits` already read, checked for size and encoding, and kept: what fails now is its JSON.
  if (error instanceof HttpServerError.RequestError) {
    return new Errors.InvalidArgument({
      violations: [
        new Errors.FieldViolation({
          field: "body",
          description: error.reason === "Decode" ? "is not valid JSON" : "could not be read"
        })
      ],
      reason: "MALFORMED_BODY"
    })
  }
  return undefined
}

/** Request ids: unique within this process's life (its start time and a counter), cheap to make. */
const processTag = Date.now().toString(36)
let requests = 0
const requestId = () => `${processTag}-${(++requests).toString(36)}`

/** The middleware, with `domain` as every error's `ErrorInfo.domain`; gRPC calls go to `Grpc`, the rest to the API. */
export const layer = (domain: string) =>
  HttpApiBuilder.middleware(Effect.map(Grpc.Grpc, (grpc) => (app: HttpApp.Default) =>
    Effect.gen(function*() {
      const original = yield* HttpServerRequest.HttpServerRequest
      const id = requestId()
      const started = performance.now()
      const path = original.url.split("?")[0]!
      /** The request's log line, with `annotations`, and its metrics, recorded by `record` with its seconds. */
      const log = (
        status: number,
        annotations: Record<string, string | number>,
        record: (seconds: number) => Effect.Effect<void>
      ) => {
        const millis = performance.now() - started
        return Effect.zipRight(
          Logs.request({
            requestId: id,
            method: original.method,
            path,
            status,
            ms: Math.round(millis * 10) / 10,
            ...annotations
          }),
          record(millis / 1000)
        )
      }
      if (grpc.handles(path)) {
        const response = NodeHttpServerRequest.toServerResponse(original)
        response.setHeader("x-request-id", id)
        const outcome = yield* Effect.promise(() =>
          grpc.serve(NodeHttpServerRequest.toIncomingMessage(original), response)
        )
        yield* log(
          response.statusCode,
          { grpcStatus: outcome.code, ...(outcome.denied === undefined ? {} : { denied: outcome.denied }) },
          (seconds) => Metrics.recordCall(path, outcome.code, seconds)
        )
        // Already answered on the Node response: the platform writes nothing more.
        return HttpServerResponse.empty({ status: response.statusCode })
      }
      let logDetail: string | undefined
      const respond = (error: Errors.ArborError) => {
        if (error._tag === "PermissionDenied") logDetail = error.logDetail
        const rendered = render(error, domain)
        return HttpServerResponse.unsafeJson(rendered.body, { status: rendered.status, headers: rendered.headers })
      }
      const request = yield* RequestLimits.admit(original)
      const response = Predicate.isTagged(request, "InvalidArgument")
        ? respond(request)
        : yield* (request === original ? app : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request))
          .pipe(
            Effect.catchAllCause((cause) => {
              // Some request errors (a malformed JSON body) arrive as defects: classify those too.
              const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
              const known = Option.isSome(failure) ? classify(failure.value, original) : undefined
              if (known !== undefined) return Effect.succeed(respond(known))
              // A client that went away interrupts its request: nothing to report, and nobody to answer.
              if (Cause.isInterruptedOnly(cause)) {
                return Effect.succeed(respond(new Errors.Internal({ reason: "CANCELLED" })))
              }
              return Effect.as(
                Effect.logError("request failed", cause).pipe(Effect.annotateLogs({ requestId: id })),
                respond(new Errors.Internal({}))
              )
            })
          )
      yield* log(
        response.status,
        logDetail === undefined ? {} : { denied: logDetail },
        (seconds) => Metrics.recordRequest(original.method, path, response.status, seconds)
      )
      return HttpServerResponse.setHeader(response, "x-request-id", id)
    })))
