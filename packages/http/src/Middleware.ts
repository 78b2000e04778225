/**
 * The server's middleware, five pieces, outermost first: the request's id, log line and metrics (`RequestLog`);
 * gRPC calls handed to `Grpc`; the headers every other answer carries (`ResponseHeaders`); the rendering of every
 * failure (`ErrorRendering`); the request limits and path folding (`RequestLimits`). Inside them, the API's router.
 */
import { HttpApiBuilder, type HttpApp } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Grpc from "./Grpc.js"
import * as ErrorRendering from "./middleware/ErrorRendering.js"
import * as RequestLog from "./middleware/RequestLog.js"
import * as ResponseHeaders from "./middleware/ResponseHeaders.js"
import * as RequestLimits from "./RequestLimits.js"

/** The middleware, with `domain` as every error's `ErrorInfo.domain`. */
export const layer = (domain: string) =>
  HttpApiBuilder.middleware(
    Effect.map(Grpc.Grpc, (grpc) => (app: HttpApp.Default) =>
      RequestLog.middleware(
        Grpc.dispatch(grpc)(
          ResponseHeaders.middleware(ErrorRendering.middleware(domain)(RequestLimits.middleware(app)))
        )
      ))
  )
