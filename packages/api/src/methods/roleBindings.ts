/**
 * The custom method of role bindings: the batch create.
 */
import * as RoleBinding from "@arbor/core/RoleBinding"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated, jsonShape, unchecked } from "../internal/declaration.js"
import * as Wire from "../Wire.js"

/** `POST /iam/v2beta1/roleBindings:batchCreate`: the AIP-233 batch create of role bindings. */
export const RoleBindingBatches = authenticated(
  HttpApiGroup.make("roleBindingBatches").add(
    // `::` is a literal `:` to the router: the path is `/roleBindings:batchCreate`.
    HttpApiEndpoint.post("create", "/roleBindings::batchCreate")
      .setPayload(unchecked<typeof RoleBinding.BatchCreateRoleBindings.Encoded>(
        "BatchCreateRoleBindings",
        jsonShape(RoleBinding.BatchCreateRoleBindings)
      ))
      .addSuccess(Schema.Struct({ roleBindings: Schema.Array(Wire.RoleBinding.v2) }))
      .annotate(OpenApi.Summary, "Create up to 25 role bindings in one group, all or none")
      .annotate(
        OpenApi.Description,
        "Binds each request's identity to its role (or to the batch's roleUid) in the batch's parent group, in the " +
          "order given, each as CreateRoleBinding would: the caller holds every capability of each role there. One " +
          "that fails makes none. A request's parent, when set, is the batch's; its roleUid, when set, the batch's."
      )
  ),
  "/iam/v2beta1",
  "Role bindings made together."
)
