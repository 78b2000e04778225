/**
 * The request being answered, as the pieces of the middleware and the server's logs share it: its id, and what the
 * pieces inside note for its log line. Kept by the Node request under it, which stays the same when `RequestLimits`
 * normalizes the request, so that nothing is added to each request's context (copying it costs more than the lookup).
 */
import { HttpServerRequest } from "@effect/platform"
import * as Context from "effect/Context"
import * as Option from "effect/Option"

/** The request being answered. */
export interface Request {
  readonly id: string
  /** The gRPC status, when the request was a gRPC call. */
  grpcStatus: number | undefined
  /** Why permission was denied (for the log only, never the client). */
  denied: string | undefined
}

const answering = new WeakMap<object, Request>()

const keyOf = (request: HttpServerRequest.HttpServerRequest): object =>
  typeof request.source === "object" && request.source !== null ? request.source : request

/** Notes `request` as being answered, under `id`. */
export const begin = (request: HttpServerRequest.HttpServerRequest, id: string): Request => {
  const current: Request = { id, grpcStatus: undefined, denied: undefined }
  answering.set(keyOf(request), current)
  return current
}

/** The request being answered, or undefined outside the middleware. */
export const of = (request: HttpServerRequest.HttpServerRequest): Request | undefined => answering.get(keyOf(request))

/** The id of the request a context belongs to, if it belongs to one. */
export const idIn = (context: Context.Context<never>): string | undefined => {
  const request = Context.getOption(context, HttpServerRequest.HttpServerRequest)
  return Option.isSome(request) ? of(request.value)?.id : undefined
}
