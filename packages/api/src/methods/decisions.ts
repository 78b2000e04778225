/**
 * Access decisions: AuthZEN's evaluation endpoints and metadata, and how an explanation names a grant.
 */
import * as AccessEvaluation from "@arbor/core/AccessEvaluation"
import * as Capability from "@arbor/core/Capability"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated, jsonShape, unchecked } from "../internal/declaration.js"
import { KnownParameters } from "../Security.js"
import * as Wire from "../Wire.js"

/** A grant as an explanation names it: the binding or mapping, its role and group; or that the caller may not see it. */
const GrantedBy = Schema.Union(
  Schema.Struct({
    group: Wire.Uid,
    role: Wire.Uid,
    binding: Schema.optionalWith(Wire.Uid, { exact: true }),
    mapping: Schema.optionalWith(Wire.Uid, { exact: true })
  }),
  Schema.Struct({ description: Schema.Literal("granted by a binding you cannot see") })
)

/**
 * A decision as AuthZEN answers it; with `explain`, `context.grantedBy` names what granted it (as far as the caller
 * may list it).
 */
export const AccessDecision = Schema.transform(
  Schema.Struct({
    decision: Schema.Boolean,
    context: Schema.optionalWith(
      Schema.Struct({
        grantedBy: Schema.optionalWith(Schema.Array(GrantedBy), { exact: true }),
        error: Schema.optionalWith(Schema.Struct({ status: Schema.Number, message: Schema.String }), { exact: true })
      }),
      { exact: true }
    )
  }),
  Schema.typeSchema(AccessEvaluation.Decision),
  {
    strict: true,
    decode: ({ context, decision }) =>
      new AccessEvaluation.Decision({
        decision,
        ...(context?.grantedBy === undefined
          ? {}
          : {
            grantedBy: context.grantedBy.map((g) =>
              "description" in g ? AccessEvaluation.UnseenGrant.instance : new AccessEvaluation.Grant(g, true)
            )
          }),
        ...(context?.error === undefined ? {} : { error: new AccessEvaluation.EvaluationError(context.error) })
      }),
    encode: ({ decision, error, grantedBy }) => ({
      decision,
      ...(grantedBy === undefined && error === undefined ? {} : {
        context: {
          ...(grantedBy === undefined ? {} : { grantedBy: grantedBy.map((g) => ({ ...g })) }),
          ...(error === undefined ? {} : { error: { status: error.status, message: error.message } })
        }
      })
    })
  }
).annotations({ identifier: "AccessEvaluationResponse" })

/** The AuthZEN endpoints: where they are, for policy enforcement points that discover them. */
export const authzenPaths = {
  evaluation: "/access/v1/evaluation",
  evaluations: "/access/v1/evaluations",
  searchAction: "/access/v1/search/action"
} as const

/**
 * Decisions for other services (DECISIONS §16, docs/api.md §14): the OpenID AuthZEN Authorization API 1.0. A false
 * decision is 200 `{"decision": false}`; 403 is only for asking about another identity without
 * `role_bindings.list` at the resource's group.
 */
export const Decisions = authenticated(
  HttpApiGroup.make("decisions")
    .add(
      HttpApiEndpoint.post("evaluate", "/evaluation")
        .setPayload(unchecked<typeof AccessEvaluation.Evaluation.Encoded>(
          "AccessEvaluationRequest",
          jsonShape(AccessEvaluation.Evaluation)
        ))
        .addSuccess(AccessDecision)
        .annotate(OpenApi.Summary, "May this identity do this here?")
        .annotate(
          OpenApi.Description,
          "subject {type: identity, id: <uid>}, action {name: <capability>}, resource {type: group|identity|role|" +
            "role_binding|identity_provider|account_association|group_invite|external_group_role_mapping|repo|tag|" +
            "subscription, id: <uid>}, context {explain: true} to name the bindings that granted it. The decision is " +
            "the API's own, from the current bindings."
        )
    )
    .add(
      HttpApiEndpoint.post("evaluateMany", "/evaluations")
        .setPayload(unchecked<typeof AccessEvaluation.Evaluations.Encoded>(
          "AccessEvaluationsRequest",
          jsonShape(AccessEvaluation.Evaluations)
        ))
        .addSuccess(Schema.Union(Schema.Struct({ evaluations: Schema.Array(AccessDecision) }), AccessDecision))
        .annotate(OpenApi.Summary, "Many decisions at once")
        .annotate(
          OpenApi.Description,
          `Up to ${AccessEvaluation.maxEvaluations} evaluations, each with the batch's subject, action, resource and ` +
            "context unless it names its own; options.evaluations_semantic execute_all (the default), " +
            "deny_on_first_deny or permit_on_first_permit. Without evaluations, one decision."
        )
    )
    .add(
      HttpApiEndpoint.post("searchActions", "/search/action")
        .setPayload(unchecked<typeof AccessEvaluation.ActionSearch.Encoded>(
          "ActionSearchRequest",
          jsonShape(AccessEvaluation.ActionSearch)
        ))
        .addSuccess(Schema.Struct({ results: Schema.Array(Schema.Struct({ name: Capability.Capability })) }))
        .annotate(OpenApi.Summary, "What may this identity do here?")
        .annotate(OpenApi.Description, "Every capability the subject holds at the resource, in the canonical order.")
    ),
  "/access/v1",
  "Decisions for other services: the OpenID AuthZEN Authorization API 1.0."
)

/** `/.well-known/authzen-configuration`: the decision point's metadata (AuthZEN §9), for anyone. */
export const DecisionsMetadata = HttpApiGroup.make("decisionsMetadata").middleware(KnownParameters).annotate(
  OpenApi.Description,
  "Where the AuthZEN endpoints are, for policy enforcement points that discover them."
).add(
  HttpApiEndpoint.get("configuration", "/.well-known/authzen-configuration")
    .addSuccess(Schema.Struct({
      policy_decision_point: Schema.String,
      access_evaluation_endpoint: Schema.String,
      access_evaluations_endpoint: Schema.String,
      search_action_endpoint: Schema.String
    }))
    .annotate(OpenApi.Summary, "Where this decision point's AuthZEN endpoints are")
    .annotate(
      OpenApi.Description,
      "The policy decision point's metadata (AuthZEN §9): its identifier and the addresses of its evaluation, " +
        "evaluations and action search endpoints. No token."
    )
)
