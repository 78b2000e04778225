/**
 * The Node HTTP server the API listens on, hardened against slow and greedy clients: headers and whole requests
 * must arrive within time limits, idle keep-alive connections are closed, and open connections are capped. At the
 * cap a new connection takes the place of the one that has been waiting longest without a request in progress (a
 * client still trickling its headers, or an idle keep-alive), so slow clients cannot lock everyone else out.
 * Requests Node refuses before they reach the API (headers over 16 KiB, broken HTTP) get the API's error body.
 */
import { render } from "@arbor/api/ErrorBody"
import type { Errors } from "@arbor/core"
import { readFileSync } from "node:fs"
import { createServer, type Server, STATUS_CODES } from "node:http"
import type { Socket } from "node:net"
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
  maxHeaderBytes: 16 * 1024
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

/** Closes the least recently busy connection that has no request in progress when a new one would pass the cap. */
const capConnections = (server: Server, max: number) => {
  /** Open connections, least recently busy first, each with whether a request is in progress on it. */
  const open = new Map<Socket, boolean>()
  const mark = (socket: Socket, busy: boolean) => {
    if (!open.delete(socket)) return
    open.set(socket, busy)
  }
  server.on("connection", (socket: Socket) => {
    if (open.size >= max) {
      let victim: Socket | undefined
      for (const [s, busy] of open) {
        if (!busy) {
          victim = s
          break
        }
      }
      if (victim === undefined) return socket.destroy()
      open.delete(victim)
      victim.destroy()
    }
    open.set(socket, false)
    socket.once("close", () => open.delete(socket))
  })
  server.on("request", (request, response) => {
    mark(request.socket, true)
    response.once("close", () => mark(request.socket, false))
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

/** A Node HTTP server with the guards above; the API's handler is attached by the caller. */
export const make = (options: Options): Server => {
  const server = createServer({
    headersTimeout: options.headersTimeoutMillis ?? defaults.headersTimeoutMillis,
    requestTimeout: options.requestTimeoutMillis ?? defaults.requestTimeoutMillis,
    keepAliveTimeout: defaults.keepAliveTimeoutMillis,
    connectionsCheckingInterval: Math.min(1_000, options.headersTimeoutMillis ?? defaults.headersTimeoutMillis),
    maxHeaderSize: defaults.maxHeaderBytes
  })
  capConnections(server, options.maxConnections)
  server.on("clientError", answerClientError(options.errorDomain))
  return server
}
