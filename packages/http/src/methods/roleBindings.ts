/**
 * Role bindings (`@arbor/api`'s `methods/roleBindings.ts`): the resource over v2 and v1, and batches of bindings; over
 * gRPC, RoleBindingsService.
 */
import { RoleBindingBatches } from "@arbor/api/Api"
import { RoleBindingsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/role_bindings_pb"
import * as Resources from "@arbor/api/Resources"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Domain from "../internal/domain.js"
import { fieldsOf, message, protoJsonOf, serveResource } from "../internal/grpc.js"
import { asCaller, serve, v1, writable } from "../internal/rest.js"

export const roleBindings = Domain.make({
  rest: ({ bindings }) =>
    Layer.mergeAll(
      writable(Resources.roleBindings, bindings),
      v1(Resources.roleBindingsV1, bindings),
      HttpApiBuilder.group(
        serve(RoleBindingBatches),
        "roleBindingBatches",
        (h) =>
          h.handle(
            "create",
            ({ payload }) =>
              asCaller((p) => bindings.batchCreate(p, payload)).pipe(Effect.map((roleBindings) => ({ roleBindings })))
          )
      )
    ),
  services: [RoleBindingsService],
  grpc: ({ bindings }, run, router) => {
    // A batch's request is the REST body (its proto3 JSON); each binding leaves as the resource does.
    const batchCreate = RoleBindingsService.method.batchCreateRoleBindings
    const bindingJson = protoJsonOf(Resources.roleBindings)
    router.rpc(
      batchCreate,
      (request, context) =>
        run.asCaller(context, (p) =>
          fieldsOf(batchCreate.input, request, "request").pipe(
            Effect.flatMap((json) => bindings.batchCreate(p, json)),
            Effect.map((made) => message(batchCreate.output, { roleBindings: made.map(bindingJson) }))
          ))
    )
    serveResource(router, run, RoleBindingsService, Resources.roleBindings, bindings)
  }
})
