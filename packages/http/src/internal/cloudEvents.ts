/**
 * A change-log entry as its webhook delivery (`Deliveries`): a CloudEvent 1.0 in binary mode, and the wait before each
 * retry of one a sink refused.
 */
import * as Wire from "@arbor/api/Wire"
import type { ChangeLog } from "@arbor/core"
import { CloudEvent, HTTP } from "cloudevents"
import * as Schema from "effect/Schema"

/** The wait before retry `attempt` (1, 2, …): exponential from 1 s, at most 10 minutes, with jitter. */
export const backoffMillis = (attempt: number): number => {
  const base = Math.min(1_000 * 2 ** (attempt - 1), 600_000)
  return Math.round(base * (0.5 + Math.random() * 0.5))
}

const encodeEntry = Schema.encodeSync(Wire.ChangeEntry)

/** One entry as its delivery: the CloudEvent's headers and body, and its time as `ce-time` gives it. */
export const cloudEvent = (entry: ChangeLog.Entry, source: string) => {
  const wire = encodeEntry(entry)
  const event = new CloudEvent({
    id: entry.id,
    source,
    type: entry.type,
    subject: entry.subject,
    time: wire.time,
    group: entry.group,
    datacontenttype: "application/json",
    data: { actor: wire.actor, body: wire.body }
  })
  const { body, headers } = HTTP.binary(event)
  const named = Object.entries(headers).flatMap(([name, value]): Array<[string, string]> =>
    typeof value === "string" ? [[name, value]] : []
  )
  const fields = Object.fromEntries(named)
  return { headers: fields, body: String(body), time: fields["ce-time"] ?? wire.time }
}
