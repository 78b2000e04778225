/**
 * Access decisions: AuthZEN's evaluation endpoints and metadata, and how an explanation names a grant.
 */
import * as AccessEvaluation from "@arbor/core/AccessEvaluation"
import * as DecisionVocabulary from "@arbor/core/DecisionVocabulary"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated, jsonShape, UidPath, unchecked } from "../internal/declaration.js"
import { KnownParameters } from "../Security.js"
import * as Wire from "../Wire.js"

/** A grant as an explanation names it: the binding or mapping, its role and group, and its condition's outcome. */
const Granting = Schema.Struct({
  group: Wire.Uid,
  role: Wire.Uid,
  binding: Schema.optionalWith(Wire.Uid, { exact: true }),
  mapping: Schema.optionalWith(Wire.Uid, { exact: true }),
  expireTime: Schema.optionalWith(Wire.Time, { exact: true }).annotations({
    description: "when the binding that grants it ends, if it does"
  }),
  condition: Schema.optionalWith(
    Schema.Struct({
      expression: Schema.String,
      title: Schema.String,
      held: Schema.Boolean,
      error: Schema.optionalWith(Schema.String, { exact: true })
    }),
    { exact: true }
  ).annotations({ description: "the binding's condition and how it came out for this request" })
})

/** A grant as an explanation names it; or that the caller may not see it. */
const GrantedBy = Schema.Union(
  Granting,
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
        unmetConditions: Schema.optionalWith(Schema.Array(Granting), { exact: true }).annotations({
          description: "with explain: conditional bindings that would grant it, whose conditions did not hold"
        }),
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
        ...(context?.unmetConditions === undefined
          ? {}
          : { unmetConditions: context.unmetConditions.map((g) => new AccessEvaluation.Grant(g, true)) }),
        ...(context?.grantedBy === undefined
          ? {}
          : {
            grantedBy: context.grantedBy.map((g) =>
              "description" in g ? AccessEvaluation.UnseenGrant.instance : new AccessEvaluation.Grant(g, true)
            )
          }),
        ...(context?.error === undefined ? {} : { error: new AccessEvaluation.EvaluationError(context.error) })
      }),
    encode: ({ decision, error, grantedBy, unmetConditions }) => ({
      decision,
      ...(grantedBy === undefined && error === undefined && unmetConditions === undefined ? {} : {
        context: {
          ...(grantedBy === undefined ? {} : { grantedBy: grantedBy.map((g) => ({ ...g })) }),
          ...(unmetConditions === undefined ? {} : { unmetConditions: unmetConditions.map((g) => ({ ...g })) }),
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
const Found = Schema.Struct({
  type: Schema.String,
  id: Schema.String.annotations({ description: "a uid, or in an organization's decision vocabulary, a path or a name" })
})

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

/** The five AuthZEN endpoints, as both decision points declare them (the organization's with its uid in the path). */
const evaluate = HttpApiEndpoint.post("evaluate", "/evaluation")
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

const evaluateMany = HttpApiEndpoint.post("evaluateMany", "/evaluations")
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

const searchActions = HttpApiEndpoint.post("searchActions", "/search/action")
  .setPayload(unchecked<typeof AccessEvaluation.ActionSearch.Encoded>(
    "ActionSearchRequest",
    jsonShape(AccessEvaluation.ActionSearch)
  ))
  .addSuccess(Schema.Struct({ results: Schema.Array(Schema.Struct({ name: Schema.String })) }))
  .annotate(OpenApi.Summary, "What may this identity do here?")
  .annotate(OpenApi.Description, "Every capability the subject holds at the resource, in the canonical order.")

const searchSubjects = HttpApiEndpoint.post("searchSubjects", "/search/subject")
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
      "role_bindings.list at the resource's group. Those who hold it only through group mappings are not found."
  )

const searchResources = HttpApiEndpoint.post("searchResources", "/search/resource")
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

/**
 * Decisions for other services (DECISIONS §16, docs/api.md §14): the OpenID AuthZEN Authorization API 1.0. A false
 * decision is 200 `{"decision": false}`; 403 is only for asking about another identity without
 * `role_bindings.list` at the resource's group.
 */
export const Decisions = authenticated(
  HttpApiGroup.make("decisions")
    .add(evaluate)
    .add(evaluateMany)
    .add(searchActions)
    .add(searchSubjects)
    .add(searchResources),
  "/access/v1",
  "Decisions for other services: the OpenID AuthZEN Authorization API 1.0."
)

/**
 * An organization's decision point (docs/api.md §14): the same five endpoints below `/authzen/<organization uid>`,
 * each request read in the organization's decision vocabulary first, so that an application's enforcement points ask
 * in their own words.
 */
export const OrganizationDecisions = authenticated(
  HttpApiGroup.make("organizationDecisions")
    .add(evaluate.setPath(UidPath))
    .add(evaluateMany.setPath(UidPath))
    .add(searchActions.setPath(UidPath))
    .add(searchSubjects.setPath(UidPath))
    .add(searchResources.setPath(UidPath)),
  "/authzen/:uid/access/v1",
  "An organization's own AuthZEN decision point: requests in its decision vocabulary's words."
)

/** An organization's decision vocabulary: read by who may list its folders, replaced by who may update it. */
export const DecisionVocabularies = authenticated(
  HttpApiGroup.make("decisionVocabularies")
    .add(
      HttpApiEndpoint.get("get", "/decisionVocabularies/:uid")
        .setPath(UidPath)
        .addSuccess(Wire.DecisionVocabulary)
        .annotate(OpenApi.Summary, "Get an organization's decision vocabulary")
        .annotate(
          OpenApi.Description,
          "Its subject types, action names and resource types (empty, etag 0, when it has none); groups.list."
        )
    )
    .add(
      HttpApiEndpoint.put("set", "/decisionVocabularies/:uid")
        .setPath(UidPath)
        // The engine decodes the words, naming each that is wrong (`actions.can_read: unknown capability`).
        .setPayload(unchecked<{
          readonly subjects?: unknown
          readonly actions?: unknown
          readonly resources?: unknown
          readonly etag?: string
        }>(
          "SetDecisionVocabulary",
          jsonShape(DecisionVocabulary.SetVocabulary)
        ))
        .addSuccess(Wire.DecisionVocabulary)
        .annotate(OpenApi.Summary, "Replace an organization's decision vocabulary")
        .annotate(
          OpenApi.Description,
          "subjects {<type>: {by: uid|path} | {by: subject, issuer}}, actions {<name>: <capability>}, resources " +
            "{<type>: {folder: <path>} | {kind: <resource kind>}}; etag to replace only that version. " +
            "groups.update at the organization."
        )
    ),
  "/iam/v2beta1",
  "Organizations' decision vocabularies: an application's AuthZEN words in Arbor's terms."
)

/** A decision point's metadata (AuthZEN §9). */
const Configuration = Schema.Struct({
  policy_decision_point: Schema.String,
  access_evaluation_endpoint: Schema.String,
  access_evaluations_endpoint: Schema.String,
  search_subject_endpoint: Schema.String,
  search_resource_endpoint: Schema.String,
  search_action_endpoint: Schema.String
})

/**
 * `/.well-known/authzen-configuration`: the decision points' metadata (AuthZEN §9), for anyone: the server's, and
 * each organization's at `/.well-known/authzen-configuration/authzen/<uid>` (the well-known path before the decision
 * point's own, as RFC 8414 places it).
 */
export const DecisionsMetadata = HttpApiGroup.make("decisionsMetadata").middleware(KnownParameters).annotate(
  OpenApi.Description,
  "Where the AuthZEN endpoints are, for policy enforcement points that discover them."
).add(
  HttpApiEndpoint.get("configuration", "/.well-known/authzen-configuration")
    .addSuccess(Configuration)
    .annotate(OpenApi.Summary, "Where this decision point's AuthZEN endpoints are")
    .annotate(
      OpenApi.Description,
      "The policy decision point's metadata (AuthZEN §9): its identifier and the addresses of its evaluation, " +
        "evaluations and search endpoints. No token."
    )
).add(
  HttpApiEndpoint.get("organizationConfiguration", "/.well-known/authzen-configuration/authzen/:uid")
    .setPath(UidPath)
    .addSuccess(Configuration)
    .annotate(OpenApi.Summary, "Where an organization's decision point's endpoints are")
    .annotate(
      OpenApi.Description,
      "The metadata of the decision point at /authzen/<uid>, which reads requests in the organization's " +
        "decision vocabulary. No token."
    )
)
