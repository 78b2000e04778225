/**
 * Just-in-time elevation (`@arbor/api`'s `methods/elevations.ts`): eligibilities and elevations over REST; Arbor's
 * own, so none over gRPC (the reference protos have no such service).
 */
import { Elevations, Eligibilities } from "@arbor/api/Api"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Domain from "../internal/domain.js"
import { asCaller, envelope, serve } from "../internal/rest.js"

export const elevations = Domain.make({
  rest: ({ elevations }) => {
    const eligibilityPage = envelope("eligibilities")
    const elevationPage = envelope("elevations")
    return Layer.mergeAll(
      HttpApiBuilder.group(serve(Eligibilities), "eligibilities", (h) =>
        h
          .handle("list", ({ urlParams }) =>
            Effect.map(asCaller((p) => elevations.listEligibilities(p, urlParams)), eligibilityPage))
          .handle("get", ({ path }) =>
            asCaller((p) => elevations.getEligibility(p, path.uid)))
          .handle("create", ({ path, payload }) => asCaller((p) => elevations.createEligibility(p, path.uid, payload)))
          .handle("delete", ({ path }) => asCaller((p) => elevations.deleteEligibility(p, path.uid)))),
      HttpApiBuilder.group(serve(Elevations), "elevations", (h) =>
        h
          .handle("list", ({ urlParams }) => Effect.map(asCaller((p) => elevations.list(p, urlParams)), elevationPage))
          .handle("create", ({ path, payload }) => asCaller((p) => elevations.elevate(p, path.uid, payload)))
          .handle("get", ({ path }) => asCaller((p) => elevations.get(p, path.uid)))
          .handle("approve", ({ path }) => asCaller((p) => elevations.approve(p, path.uid)))
          .handle("deny", ({ path }) => asCaller((p) => elevations.deny(p, path.uid))))
    )
  },
  services: [],
  grpc: () => undefined
})
