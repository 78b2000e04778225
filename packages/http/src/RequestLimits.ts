/**
 * What a request may be, checked before anything else reads it: the request target (length, no `;` or `#` in the
 * path, duplicate slashes folded in the path only and a uid's slashes escaped (`UidPaths`), the query as sent but
 * for parameters named by their camelCase aliases, renamed), the body's media type (JSON; forms for the sign-in
 * endpoints under `/oauth/`; SCIM's JSON too under `/scim/`) and charset, its size (declared or streamed; 256 KiB
 * under `/scim/`), its encoding (UTF-8) and how deeply its JSON nests. A body over the
 * limit is answered at once while the rest of it is read and dropped, so the client sees the answer instead of a
 * reset connection.
 */
import * as ErrorBody from "@arbor/api/ErrorBody"
import * as ListQuery from "@arbor/api/ListQuery"
import * as Scim from "@arbor/api/Scim"
import { Errors } from "@arbor/core"
import { type HttpApp, HttpIncomingMessage, HttpServerError, HttpServerRequest, UrlParams } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import { Readable } from "node:stream"
import * as UidPaths from "./UidPaths.js"

/** The largest request body accepted. */
export const maxBodyBytes = 1024 * 1024

/** The longest request target (path and query) accepted. */
export const maxUrlBytes = 8 * 1024

/** How deeply arrays and objects may nest in a JSON body. */
export const maxJsonDepth = 64

const methodsWithBodies = new Set(["POST", "PUT", "PATCH"])

const invalid = (field: string, description: string, reason: string) =>
  new Errors.InvalidArgument({ violations: [new Errors.FieldViolation({ field, description })], reason })

/** The answer to a body over `limit` bytes. */
export const tooLarge = (limit = maxBodyBytes) =>
  invalid("body", `must be at most ${limit} bytes`, ErrorBody.tooLargeReason)

/** The largest body a path accepts: SCIM's endpoints take at most 256 KiB, the rest `maxBodyBytes`. */
const bodyLimitOf = (url: string) => url.startsWith("/scim/") ? Scim.maxBodyBytes : maxBodyBytes

/** The media types a path's bodies may have: OAuth's forms, SCIM's JSON (or plain), or JSON. */
const mediaTypesOf = (url: string): ReadonlyArray<string> =>
  url.startsWith("/oauth/")
    ? ["application/x-www-form-urlencoded"]
    : url.startsWith("/scim/")
    ? [Scim.mediaType, "application/json"]
    : ["application/json"]

/** The answer to request line and headers over Node's limit. */
export const headersTooLarge = (limit: number) =>
  invalid("request", `the request line and headers must be at most ${limit} bytes`, "HEADERS_TOO_LARGE")

/** The answer to a request that is not HTTP Node can parse. */
export const malformedRequest = () => invalid("request", "is not a valid HTTP/1.1 request", "MALFORMED_REQUEST")

/**
 * The request as the API may see it: its target checked and normalized, its body (if any) read and checked; or the
 * reason it is refused.
 */
export const admit = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerRequest.HttpServerRequest | Errors.InvalidArgument> => {
  const url = target(request.url)
  if (typeof url !== "string") return Effect.succeed(url)
  const refused = precheck(request)
  if (refused !== undefined) return Effect.succeed(refused)
  return readBody(url === request.url ? request : request.modify({ url }))
}

/**
 * The piece of the server's middleware that applies the limits: `app` sees only an admitted request, normalized; a
 * refused one fails with its reason.
 */
export const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E | Errors.InvalidArgument, R> =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (original) =>
      Effect.flatMap(
        admit(original),
        (request): HttpApp.Default<E | Errors.InvalidArgument, R> =>
          Predicate.isTagged(request, "InvalidArgument")
            ? Effect.fail(request)
            : request === original
            ? app
            : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request)
      )
  )

/**
 * The request target as routed: duplicate slashes in the path folded into one, a uid in one segment, the query
 * untouched; or the reason it is refused.
 */
const target = (url: string): string | Errors.InvalidArgument => {
  if (url.length > maxUrlBytes) return invalid("url", `must be at most ${maxUrlBytes} bytes`, "URL_TOO_LONG")
  const q = url.indexOf("?")
  const path = q < 0 ? url : url.slice(0, q)
  if (path.includes(";") || path.includes("#")) {
    return invalid("path", "must not contain ';' or '#'", "INVALID_PATH")
  }
  return UidPaths.fold(path.replace(/\/{2,}/g, "/")) + (q < 0 ? "" : canonicalQuery(url.slice(q)))
}

/** A query (with its `?`), each parameter named by an alias (`ListQuery.aliases`) renamed to what it stands for. */
const canonicalQuery = (query: string): string =>
  query.split("&").map((pair) => {
    const eq = pair.indexOf("=")
    const key = eq < 0 ? pair : pair.slice(0, eq)
    const start = key.startsWith("?") ? 1 : 0
    const canonical = ListQuery.aliases[safeDecode(key.slice(start))]
    return canonical === undefined ? pair : `${key.slice(0, start)}${canonical}${eq < 0 ? "" : pair.slice(eq)}`
  }).join("&")

const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text.replaceAll("+", " "))
  } catch {
    return text
  }
}

