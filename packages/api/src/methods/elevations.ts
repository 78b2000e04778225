/**
 * Just-in-time elevation (DECISIONS §21; docs/api.md §2): eligibilities, and the elevations their identities ask for
 * and approvers decide. Arbor's own: the reference protos have no such service.
 */
import * as Elevation from "@arbor/core/Elevation"
import * as Eligibility from "@arbor/core/Eligibility"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated, Deleted, jsonShape, UidPath, unchecked } from "../internal/declaration.js"
import * as ListQuery from "../ListQuery.js"
import * as Wire from "../Wire.js"

/** Eligibilities: listed, read, made and removed as role bindings are; elevated by their identity. */
export const Eligibilities = authenticated(
  HttpApiGroup.make("eligibilities")
    .add(
      HttpApiEndpoint.get("list", "/eligibilities")
        .setUrlParams(ListQuery.EligibilityListQuery)
        .addSuccess(Wire.listEnvelope("eligibilities", Wire.Eligibility))
        .annotate(OpenApi.Summary, "List eligibilities")
        .annotate(
          OpenApi.Description,
          "Those at groups where the caller holds role_bindings.list (or above); identity=<your own uid>: yours, " +
            "whatever you may list."
        )
    )
    .add(
      HttpApiEndpoint.get("get", "/eligibilities/:uid")
        .setPath(UidPath)
        .addSuccess(Wire.Eligibility)
        .annotate(OpenApi.Summary, "Get an eligibility")
        .annotate(OpenApi.Description, "With role_bindings.list at its group (or above).")
    )
    .add(
      HttpApiEndpoint.post("create", "/eligibilities/:uid")
        .setPath(UidPath)
        .setPayload(
          unchecked<Eligibility.CreateEligibility>("CreateEligibility", jsonShape(Eligibility.CreateEligibility))
        )
        .addSuccess(Wire.Eligibility)
        .annotate(OpenApi.Summary, "Make an identity eligible for a role at a group")
        .annotate(
          OpenApi.Description,
          "identityUid, roleUid, maxDuration (\"3600s\", at most a day), approverRoleUid (absent: granted at once). " +
            "Needs what binding the role there needs (role_bindings.create and every capability of the role)."
        )
    )
    .add(
      HttpApiEndpoint.del("delete", "/eligibilities/:uid")
        .setPath(UidPath)
        .addSuccess(Deleted)
        .annotate(OpenApi.Summary, "Delete an eligibility")
        .annotate(
          OpenApi.Description,
          "Its pending and granted elevations end at once (revoked). role_bindings.delete."
        )
    ),
  "/iam/v2beta1",
  "Eligibilities: identities that may hold a role at a group for a while, when they ask (just-in-time elevation)."
)

/** Elevations: listed and read; approved or denied by another identity holding the approver role. */
export const Elevations = authenticated(
  HttpApiGroup.make("elevations")
    .add(
      HttpApiEndpoint.get("list", "/elevations")
        .setUrlParams(ListQuery.ElevationListQuery)
        .addSuccess(Wire.listEnvelope("elevations", Wire.Elevation))
        .annotate(OpenApi.Summary, "List elevations")
        .annotate(
          OpenApi.Description,
          "Those at groups where the caller holds role_bindings.list (or above); state=PENDING for approvals waiting."
        )
    )
    .add(
      HttpApiEndpoint.post("create", "/elevations/:uid")
        .setPath(UidPath)
        .setPayload(unchecked<Elevation.CreateElevation>("CreateElevation", jsonShape(Elevation.CreateElevation)))
        .addSuccess(Wire.Elevation)
        .annotate(OpenApi.Summary, "Ask to hold a role for a while, in the group the path names")
        .annotate(
          OpenApi.Description,
          "roleUid (one the caller is eligible for there), reason, duration (\"3600s\", at most the eligibility's " +
            "maxDuration). Granted at once (ACTIVE) when it needs no approval, else PENDING."
        )
    )
    .add(
      HttpApiEndpoint.get("get", "/elevations/:uid")
        .setPath(UidPath)
        .addSuccess(Wire.Elevation)
        .annotate(OpenApi.Summary, "Get an elevation")
        .annotate(OpenApi.Description, "Its own identity's, an approver's, or with role_bindings.list at its group.")
    )
    .add(
      HttpApiEndpoint.post("approve", "/elevations/:uid/approve")
        .setPath(UidPath)
        .setPayload(Schema.Struct({}))
        .addSuccess(Wire.Elevation)
        .annotate(OpenApi.Summary, "Approve a pending elevation")
        .annotate(
          OpenApi.Description,
          "By an identity other than the one who asked, holding every capability of the approver role at its group " +
            "by its own bindings: it becomes an expiring role binding from now."
        )
    )
    .add(
      HttpApiEndpoint.post("deny", "/elevations/:uid/deny")
        .setPath(UidPath)
        .setPayload(Schema.Struct({}))
        .addSuccess(Wire.Elevation)
        .annotate(OpenApi.Summary, "Deny a pending elevation")
        .annotate(OpenApi.Description, "As an approver may: it then grants nothing.")
    ),
  "/iam/v2beta1",
  "Elevations: requests to hold an eligibility's role for a while, and their approvals."
)
