/**
 * gRPC, gRPC-Web and the Connect protocol on the server's port (docs/api.md §11), served by ConnectRPC's Node
 * adapter over the mapping in `GrpcServices`. The request middleware hands it every request whose path names a
 * served service, over HTTP/1.1 or HTTP/2. Callers authenticate with the metadata `authorization: Bearer <token>`;
 * engine errors become a `google.rpc.Status` with the same code, message and details as the REST error body.
 */
import { render } from "@arbor/api/ErrorBody"
import { file_google_rpc_error_details } from "@arbor/api/proto/google/rpc/error_details_pb"
import { ServerReflection } from "@arbor/api/proto/grpc/reflection/v1/reflection_pb"
import { Errors, TokenIssuer } from "@arbor/core"
import { createRegistry, type DescMessage, fromJson, type JsonValue } from "@bufbuild/protobuf"
import { Code, ConnectError, createContextKey, createContextValues, type HandlerContext } from "@connectrpc/connect"
import { connectNodeAdapter } from "@connectrpc/connect-node"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2"
import * as Authentication from "./Authentication.js"
import * as GrpcReflection from "./GrpcReflection.js"
import * as GrpcServices from "./GrpcServices.js"
import * as RequestLimits from "./RequestLimits.js"

/** How a call ended, for the request log: its gRPC code, and why permission was denied. */
export interface Outcome {
  code: number
  denied?: string | undefined
}

/** The gRPC handler, as the request middleware sees it. */
export class Grpc extends Context.Tag("@arbor/http/Grpc")<Grpc, {
  /** True when `path` names a method of a served service (or one it does not have: `UNIMPLEMENTED`). */
  readonly handles: (path: string) => boolean
  /** Answers the call on the Node request and response; resolves once the response is closed, with its outcome. */
  readonly serve: (
    request: IncomingMessage | Http2ServerRequest,
    response: ServerResponse | Http2ServerResponse
  ) => Promise<Outcome>
}>() {}

const outcomeKey = createContextKey<Outcome>({ code: 0 })

const errorDetails = createRegistry(file_google_rpc_error_details)

/** An engine error as a ConnectError: the REST body's code and message, its details as `google.rpc` messages. */
const toConnectError = (error: Errors.ArborError, domain: string): ConnectError => {
  const { body } = render(error, domain)
  const details = body.details.flatMap(({ "@type": typeUrl, ...fields }) => {
    const desc: DescMessage | undefined = errorDetails.getMessage(typeUrl.slice(typeUrl.lastIndexOf("/") + 1))
    return desc === undefined ? [] : [{ desc, value: fromJson(desc, fields as JsonValue) }]
  })
  return new ConnectError(body.message, body.code as Code, undefined, details)
}

/** The bearer token of the `authorization` metadata. */
const bearer = (context: HandlerContext): Effect.Effect<string, Errors.Unauthenticated> => {
  const token = Authentication.bearerIn(context.requestHeader.get("authorization"))
  return token === "" ? Effect.fail(Authentication.missing()) : Effect.succeed(token)
}

/**
 * `grpc-message` percent-encoded as the gRPC protocol specifies (only `%` and bytes outside printable ASCII), where
 * ConnectRPC encodes every reserved character: clients that decode only what the protocol requires (grpc-js) would
 * show `%3A` for `:`.
 */
const asSpecified = (message: string) =>
  decodeURIComponent(message).replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => encodeURIComponent(c))

/** `response`, its `grpc-message` header or trailer encoded `asSpecified`. */
const withSpecifiedMessages = (response: ServerResponse | Http2ServerResponse) => {
  const fix = (fields: unknown) => {
    if (fields === null || typeof fields !== "object") return fields
    const entries = Object.entries(fields as Record<string, unknown>)
    return Object.fromEntries(
      entries.map(([name, value]) =>
        name.toLowerCase() === "grpc-message" && typeof value === "string" ? [name, asSpecified(value)] : [name, value]
      )
    )
  }
  const addTrailers = response.addTrailers.bind(response)
  const writeHead = response.writeHead.bind(response) as (status: number, headers?: unknown) => unknown
  response.addTrailers = (trailers: unknown) => addTrailers(fix(trailers) as never)
  response.writeHead = ((status: number, headers?: unknown) => writeHead(status, fix(headers))) as never
  return response
}

