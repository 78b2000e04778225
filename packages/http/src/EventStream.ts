/**
 * The audit trail's watch as Server-Sent Events (docs/api.md §12): each entry a message `id: <cursor>`,
 * `event: <type>`, `data: <entry JSON>`, and a comment every 15 s so that idle connections stay open through proxies.
 * A failure once the answer has begun ends the stream; the client reconnects with the last id it received.
 */
import * as ErrorBody from "@arbor/api/ErrorBody"
import * as EventStream from "@arbor/api/EventStream"
import * as Wire from "@arbor/api/Wire"
import type { AuditTrail, ChangeLog, Events, Principal } from "@arbor/core"
import { Errors } from "@arbor/core"
import { HttpServerResponse } from "@effect/platform"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { PassThrough } from "node:stream"

const encodeEntry = Schema.encodeSync(Wire.ChangeEntry)

/** Messages already made: every watch of this process is handed the same entries, each made into a message once. */
const made = new WeakMap<ChangeLog.Entry, string>()

/** One entry as a Server-Sent Events message. */
export const message = (entry: ChangeLog.Entry): string => {
  let text = made.get(entry)
  if (text === undefined) {
    text = `id: ${entry.position}\nevent: ${entry.type}\ndata: ${JSON.stringify(encodeEntry(entry))}\n\n`
    made.set(entry, text)
  }
  return text
}

const encoder = new TextEncoder()
const opening = encoder.encode(": watching\n\n")
const keepAlive = encoder.encode(": keep-alive\n\n")

/** Batches already made into bytes: watches that see all of a batch are handed the same one, made once. */
const written = new WeakMap<Events.Batch, Uint8Array>()

/** A batch as the bytes of its messages, or a keep-alive comment for a heartbeat (an empty batch). */
const bytes = (batch: Events.Batch): Uint8Array => {
  if (batch.length === 0) return keepAlive
  let made = written.get(batch)
  if (made === undefined) {
    made = encoder.encode(batch.map(message).join(""))
    written.set(batch, made)
  }
  return made
}

/** How many bytes a watch may have waiting for its client before it stops taking batches until they drain. */
const bufferBytes = 256 * 1024

/** How many watch streams may be open at once, for one identity and on the whole server. */
export interface Limits {
  /** For one identity (its uid, or `system`). */
  readonly perIdentity: number
  /** On the whole server: a share of its connections, so that streams never take those of other requests. */
  readonly total: number
  /** How long a stream lasts at most; then it ends, and its client reconnects with the last id it received. */
  readonly lifetime: Duration.DurationInput
}

/** The default limits for a server that accepts `maxConnections` connections: half of them at most for streams. */
export const limitsFor = (maxConnections: number): Limits => ({
  perIdentity: 8,
  total: Math.max(1, Math.floor(maxConnections / 2)),
  lifetime: "1 hour"
})

/**
 * The watch streams of this server: counted by identity and in all, refused past `Limits`, and ended at once when the
 * server shuts down (`end`).
 */
export class Watches extends Context.Tag("@arbor/http/EventStream/Watches")<Watches, {
  readonly fibers: FiberSet.FiberSet
  readonly limits: Limits
  /** The error domain of the final event's body. */
  readonly errorDomain: string
  /** Streams open, by identity. */
  readonly open: Map<string, number>
  readonly end: Effect.Effect<void>
}>() {}

/** The watch streams under `limits`, their final events' errors rendered with `errorDomain`. */
export const layer = (limits: Limits, errorDomain: string) =>
  Layer.scoped(
    Watches,
    Effect.map(FiberSet.make(), (fibers) => ({
      fibers,
      limits,
      errorDomain,
      open: new Map<string, number>(),
      end: FiberSet.clear(fibers)
    }))
  )

/** The final message of a stream whose caller would now be refused: `event: end`, the error's body as its data. */
export const ending = (error: Errors.ArborError, domain: string): string =>
  `event: ${EventStream.endEvent}\ndata: ${JSON.stringify(ErrorBody.render(error, domain).body)}\n\n`

/**
 * The answer of a watch of `caller`'s. The change log's tail writes each batch straight into the answer while the
 * client keeps up; one that falls behind catches up from the store once its bytes drain (`Events.relay`). The answer
 * ends when the client leaves, when the server shuts down or the stream has lasted its lifetime (the client
 * reconnects), or with a final `end` event saying why once a request of the caller's would be refused (its token
 * expired, its binding revoked, its person deprovisioned). Past the limits of open streams, `ResourceExhausted`.
 */
export const response = (relay: AuditTrail.Relay, caller: Principal.Principal) =>
  Effect.gen(function*() {
    const { errorDomain, fibers, limits, open } = yield* Watches
    const who = caller._tag === "System" ? "system" : caller.uid
    const theirs = open.get(who) ?? 0
    let total = 0
    open.forEach((n) => (total += n))
    if (theirs >= limits.perIdentity || total >= limits.total) {
      return yield* new Errors.ResourceExhausted({
        description: theirs >= limits.perIdentity
          ? `at most ${limits.perIdentity} watch streams may be open at once for one identity`
          : "the server has as many watch streams open as it takes",
        retryAfterSeconds: 10,
        reason: "TOO_MANY_STREAMS"
      })
    }
    open.set(who, theirs + 1)
    const closed = () => {
      const left = (open.get(who) ?? 1) - 1
      if (left === 0) open.delete(who)
      else open.set(who, left)
    }
    const body = new PassThrough({ highWaterMark: bufferBytes })
    body.write(opening)
    const fiber = yield* FiberSet.run(
      fibers,
      relay({
        offer: (batch) => !body.writableNeedDrain && (body.write(bytes(batch)), true),
        take: (batch) =>
          Effect.async<void>((resume) => {
            if (body.write(bytes(batch))) return resume(Effect.void)
            const drained = () => resume(Effect.void)
            body.once("drain", drained)
            return Effect.sync(() => body.off("drain", drained))
          })
      }).pipe(
        Effect.raceFirst(Effect.sleep(limits.lifetime)),
        Effect.catchIf(ErrorBody.isArborError, (error) => Effect.sync(() => body.write(ending(error, errorDomain)))),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("the watch stream failed", cause)
        ),
        Effect.ensuring(Effect.sync(() => {
          closed()
          body.end()
        }))
      )
    )
    body.once("close", () => fiber.unsafeInterruptAsFork(FiberId.none))
    return HttpServerResponse.raw(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
