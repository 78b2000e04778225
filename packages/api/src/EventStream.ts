/**
 * The framing of the watch stream (`GET /events/v2beta1/events:watch`, Server-Sent Events): text as it arrives, in
 * chunks cut anywhere, becomes whole messages (`id`, `event`, `data`). The command-line client and the console read
 * the stream through it.
 */

/**
 * The event of a stream's last message when the server ends it because a request of the caller's would now be
 * refused (its token expired, its binding revoked, its person deprovisioned): its data is the refusal's error body.
 */
export const endEvent = "end"

/** One message of the stream; comments (keep-alives) carry no data and are never given. */
export interface Message {
  readonly id?: string | undefined
  readonly event?: string | undefined
  readonly data: string
}

const fieldsOf = (block: string): Record<string, string> =>
  Object.fromEntries(
    block.split("\n").filter((line) => line !== "" && !line.startsWith(":")).map((line) => {
      const colon = line.indexOf(":")
      return colon < 0 ? [line, ""] : [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, "")]
    })
  )

/** A reader of one stream: give it each chunk of text as it arrives; it answers the messages that chunk completed. */
export const reader = () => {
  let buffer = ""
  return (chunk: string): ReadonlyArray<Message> => {
    buffer += chunk.replace(/\r\n/g, "\n")
    const messages: Array<Message> = []
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const fields = fieldsOf(buffer.slice(0, end))
      buffer = buffer.slice(end + 2)
      if (fields.data !== undefined) messages.push({ id: fields.id, event: fields.event, data: fields.data })
    }
    return messages
  }
}
