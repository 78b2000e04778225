/**
 * Group invites (`@arbor/api`'s `methods/invites.ts`): the resource, and redeeming a code as the caller; over gRPC,
 * GroupInvitesService (its protos have no redeem).
 */
import { InviteCodes } from "@arbor/api/Api"
import { GroupInvitesService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/group_invites_pb"
import * as Resources from "@arbor/api/Resources"
import { HttpApiBuilder } from "@effect/platform"
import * as Layer from "effect/Layer"
import * as Domain from "../internal/domain.js"
import { serveResource } from "../internal/grpc.js"
import { asCaller, serve, writable } from "../internal/rest.js"

export const invites = Domain.make({
  rest: ({ invites }) =>
    Layer.merge(
      writable(Resources.groupInvites, invites),
      HttpApiBuilder.group(
        serve(InviteCodes),
        "inviteCodes",
        (h) => h.handle("redeem", ({ payload }) => asCaller((p) => invites.redeemOwn(p, payload)))
      )
    ),
  services: [GroupInvitesService],
  grpc: ({ invites }, run, router) => serveResource(router, run, GroupInvitesService, Resources.groupInvites, invites)
})
