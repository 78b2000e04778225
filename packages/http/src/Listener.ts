/**
 * The Node server the API listens on, for HTTP/1.1 and, on the same port, cleartext HTTP/2 with prior knowledge (as
 * gRPC clients speak to `http://` addresses): each connection is told by its first bytes, the HTTP/2 connection
 * preface or not, and HTTP/2 requests reach the same `request` listeners as HTTP/1.1 ones. It is hardened against
 * slow and greedy clients: headers and whole requests must arrive within time limits, idle connections are closed,
 * HTTP/2 streams per connection and header sizes are bounded, and open connections are capped. At the cap a new
 * connection takes the place of the one that has been waiting longest without a request in progress (a client still
 * trickling its headers, or an idle keep-alive), so slow clients cannot lock everyone else out. A connection closed
 * after its answer while the request's body is still arriving reads that body to its end first, so that the client
 * is not reset under the answer. Requests Node refuses before they reach the API (headers over 16 KiB, broken HTTP)
 * get the API's error body.
 */
import { render } from "@arbor/api/ErrorBody"
import type { Errors } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, STATUS_CODES } from "node:http"
import * as Http2 from "node:http2"
import type { Socket } from "node:net"
import * as Metrics from "./Metrics.js"
import * as RequestLimits from "./RequestLimits.js"

/** How the listener guards itself. */
export interface Options {
  /** Open connections at most. */
  readonly maxConnections: number
  /** `ErrorInfo.domain` of the error bodies it writes itself. */
  readonly errorDomain: string
  readonly headersTimeoutMillis?: number
  readonly requestTimeoutMillis?: number
}

/** The time limits, unless the options say otherwise. */
export const defaults = {
  /** From connecting (or the end of the previous request) to the end of the headers. */
  headersTimeoutMillis: 10_000,
  /** From connecting to the end of the request body. */
  requestTimeoutMillis: 30_000,
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMillis: 5_000,
  /** The request line and headers, in bytes. */
  maxHeaderBytes: 16 * 1024,
  /** How long a closing connection goes on reading a request body nobody reads (see `lingerOnClose`). */
  lingerMillis: 5_000,
  /** How long an HTTP/2 connection stays open without a frame. */
  http2IdleTimeoutMillis: 60_000,
  /** Streams (calls) open at once on one HTTP/2 connection. */
  http2MaxStreams: 100
} as const

/** The soft limit on open files of this process (Linux), or 1024 where it cannot be read. */
export const openFileLimit = (): number => {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith("Max open files"))
    const soft = Number(line?.trim().split(/\s+/)[3])
    return Number.isFinite(soft) ? soft : 1024
  } catch {
    return 1024
  }
}

/**
 * The default cap on open connections: the open-file limit less 256 files kept for the database, the data
 * directory and outbound fetches, at least 16 and at most 16,384 (each idle connection costs memory too).
 */
export const defaultMaxConnections = (): number => Math.max(16, Math.min(openFileLimit() - 256, 16_384))

/**
 * Closes the least recently busy connection that has no request in progress when a new one would pass the cap.
 * Returns how to count a request in progress on a connection, for requests the HTTP/1.1 server does not see.
 */
const capConnections = (server: Server, max: number) => {
  /** Open connections, least recently busy first, each with its requests in progress. */
  const open = new Map<Socket, number>()
  const busy = (socket: Socket, change: 1 | -1) => {
    const count = open.get(socket)
    if (count === undefined) return
    open.delete(socket)
    open.set(socket, count + change)
  }
  server.on("connection", (socket: Socket) => {
    if (open.size >= max) {
      let victim: Socket | undefined
      for (const [s, count] of open) {
        if (count === 0) {
          victim = s
          break
        }
      }
      if (victim === undefined) return socket.destroy()
      open.delete(victim)
      victim.destroy()
    }
    open.set(socket, 0)
    Effect.runSync(Metric.set(Metrics.openConnections, open.size))
    socket.once("close", () => {
      open.delete(socket)
      Effect.runSync(Metric.set(Metrics.openConnections, open.size))
    })
  })
  server.on("request", (request, response) => {
    if (request.httpVersionMajor !== 1) return
    busy(request.socket, 1)
    response.once("close", () => busy(request.socket, -1))
  })
  return busy
}

/**
 * Node closes a connection after an answer it sends as the last (the client said `Connection: close`) as soon as
 * the answer is written, even while the client is still sending a request body the API did not read (a GET's, or
 * one refused before it was read). Closing a socket with unread bytes resets it, and the client loses the part of
 * the answer it had not read yet. Such a connection is closed as Apache's lingering close does: the answer ends
 * with a FIN, the rest of the body is read and dropped until the client closes, for `lingerMillis` at most.
 */
const lingerOnClose = (server: Server) => {
  const latest = new WeakMap<Socket, IncomingMessage>()
  server.on("request", (request: IncomingMessage) => {
    if (request.httpVersionMajor !== 1) return
    const socket = request.socket
    if (!latest.has(socket)) {
      const destroySoon = socket.destroySoon.bind(socket)
      socket.destroySoon = () => {
        if (latest.get(socket)?.complete !== false) return destroySoon()
        socket.end()
        const timer = setTimeout(() => socket.destroy(), defaults.lingerMillis).unref()
        socket.once("close", () => clearTimeout(timer))
      }
    }
    latest.set(socket, request)
  })
}

