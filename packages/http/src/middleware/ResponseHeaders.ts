/**
 * Headers every answer of the server carries, but gRPC's: `X-Content-Type-Options: nosniff`, so that no browser reads
 * an answer as other than its type says; and, for JSON, `Cache-Control: no-store` unless the answer says otherwise.
 * Each answer of the API is its caller's alone, and some carry what is shown once (an API token from the exchange, an
 * invite's code, a SCIM token), which no cache may keep (RFC 6749 §5.1 asks it of every answer holding a token).
 */
import type { HttpApp } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import * as Effect from "effect/Effect"

/** The media type of `response`: its header's, or its body's. */
const typeOf = (response: HttpServerResponse.HttpServerResponse): string =>
  response.headers["content-type"] ?? ("contentType" in response.body ? response.body.contentType ?? "" : "")

/** `app` with those headers on its answers. */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.map(app, (response) => {
    const sniffless = response.headers["x-content-type-options"] === undefined
      ? HttpServerResponse.setHeader(response, "x-content-type-options", "nosniff")
      : response
    return response.headers["cache-control"] === undefined && /^application\/([\w.-]+\+)?json\b/.test(typeOf(response))
      ? HttpServerResponse.setHeader(sniffless, "cache-control", "no-store")
      : sniffless
  })
