/** Roles: the resource over v2 and v1; over gRPC, RolesService. They have no custom method. */
import { RolesService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/roles_pb"
import * as Resources from "@arbor/api/Resources"
import * as Layer from "effect/Layer"
import * as Domain from "../internal/domain.js"
import { serveResource } from "../internal/grpc.js"
import { v1, writable } from "../internal/rest.js"

export const roles = Domain.make({
  rest: ({ roles }) => Layer.merge(writable(Resources.roles, roles), v1(Resources.rolesV1, roles)),
  services: [RolesService],
  grpc: ({ roles }, run, router) => serveResource(router, run, RolesService, Resources.roles, roles)
})