/**
 * How ConnectRPC reports a request message that is not valid protobuf: an internal error (its own code, 13),
 * which is the client's fault; answered as INVALID_ARGUMENT with the REST body's details instead.
 */
const isMalformedMessage = (error: ConnectError) =>
  error.code === Code.Internal && error.rawMessage.startsWith("parse binary:")

/**
 * Watches a call from before its request is read (ConnectRPC's request gate): when it ends with an error, of the
 * engine or of the protocol (a malformed or over-size message, a method without an implementation), that error's
 * code is the call's outcome, and a malformed message is made INVALID_ARGUMENT before it is answered. ConnectRPC
 * aborts the call's context with the error before it writes the status, on every protocol.
 */
const watch = (domain: string) => (context: HandlerContext) => {
  const outcome = context.values.get(outcomeKey)
  context.signal.addEventListener("abort", () => {
    const error: unknown = context.signal.reason
    if (!(error instanceof ConnectError)) return
    if (isMalformedMessage(error)) {
      const invalid = toConnectError(
        new Errors.InvalidArgument({
          violations: [new Errors.FieldViolation({ field: "body", description: "is not a valid protobuf message" })],
          reason: "MALFORMED_BODY"
        }),
        domain
      )
      Object.defineProperty(error, "code", { value: invalid.code })
      Object.defineProperty(error, "rawMessage", { value: invalid.rawMessage })
      error.details.push(...invalid.details)
    }
    outcome.code = error.code
  }, { once: true })
}

/** The handler over the engine, with `domain` as every error's `ErrorInfo.domain`. */
export const layer = (domain: string) =>
  Layer.effect(
    Grpc,
    Effect.gen(function*() {
      const issuer = yield* TokenIssuer.TokenIssuer
      const routes = yield* GrpcServices.routes
      const runtime = yield* Effect.runtime<never>()

      const run = async <A>(context: HandlerContext, operation: Effect.Effect<A, Errors.ArborError>) => {
        const outcome = context.values.get(outcomeKey)
        const exit = await Runtime.runPromiseExit(runtime)(operation, { signal: context.signal })
        if (Exit.isSuccess(exit)) return exit.value
        const failure = Cause.failureOption(exit.cause)
        let error: ConnectError
        if (Option.isSome(failure)) {
          if (failure.value._tag === "PermissionDenied") outcome.denied = failure.value.logDetail
          error = toConnectError(failure.value, domain)
        } else if (Cause.isInterruptedOnly(exit.cause)) {
          error = new ConnectError("the call was cancelled", Code.Canceled)
        } else {
          await Runtime.runPromise(runtime)(Effect.logError("call failed", exit.cause))
          error = toConnectError(new Errors.Internal({}), domain)
        }
        outcome.code = error.code
        throw error
      }

      const serveEngine = routes({
        asCaller: (context, operation) =>
          run(
            context,
            Effect.flatMap(
              Authentication.principal(issuer, Authentication.bearerIn(context.requestHeader.get("authorization"))),
              operation
            )
          ),
        withBearer: (context, operation) => run(context, Effect.flatMap(bearer(context), operation))
      })
      const outcomes = new WeakMap<object, Outcome>()
      const handler = connectNodeAdapter({
        routes: (router) => {
          GrpcReflection.routes(GrpcServices.served)(router)
          serveEngine(router)
        },
        readMaxBytes: RequestLimits.maxBodyBytes,
        requestGate: watch(domain),
        // A method the served service does not have: 404, which gRPC clients read as UNIMPLEMENTED.
        fallback: (request, response) => {
          const outcome = outcomes.get(request)
          if (outcome !== undefined) outcome.code = Code.Unimplemented
          response.writeHead(404)
          response.end()
        },
        contextValues: (request) => createContextValues().set(outcomeKey, outcomes.get(request) ?? { code: 0 })
      })
      const services = new Set([...GrpcServices.served, ServerReflection].map((service) => service.typeName))

      return {
        handles: (path) => services.has(path.slice(1, path.indexOf("/", 1))),
        serve: (request, response) =>
          new Promise<Outcome>((resolve) => {
            const outcome: Outcome = { code: 0 }
            outcomes.set(request, outcome)
            response.once("close", () => resolve(outcome))
            handler(request, withSpecifiedMessages(response))
          })
      }
    })
  )