/** Refusals that need only the headers: declared size, media type and charset of a body. */
const precheck = (request: HttpServerRequest.HttpServerRequest): Errors.InvalidArgument | undefined => {
  if (!hasBody(request)) return undefined
  const limit = bodyLimitOf(request.url)
  if (Number(request.headers["content-length"] ?? "0") > limit) return tooLarge(limit)
  const [type = "", ...parameters] = (request.headers["content-type"] ?? "").split(";").map((p) => p.trim())
  const expected = mediaTypesOf(request.url)
  if (!expected.includes(type.toLowerCase())) {
    return invalid("Content-Type", `must be ${expected.join(" or ")}`, "UNSUPPORTED_MEDIA_TYPE")
  }
  for (const parameter of parameters) {
    const [name = "", value = ""] = parameter.split("=").map((p) => p.trim().toLowerCase())
    if (name === "charset" && value.replace(/^"|"$/g, "") !== "utf-8") {
      return invalid("Content-Type", "must have no charset but utf-8", "UNSUPPORTED_MEDIA_TYPE")
    }
  }
  return undefined
}

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  methodsWithBodies.has(request.method) &&
  (Number(request.headers["content-length"] ?? "0") > 0 || request.headers["transfer-encoding"] !== undefined)

/** True when no array or object in `json` lies deeper than `limit`: one pass, no recursion. */
export const withinDepth = (json: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return false
    } else if (c === 93 || c === 125) {
      depth--
    }
  }
  return true
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Reads a Node body up to `limit` bytes. Past the limit it stops keeping bytes but goes on reading them, so the
 * early answer reaches the client; the server's request timeout bounds how long that may last.
 */
const readNode = (source: Readable, limit: number) =>
  Effect.async<Uint8Array | "too large", Error>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return chunks.push(chunk)
      source.off("data", onData).off("end", onEnd).off("error", onError)
      source.resume()
      resume(Effect.succeed("too large"))
    }
    const onEnd = () => resume(Effect.succeed(Buffer.concat(chunks)))
    const onError = (error: Error) => resume(Effect.fail(error))
    source.on("data", onData).once("end", onEnd).once("error", onError)
    return Effect.sync(() => source.off("data", onData).off("end", onEnd).off("error", onError))
  })

/**
 * The request with its body read, checked (size, UTF-8, nesting) and kept, so that whatever decodes it later gets
 * the checked text; or the reason it is refused.
 */
const readBody = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerRequest.HttpServerRequest | Errors.InvalidArgument> => {
  if (!hasBody(request)) return Effect.succeed(request)
  const limit = bodyLimitOf(request.url)
  const malformed = (description: string) => invalid("body", description, "MALFORMED_BODY")
  const read: Effect.Effect<Uint8Array | "too large", unknown> = request.source instanceof Readable
    ? readNode(request.source, limit)
    : Effect.map(request.arrayBuffer, (b) => b.byteLength > limit ? "too large" as const : new Uint8Array(b))
  return read.pipe(
    Effect.map((bytes) => {
      if (bytes === "too large") return tooLarge(limit)
      let text: string
      try {
        text = utf8.decode(bytes)
      } catch {
        return malformed("is not valid UTF-8")
      }
      if (!withinDepth(text, maxJsonDepth)) return malformed(`must not nest deeper than ${maxJsonDepth} levels`)
      return new WithBody(request, text)
    }),
    Effect.catchAll(() => Effect.succeed(malformed("could not be read")))
  )
}

/**
 * `request` with its body read and checked: `text`, `json`, `urlParamsBody`, `arrayBuffer` and `stream` answer from
 * `body` instead of reading the source again; everything else is `request`'s. A class, not `Object.create(request)`:
 * V8 turns an object made a prototype into a slow one, which cost a third of an AuthZEN evaluation.
 */
class WithBody implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  constructor(readonly request: HttpServerRequest.HttpServerRequest, readonly body: string) {}
  get source() {
    return this.request.source
  }
  /** Node's response, which `NodeHttpServerRequest.toServerResponse` reads from the request. */
  get response(): unknown {
    return Reflect.get(this.request, "response")
  }
  get url() {
    return this.request.url
  }
  get originalUrl() {
    return this.request.originalUrl
  }
  get method() {
    return this.request.method
  }
  get headers() {
    return this.request.headers
  }
  get remoteAddress() {
    return this.request.remoteAddress
  }
  get cookies() {
    return this.request.cookies
  }
  get multipart() {
    return this.request.multipart
  }
  get multipartStream() {
    return this.request.multipartStream
  }
  get upgrade() {
    return this.request.upgrade
  }
  modify(options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]): HttpServerRequest.HttpServerRequest {
    return new WithBody(this.request.modify(options), this.body)
  }
  get text() {
    return Effect.succeed(this.body)
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.try({
      try: (): unknown => this.body === "" ? null : JSON.parse(this.body),
      catch: (cause): HttpServerError.RequestError =>
        new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
    })
  }
  get urlParamsBody() {
    return Effect.succeed(UrlParams.fromInput(new URLSearchParams(this.body)))
  }
  get arrayBuffer() {
    return Effect.sync(() => new TextEncoder().encode(this.body).buffer)
  }
  get stream() {
    return Stream.sync(() => new TextEncoder().encode(this.body))
  }
  toJSON() {
    return this.request.toJSON()
  }
  toString() {
    return this.request.toString()
  }
  [Inspectable.NodeInspectSymbol]() {
    return this.request.toJSON()
  }
}