const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

/**
 * Serves HTTP/2 on `server`'s connections that begin with the HTTP/2 preface, passing its requests to `server`'s
 * `request` listeners; the others go to the HTTP/1.1 server as before. Closing `server` closes the HTTP/2
 * sessions gracefully (in-flight calls finish), and closing all its connections ends them.
 */
const serveHttp2 = (server: Server, options: Options, busy: (socket: Socket, change: 1 | -1) => void) => {
  const http2 = Http2.createServer({
    settings: { maxConcurrentStreams: defaults.http2MaxStreams, maxHeaderListSize: defaults.maxHeaderBytes }
  })
  const sessions = new Map<Http2.Http2Session, Socket>()
  let arriving: Socket | undefined
  http2.on("session", (session) => {
    const socket = arriving!
    sessions.set(session, socket)
    session.once("close", () => sessions.delete(session))
    session.on("error", () => session.destroy())
    session.setTimeout(defaults.http2IdleTimeoutMillis, () => session.close())
  })
  http2.on("stream", (stream) => {
    const socket = sessions.get(stream.session!)
    if (socket === undefined) return
    busy(socket, 1)
    stream.once("close", () => busy(socket, -1))
    stream.setTimeout(
      options.requestTimeoutMillis ?? defaults.requestTimeoutMillis,
      () => stream.close(Http2.constants.NGHTTP2_CANCEL)
    )
  })
  http2.on("request", (request, response) => {
    // Answered before its body was read (a message over the limit): the rest of the body is read and dropped, so
    // that the client finishes sending and the stream closes, for 5 seconds at most.
    request.stream.once("finish", () => {
      if (request.complete) return
      request.stream.removeAllListeners("data").on("data", () => undefined).resume()
      setTimeout(() => request.stream.close(Http2.constants.NGHTTP2_CANCEL), 5_000).unref()
    })
    server.emit("request", request, response)
  })

  // Node's own HTTP/1.1 connection handler, the first listener (the server's constructor adds it).
  const [http1] = server.listeners("connection") as Array<(socket: Socket) => void>
  server.removeListener("connection", http1!)
  server.prependListener("connection", (socket: Socket) => {
    let head = Buffer.alloc(0)
    const timer = setTimeout(() => socket.destroy(), options.headersTimeoutMillis ?? defaults.headersTimeoutMillis)
    const onError = () => socket.destroy()
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk])
      const n = Math.min(head.length, preface.length)
      const isHttp2 = head.subarray(0, n).equals(preface.subarray(0, n))
      if (isHttp2 && n < preface.length) return
      clearTimeout(timer)
      socket.off("data", onData).off("error", onError).off("close", onClose)
      socket.pause()
      socket.unshift(head)
      if (isHttp2) {
        // The HTTP/2 session reads what was unshifted before it takes over the socket.
        arriving = socket
        http2.emit("connection", socket)
        arriving = undefined
      } else {
        http1!.call(server, socket)
        socket.resume()
      }
    }
    const onClose = () => clearTimeout(timer)
    socket.on("data", onData).on("error", onError).once("close", onClose)
  })

  const close = server.close.bind(server)
  const closeAll = server.closeAllConnections.bind(server)
  return Object.assign(server, {
    close: (callback?: (error?: Error) => void) => {
      for (const session of sessions.keys()) session.close()
      return close(callback)
    },
    closeAllConnections: () => {
      for (const session of sessions.keys()) session.destroy()
      closeAll()
    }
  })
}

/** Answers a request Node could not parse with the API's error body, then closes the connection gently. */
const answerClientError = (domain: string) => (error: Error & { code?: string }, socket: Socket) => {
  if (!socket.writable || error.code === "ECONNRESET" || error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return socket.destroy()
  }
  const refusal: Errors.InvalidArgument = error.code === "HPE_HEADER_OVERFLOW"
    ? RequestLimits.headersTooLarge(defaults.maxHeaderBytes)
    : RequestLimits.malformedRequest()
  const { body, headers, status } = render(refusal, domain)
  const json = JSON.stringify(body)
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      Object.entries({ ...headers, "content-type": "application/json", connection: "close" })
        .map(([k, v]) => `${k}: ${v}\r\n`).join("") +
      `content-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  )
  // Keep reading what the client still sends, so that closing does not reset the connection under the answer.
  socket.resume()
  setTimeout(() => socket.destroy(), 5_000).unref()
}

/** A Node HTTP server (and HTTP/2 on its port) with the guards above; the API's handler is attached by the caller. */
export const make = (options: Options): Server => {
  const server = createServer({
    headersTimeout: options.headersTimeoutMillis ?? defaults.headersTimeoutMillis,
    requestTimeout: options.requestTimeoutMillis ?? defaults.requestTimeoutMillis,
    keepAliveTimeout: defaults.keepAliveTimeoutMillis,
    connectionsCheckingInterval: Math.min(1_000, options.headersTimeoutMillis ?? defaults.headersTimeoutMillis),
    maxHeaderSize: defaults.maxHeaderBytes
  })
  const busy = capConnections(server, options.maxConnections)
  server.on("clientError", answerClientError(options.errorDomain))
  lingerOnClose(server)
  return serveHttp2(server, options, busy)
}
