/**
 * The audit trail: the change log, listed and followed.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated } from "../internal/declaration.js"
import * as ListQuery from "../ListQuery.js"
import * as Wire from "../Wire.js"

/** The audit trail (docs/api.md §12): the change log, listed and followed. */
export const AuditTrail = authenticated(
  HttpApiGroup.make("auditTrail")
    .add(
      HttpApiEndpoint.get("list", "/events")
        .setUrlParams(ListQuery.EntryListQuery)
        .addSuccess(Wire.listEnvelope("events", Wire.ChangeEntry))
        .annotate(OpenApi.Summary, "List change-log entries")
        .annotate(
          OpenApi.Description,
          "Every committed write's entries, oldest first (order_by=time desc: newest first), of the groups where the " +
            "caller holds `subscriptions.list` and of the groups below them. totalCount counts only those."
        )
    )
    .add(
      // `::` is a literal `:` to the router: the path is `/events:watch`.
      HttpApiEndpoint.get("watch", "/events::watch")
        .setUrlParams(ListQuery.WatchQuery)
        .addSuccess(
          Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" }))
            .annotations({ description: "Server-Sent Events: `id: <cursor>`, `event: <type>`, `data: <entry JSON>`" })
        )
        .annotate(OpenApi.Summary, "Follow the change log")
        .annotate(
          OpenApi.Description,
          "The entries after the cursor given as Last-Event-ID (or after=), then each new one as it commits on any " +
            "server sharing the database, as Server-Sent Events. Reconnecting with the last id received misses " +
            "nothing and repeats nothing. Same filters and visibility as the list."
        )
    ),
  "/events/v2beta1",
  "The audit trail: who changed what, when, in answer to which request."
)
