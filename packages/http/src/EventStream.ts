/**
 * The audit trail's watch as Server-Sent Events (docs/api.md §12): each entry a message `id: <cursor>`,
 * `event: <type>`, `data: <entry JSON>`, and a comment every 15 s so that idle connections stay open through proxies.
 * A failure once the answer has begun ends the stream; the client reconnects with the last id it received.
 */
import * as Wire from "@arbor/api/Wire"
import type { ChangeLog, Errors } from "@arbor/core"
import { HttpServerResponse } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

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

/** How often an idle stream sends a comment. */
const keepAlive = "15 seconds"

/** The answer of a watch: its entries as they come, until the client leaves. */
export const response = (entries: Stream.Stream<ChangeLog.Entry, Errors.ArborError>) =>
  HttpServerResponse.stream(
    Stream.make(": watching\n\n").pipe(
      Stream.concat(
        Stream.merge(
          Stream.map(entries, message),
          Stream.map(Stream.tick(keepAlive), () => ": keep-alive\n\n"),
          { haltStrategy: "left" }
        )
      ),
      Stream.catchAll((error) =>
        Stream.fromEffect(Effect.logError("the watch stream failed", error)).pipe(Stream.drain)
      ),
      Stream.encodeText
    ),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache", "x-accel-buffering": "no" } }
  )
