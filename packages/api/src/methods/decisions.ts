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
  searchAction: "/access/v1/search/action",
  searchSubject: "/access/v1/search/subject",
  searchResource: "/access/v1/search/resource"
} as const

/** A page of a subject or resource search, as AuthZEN answers it: `page.next_token` while more follow. */
const Found = Schema.Struct({ type: Schema.String, id: Wire.Uid })

export const SearchResults = Schema.transform(
  Schema.Struct({
    results: Schema.Array(Found),
    page: Schema.optionalWith(Schema.Struct({ next_token: Schema.String }), { exact: true })
  }),
  Schema.Struct({ results: Schema.Array(Schema.typeSchema(Found)), nextToken: Schema.UndefinedOr(Schema.String) }),
  {
    strict: true,
    decode: ({ page, results }) => ({ results, nextToken: page?.next_token }),
    encode: ({ nextToken, results }) => ({
      results,
      ...(nextToken === undefined ? {} : { page: { next_token: nextToken } })
    })
  }
).annotations({ identifier: "SearchResults" })

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
    )
    .add(
      HttpApiEndpoint.post("searchSubjects", "/search/subject")
        .setPayload(unchecked<typeof AccessEvaluation.SubjectSearch.Encoded>(
          "SubjectSearchRequest",
          jsonShape(AccessEvaluation.SubjectSearch)
        ))
        .addSuccess(SearchResults)
        .annotate(OpenApi.Summary, "Who may do this here?")
        .annotate(
          OpenApi.Description,
          "The identities (subject type identity) whose bindings at the resource's group or above give the " +
            "capability, each decided as an evaluation is, in uid order; page {limit, token}. Needs " +
            "role_bindings.list at the resource's group. Those who hold it only through a sign-in's group mappings " +
            "are not found."
        )
    )
    .add(
      HttpApiEndpoint.post("searchResources", "/search/resource")
        .setPayload(unchecked<typeof AccessEvaluation.ResourceSearch.Encoded>(
          "ResourceSearchRequest",
          jsonShape(AccessEvaluation.ResourceSearch)
        ))
        .addSuccess(SearchResults)
        .annotate(OpenApi.Summary, "Where may this identity do this?")
        .annotate(
          OpenApi.Description,
          "The resources of the type where the subject holds the capability, in uid order; page {limit, token}. " +
            "For another identity than the caller, only where the caller holds role_bindings.list. An unknown " +
            "subject or resource type finds nothing."
        )
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
      search_subject_endpoint: Schema.String,
      search_resource_endpoint: Schema.String,
      search_action_endpoint: Schema.String
    }))
    .annotate(OpenApi.Summary, "Where this decision point's AuthZEN endpoints are")
    .annotate(
      OpenApi.Description,
      "The policy decision point's metadata (AuthZEN §9): its identifier and the addresses of its evaluation, " +
        "evaluations and action search endpoints. No token."
    )
)
