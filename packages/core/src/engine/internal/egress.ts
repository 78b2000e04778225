/**
 * Outbound HTTP to hosts that callers name (token issuers and the documents they point to), safe against
 * server-side request forgery: a host name is resolved once, every address it resolves to must be public
 * (`NetworkAddress`), and the socket connects to the addresses that were checked, never to a second lookup's
 * answer. IP literals are checked the same way. Loopback is reachable only when the settings allow loopback
 * issuers, and then only through `localhost` or a loopback literal. Redirects are never followed.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { LookupAddress } from "node:dns"
import { lookup } from "node:dns/promises"
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import { Readable } from "node:stream"
import * as NetworkAddress from "../NetworkAddress.js"
import { Settings } from "../Settings.js"

/** Resolves a host name to its addresses. */
export type Resolve = (host: string) => Promise<ReadonlyArray<LookupAddress>>

/** The resolver outbound requests use: the system's by default; tests map names under `.invalid` themselves. */
export class Resolver extends Context.Reference<Resolver>()("@arbor/core/Egress/Resolver", {
  defaultValue: (): Resolve => (host) => lookup(host, { all: true, verbatim: true })
}) {}

/** The `code` of the error a refused address fails with. */
export const refusedCode = "ERR_ADDRESS_REFUSED"

const refusal = (host: string, address: string) =>
  Object.assign(new Error(`${host} resolves to ${address}, which is not a public address`), { code: refusedCode })

/** True when a request to `host` may connect to `address`. */
const permitted = (host: string, address: string, allowLoopback: boolean): boolean => {
  const kind = NetworkAddress.kind(address)
  return kind === "public" || (kind === "loopback" && allowLoopback && NetworkAddress.isLoopbackHost(host))
}

/**
 * Why a request to `host` could not go anywhere, checked ahead of time (a webhook's sink, when it is created): it
 * does not resolve, or one of its addresses is not public; undefined when it may.
 */
export const unreachable = (resolve: Resolve, host: string, allowLoopback: boolean): Promise<string | undefined> =>
  resolve(host).then(
    (found) => {
      const refused = found.find((a) => !permitted(host, a.address, allowLoopback))
      if (refused !== undefined) return `resolves to ${refused.address}, which is not a public address`
      return found.length === 0 ? "has no address" : undefined
    },
    () => "does not resolve"
  )

/** A Node `lookup` that resolves once and gives the socket only addresses it has checked. */
export const guardedLookup =
  (resolve: Resolve, allowLoopback: boolean): LookupFunction => (host, options, callback) => {
    resolve(host).then(
      (found) => {
        const refused = found.find((a) => !permitted(host, a.address, allowLoopback))
        const usable = found.filter((a) => !options.family || a.family === options.family)
        if (refused !== undefined) return callback(refusal(host, refused.address), "", 0)
        if (usable.length === 0) {
          return callback(Object.assign(new Error(`${host} has no address`), { code: "ENOTFOUND" }), "", 0)
        }
        if (options.all === true) return callback(null, [...usable])
        callback(null, usable[0]!.address, usable[0]!.family)
      },
      (error) => callback(error, "", 0)
    )
  }

const bodyOf = (body: HttpClientRequest.HttpClientRequest["body"]): Uint8Array | string | undefined => {
  switch (body._tag) {
    case "Empty":
      return undefined
    case "Uint8Array":
      return body.body
    case "Raw":
      if (typeof body.body === "string" || body.body instanceof Uint8Array) return body.body
  }
  throw new Error(`request bodies of kind ${body._tag} are not supported`)
}

const nullBodyStatuses = new Set([101, 204, 205, 304])

/** How requests connect: kept alive or not. */
interface Connecting {
  readonly resolve: Resolve
  readonly allowLoopback: boolean
  readonly agents: { readonly "http:": http.Agent; readonly "https:": https.Agent } | undefined
}

/**
 * Kept connections, with no cap per host and port: a cap there is shared by every caller of that host, so sinks that
 * never answer, of other tenants on one webhook gateway, held every connection and starved the others (issue 55).
 * Each subscription has at most one delivery in flight, so the connections are bounded by the subscriptions, and one
 * that hangs holds only its own; the idle ones kept are bounded.
 */
const keptAlive = { keepAlive: true, maxSockets: Infinity, maxFreeSockets: 64 }

const connecting = (resolve: Resolve, allowLoopback: boolean, keepAlive: boolean | undefined): Connecting => ({
  resolve,
  allowLoopback,
  agents: keepAlive === true
    ? { "http:": new http.Agent(keptAlive), "https:": new https.Agent(keptAlive) }
    : undefined
})

