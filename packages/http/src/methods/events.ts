/**
 * The change log (`@arbor/api`'s `methods/events.ts`): the audit trail, listed and watched, and subscriptions; over
 * gRPC, SubscriptionsService (the protos have no audit trail).
 */
import { AuditTrail } from "@arbor/api/Api"
import { SubscriptionsService } from "@arbor/api/proto/chainguard/platform/events/v2beta1/subscriptions_pb"
import * as Resources from "@arbor/api/Resources"
import * as Wire from "@arbor/api/Wire"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Authentication from "../Authentication.js"
import * as EventStream from "../EventStream.js"
import * as Domain from "../internal/domain.js"
import { serveResource } from "../internal/grpc.js"
import { answer, asCaller, creatable, envelope, serve } from "../internal/rest.js"

export const events = Domain.make({
  rest: ({ auditTrail, authentication, subscriptions }) => {
    const entries = answer(Wire.listEnvelope("events", Wire.ChangeEntry))
    const toEntries = envelope("events")
    return Layer.merge(
      HttpApiBuilder.group(serve(AuditTrail), "auditTrail", (h) =>
        h
          .handle("list", ({ urlParams }) =>
            asCaller((p) =>
              auditTrail.list(p, urlParams)
            ).pipe(Effect.flatMap((page) => entries(toEntries(page)))))
          .handleRaw("watch", ({ request, urlParams }) =>
            asCaller((p) =>
              Effect.gen(function*() {
                // The stream's caller is checked again, as a request with its token would be, before each batch that
                // may change its authority, and the stream ends at the token's expiry.
                const authority = yield* authentication.authority(
                  Authentication.bearerIn(request.headers.authorization)
                )
                const relay = yield* auditTrail.follow(
                  p,
                  { ...urlParams, after: request.headers["last-event-id"] ?? urlParams.after },
                  authority
                )
                return { relay, caller: p }
              })
            ).pipe(Effect.flatMap(({ caller, relay }) => EventStream.response(relay, caller))))),
      creatable(Resources.subscriptions, subscriptions)
    )
  },
  services: [SubscriptionsService],
  grpc: ({ subscriptions }, run, router) =>
    serveResource(router, run, SubscriptionsService, Resources.subscriptions, subscriptions)
})
