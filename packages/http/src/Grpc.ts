/**
 * gRPC, gRPC-Web and the Connect protocol on the server's port (docs/api.md §11), served by ConnectRPC's Node
 * adapter over the mapping in `GrpcServices`. The request middleware hands it every request whose path names a
 * served service, over HTTP/1.1 or HTTP/2. Callers authenticate with the metadata `authorization: Bearer <token>`;
 * engine errors become a `google.rpc.Status` with the same code, message and details as the REST error body.
 */
import { render } from "@arbor/api/ErrorBody"
import { file_google_rpc_error_details } from "@arbor/api/proto/google/rpc/error_details_pb"
import { ServerReflection } from "@arbor/api/proto/grpc/reflection/v1/reflection_pb"
import { Authentication as Engine, Errors } from "@arbor/core"
import { createRegistry, type DescMessage, fromJson, type JsonValue } from "@bufbuild/protobuf"
import {
  Code,
  ConnectError,
  createConnectRouter,
  createContextKey,
  createContextValues,
  type HandlerContext
} from "@connectrpc/connect"
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse
} from "@connectrpc/connect-node"
import type { UniversalServerResponse } from "@connectrpc/connect/protocol"
import { type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Authentication from "./Authentication.js"
import * as GrpcReflection from "./GrpcReflection.js"
import * as GrpcServices from "./GrpcServices.js"
import * as CurrentRequest from "./middleware/CurrentRequest.js"
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
  /**
   * Answers the call on the request's Node response, its engine operation running with the request fiber's runtime
   * (its span, log annotations and `FiberRef`s); succeeds once the response is written, with the call's outcome.
   */
  readonly serve: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Outcome>
}>() {}

/** What a call carries from the request's fiber to its engine operation. */
interface Call {
  /** The runtime of the request's fiber. */
  readonly runtime: Runtime.Runtime<never>
  readonly outcome: Outcome
}

const callKey = createContextKey<Call>({ runtime: Runtime.defaultRuntime, outcome: { code: 0 } })

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

/** Encodes the `grpc-message` of `headers` (if any) `asSpecified`. */
const specify = (headers: Headers | undefined) => {
  const message = headers?.get("grpc-message")
  if (message !== null && message !== undefined) headers!.set("grpc-message", asSpecified(message))
}

/**
 * `response` with its `grpc-message` header and trailer encoded `asSpecified`, each once it is final: the header
 * when the body's first chunk is read (the writer sends it then), the trailer when the body ends.
 */
const specified = (response: UniversalServerResponse): UniversalServerResponse => {
  const body = response.body
  if (body === undefined) {
    specify(response.header)
    specify(response.trailer)
    return response
  }
  return {
    ...response,
    body: (async function*() {
      let headerFinal = false
      for await (const chunk of body) {
        if (!headerFinal) specify(response.header)
        headerFinal = true
        yield chunk
      }
      if (!headerFinal) specify(response.header)
      specify(response.trailer)
    })()
  }
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
  const { outcome } = context.values.get(callKey)
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
      const authentication = yield* Engine.Authentication
      const routes = yield* GrpcServices.routes

      /** Runs a call's engine operation with the runtime of the request's fiber; an error becomes its status. */
      const run = async <A>(context: HandlerContext, operation: Effect.Effect<A, Errors.ArborError>) => {
        const { outcome, runtime } = context.values.get(callKey)
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

      const router = createConnectRouter({
        readMaxBytes: RequestLimits.maxBodyBytes,
        requestGate: watch(domain),
        acceptCompression: [compressionGzip, compressionBrotli]
      })
      GrpcReflection.routes(GrpcServices.served)(router)
      routes({
        asCaller: (context, operation) =>
          run(
            context,
            Effect.flatMap(
              authentication.authenticate(Authentication.bearerIn(context.requestHeader.get("authorization"))),
              operation
            )
          ),
        withBearer: (context, operation) => run(context, Effect.flatMap(bearer(context), operation))
      })(router)
      const methods = new Map(router.handlers.map((handler) => [handler.requestPath, handler]))
      const services = new Set([...GrpcServices.served, ServerReflection].map((service) => service.typeName))

      return {
        handles: (path) => services.has(path.slice(1, path.indexOf("/", 1))),
        serve: (request) =>
          Effect.gen(function*() {
            const outcome: Outcome = { code: 0 }
            const response = NodeHttpServerRequest.toServerResponse(request)
            const method = methods.get(request.url.split("?")[0]!)
            if (method === undefined) {
              // A method the served service does not have: 404, which gRPC clients read as UNIMPLEMENTED.
              outcome.code = Code.Unimplemented
              response.writeHead(404).end()
              return outcome
            }
            const call: Call = { runtime: yield* Effect.runtime<never>(), outcome }
            const universal = universalRequestFromNodeRequest(
              NodeHttpServerRequest.toIncomingMessage(request),
              response,
              undefined,
              createContextValues().set(callKey, call)
            )
            // Written once the response closes (ConnectRPC's writer resolves on an event Node's responses never emit).
            yield* Effect.async<void>((resume) => {
              response.once("close", () => resume(Effect.void))
              method(universal).then((answer) => universalResponseToNodeResponse(specified(answer), response)).catch(
                (reason: unknown) => {
                  // A client that went away: nothing to answer, nothing to report.
                  if (ConnectError.from(reason).code === Code.Aborted) return
                  Runtime.runFork(call.runtime)(Effect.logWarning("call failed", reason))
                }
              )
            })
            return outcome
          })
      }
    })
  )

/**
 * The piece of the server's middleware that hands `grpc` the calls of its services (over HTTP/1.1 or HTTP/2), and
 * every other request to `app`.
 */
export const dispatch = (grpc: Grpc["Type"]) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request): HttpApp.Default<E, R> =>
      grpc.handles(request.url.split("?")[0]!)
        ? Effect.gen(function*() {
          const current = CurrentRequest.of(request)
          const response = NodeHttpServerRequest.toServerResponse(request)
          if (current !== undefined) response.setHeader("x-request-id", current.id)
          const outcome = yield* grpc.serve(request)
          if (current !== undefined) {
            current.grpcStatus = outcome.code
            current.denied = outcome.denied
          }
          // Already answered on the Node response: the platform writes nothing more.
          return HttpServerResponse.empty({ status: response.statusCode })
        })
        : app
  )
