/**
 * The audit trail's watch as Server-Sent Events (docs/api.md §12): each entry a message `id: <cursor>`,
 * `event: <type>`, `data: <entry JSON>`, and a comment every 15 s so that idle connections stay open through proxies.
 * A failure once the answer has begun ends the stream; the client reconnects with the last id it received.
 */
import * as Wire from "@arbor/api/Wire"
import type { AuditTrail, ChangeLog, Events } from "@arbor/core"
import { HttpServerResponse } from "@effect/platform"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
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

/** The watch streams of this server, ended at once when it shuts down (`end`). */
export class Watches extends Effect.Service<Watches>()("@arbor/http/EventStream/Watches", {
  scoped: Effect.map(FiberSet.make(), (fibers) => ({ fibers, end: FiberSet.clear(fibers) }))
}) {}

/**
 * The answer of a watch. The change log's tail writes each batch straight into the answer while the client keeps
 * up; one that falls behind catches up from the store once its bytes drain (`Events.relay`). The answer ends when the
 * client leaves, when the relay fails, or when the server shuts down.
 */
export const response = (relay: AuditTrail.Relay) =>
  Effect.gen(function*() {
    const { fibers } = yield* Watches
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
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("the watch stream failed", cause)
        ),
        Effect.ensuring(Effect.sync(() => body.end()))
      )
    )
    body.once("close", () => fiber.unsafeInterruptAsFork(FiberId.none))
    return HttpServerResponse.raw(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