/** A request to `url` that connects only to checked addresses, not yet sent; or why it may not be made. */
const outgoing = (
  how: Connecting,
  url: URL,
  method: string,
  headers: Readonly<Record<string, string>>
): http.ClientRequest | Error => {
  const host = url.hostname
  if (url.protocol !== "https:" && url.protocol !== "http:") return new Error(`${url.protocol} is not an HTTP scheme`)
  if (NetworkAddress.isLiteral(host) && !permitted(host, host.replace(/^\[|\]$/g, ""), how.allowLoopback)) {
    return refusal(host, host)
  }
  return (url.protocol === "https:" ? https : http).request(url, {
    method,
    headers,
    lookup: guardedLookup(how.resolve, how.allowLoopback),
    agent: how.agents === undefined ? false : how.agents[url.protocol]
  })
}

/** Options of outbound clients. */
export interface Options {
  /**
   * Keep connections open for the next request to the same host (webhook sinks). A connection is only ever made
   * to a checked address, so keeping it is as safe as making it; without this, every request connects anew.
   */
  readonly keepAlive?: boolean
}

/** An HttpClient whose connections go only to checked addresses. */
export const make = (resolve: Resolve, allowLoopback: boolean, options: Options = {}): HttpClient.HttpClient => {
  const how = connecting(resolve, allowLoopback, options.keepAlive)
  return HttpClient.make((request, url) =>
    Effect.async<HttpClientResponse.HttpClientResponse, HttpClientError.RequestError>((resume) => {
      const fail = (cause: unknown) =>
        resume(Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause })))
      let body: Uint8Array | string | undefined
      try {
        body = bodyOf(request.body)
      } catch (e) {
        fail(e)
        return
      }
      const sent = outgoing(how, url, request.method, request.headers)
      if (sent instanceof Error) return fail(sent)
      sent.on("error", fail)
      sent.on("response", (incoming) => {
        const headers = new Headers()
        for (const [name, value] of Object.entries(incoming.headers)) {
          for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v)
        }
        const status = incoming.statusCode ?? 0
        try {
          // An answer without a body is read to its end at once, which frees a kept-alive connection.
          const stream = nullBodyStatuses.has(status)
            ? (incoming.resume(), null)
            : Readable.toWeb(incoming) as ReadableStream<Uint8Array>
          resume(Effect.succeed(HttpClientResponse.fromWeb(request, new Response(stream, { status, headers }))))
        } catch (e) {
          incoming.destroy()
          fail(e)
        }
      })
      sent.end(body)
      return Effect.sync(() => sent.destroy())
    })
  )
}

/**
 * Sends requests whose answers matter only by their status (webhook deliveries), through checked addresses like
 * `make`'s client: the answer's body is read and dropped, which frees a kept-alive connection for the next. Cheaper
 * than a full client, which hands the body over as a web stream.
 */
export const makeSender = (
  resolve: Resolve,
  allowLoopback: boolean,
  options: Options & {
    /** How long an answer may take, to its last byte. */
    readonly timeout: Duration.Duration
  }
) => {
  const how = connecting(resolve, allowLoopback, options.keepAlive)
  const timeoutMillis = Duration.toMillis(options.timeout)
  return (
    url: URL,
    request: { readonly method: string; readonly headers: Readonly<Record<string, string>>; readonly body: string }
  ): Effect.Effect<number, Error> =>
    Effect.async<number, Error>((resume) => {
      const sent = outgoing(how, url, request.method, request.headers)
      if (sent instanceof Error) return resume(Effect.fail(sent))
      const timer = setTimeout(() => sent.destroy(new Error(`no answer within ${timeoutMillis} ms`)), timeoutMillis)
      const fail = (error: Error) => {
        clearTimeout(timer)
        resume(Effect.fail(error))
      }
      sent.on("error", fail)
      sent.on("response", (incoming) => {
        incoming.on("error", fail)
        incoming.on("end", () => {
          clearTimeout(timer)
          resume(Effect.succeed(incoming.statusCode ?? 0))
        }).resume()
      })
      sent.end(request.body)
      return Effect.sync(() => {
        clearTimeout(timer)
        sent.destroy()
      })
    })
}

/** The HttpClient for issuers' documents, from the settings (loopback issuers) and the `Resolver`. */
export const layer: Layer.Layer<HttpClient.HttpClient> = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(
    Effect.all([Resolver, Settings]),
    ([resolve, settings]) => make(resolve, settings.allowLoopbackHttpIssuers)
  )
)
