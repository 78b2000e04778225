/**
 * Decisions for other services (`@arbor/api`'s `methods/decisions.ts`): AuthZEN's evaluations, its subject,
 * resource and action searches, and metadata. REST only: the reference protos have no such service.
 */
import { AccessDecision, authzenPaths, Decisions, DecisionsMetadata } from "@arbor/api/Api"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Domain from "../internal/domain.js"
import { answer, asCaller, serve } from "../internal/rest.js"

/** A decision answered through its wire schema compiled, as gets are: the hottest endpoint of all. */
const decided = answer(AccessDecision)

export const decisions = Domain.make({
  rest: ({ access, tokens }) =>
    Layer.merge(
      HttpApiBuilder.group(serve(Decisions), "decisions", (h) =>
        h
          .handle("evaluate", ({ payload }) => Effect.flatMap(asCaller((p) => access.evaluate(p, payload)), decided))
          .handle("evaluateMany", ({ payload }) => asCaller((p) => access.evaluateMany(p, payload)))
          .handle("searchActions", ({ payload }) =>
            asCaller((p) => access.searchActions(p, payload)).pipe(
              Effect.map((capabilities) => ({ results: capabilities.map((name) => ({ name })) }))
            ))
          .handle("searchSubjects", ({ payload }) => asCaller((p) => access.searchSubjects(p, payload)))
          .handle("searchResources", ({ payload }) => asCaller((p) => access.searchResources(p, payload)))),
      HttpApiBuilder.group(serve(DecisionsMetadata), "decisionsMetadata", (h) =>
        h.handle("configuration", () =>
          Effect.succeed({
            policy_decision_point: tokens.audience,
            access_evaluation_endpoint: `${tokens.audience}${authzenPaths.evaluation}`,
            access_evaluations_endpoint: `${tokens.audience}${authzenPaths.evaluations}`,
            search_subject_endpoint: `${tokens.audience}${authzenPaths.searchSubject}`,
            search_resource_endpoint: `${tokens.audience}${authzenPaths.searchResource}`,
            search_action_endpoint: `${tokens.audience}${authzenPaths.searchAction}`
          })))
    ),
  services: [],
  grpc: () => undefined
})
