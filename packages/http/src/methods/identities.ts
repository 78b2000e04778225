/**
 * Identities (`@arbor/api`'s `methods/identities.ts`): the resource over v2 and v1, the lookup of a person's identity
 * and the caller's own metadata; over gRPC, IdentitiesService.
 */
import { IdentityLookup, OwnMetadata } from "@arbor/api/Api"
import {
  IdentitiesService,
  IdentityMetadataSchema
} from "@arbor/api/proto/chainguard/platform/iam/v2beta1/identities_pb"
import * as Resources from "@arbor/api/Resources"
import * as Wire from "@arbor/api/Wire"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Domain from "../internal/domain.js"
import { fieldsOf, message, serveResource } from "../internal/grpc.js"
import { asCaller, serve, v1, writable } from "../internal/rest.js"

export const identities = Domain.make({
  rest: ({ identities }) =>
    Layer.mergeAll(
      writable(Resources.identities, identities),
      v1(Resources.identitiesV1, identities),
      HttpApiBuilder.group(
        serve(IdentityLookup),
        "identityLookup",
        (h) => h.handle("lookup", ({ urlParams }) => asCaller(() => identities.lookup(urlParams)))
      ),
      HttpApiBuilder.group(
        serve(OwnMetadata),
        "ownMetadata",
        (h) => h.handle("update", ({ payload }) => asCaller((p) => identities.updateMetadata(p, payload)))
      )
    ),
  services: [IdentitiesService],
  grpc: ({ identities }, run, router) => {
    router.rpc(
      IdentitiesService.method.lookupIdentity,
      (request, context) => run.asCaller(context, () => identities.lookup(request))
    )
    // The request is the REST body (its proto3 JSON: the mask a comma-separated string), the answer REST's.
    const updateMetadata = IdentitiesService.method.updateIdentityMetadata
    const metadataJson = Schema.encodeSync(Wire.IdentityMetadata)
    router.rpc(
      updateMetadata,
      (request, context) =>
        run.asCaller(context, (p) =>
          fieldsOf(updateMetadata.input, request, "request").pipe(
            Effect.flatMap((json) =>
              identities.updateMetadata(p, {
                identityMetadata: json.identityMetadata,
                updateMask: typeof json.updateMask === "string" ? json.updateMask : undefined
              })
            ),
            Effect.map((updated) => message(IdentityMetadataSchema, metadataJson(updated)))
          ))
    )
    serveResource(router, run, IdentitiesService, Resources.identities, identities)
  }
})
