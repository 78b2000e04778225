/**
 * Decisions for other services (`@arbor/api`'s `methods/decisions.ts`): AuthZEN's evaluations, its subject,
 * resource and action searches, and metadata; the same at each organization's decision point, in its vocabulary, and
 * the vocabularies. REST only: the reference protos have no such service.
 */
import {
  AccessDecision,
  authzenPaths,
  Decisions,
  DecisionsMetadata,
  DecisionVocabularies,
  OrganizationDecisions
} from "@arbor/api/Api"
import type { DecisionVocabulary, Principal } from "@arbor/core"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Domain from "../internal/domain.js"
import { answer, asCaller, serve } from "../internal/rest.js"

/** A decision answered through its wire schema compiled, as gets are: the hottest endpoint of all. */
const decided = answer(AccessDecision)

export const decisions = Domain.make({
  rest: ({ access, tokens, vocabularies }) => {
    /** The metadata of the decision point at `base` (AuthZEN §9). */
    const configuration = (base: string) => ({
      policy_decision_point: base,
      access_evaluation_endpoint: `${base}${authzenPaths.evaluation}`,
      access_evaluations_endpoint: `${base}${authzenPaths.evaluations}`,
      search_subject_endpoint: `${base}${authzenPaths.searchSubject}`,
      search_resource_endpoint: `${base}${authzenPaths.searchResource}`,
      search_action_endpoint: `${base}${authzenPaths.searchAction}`
    })
    /** `operation` as the caller, in organization `uid`'s vocabulary. */
    const inVocabularyOf = <A, E>(
      uid: string,
      operation: (
        principal: Principal.Principal,
        vocabulary: DecisionVocabulary.DecisionVocabulary
      ) => Effect.Effect<A, E>
    ) => Effect.flatMap(vocabularies.of(uid), (vocabulary) => asCaller((p) => operation(p, vocabulary)))
    return Layer.mergeAll(
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
      HttpApiBuilder.group(serve(OrganizationDecisions), "organizationDecisions", (h) =>
        h
          .handle("evaluate", ({ path, payload }) =>
            Effect.flatMap(
              inVocabularyOf(path.uid, (p, v) => access.evaluate(p, payload, v)),
              decided
            ))
          .handle("evaluateMany", ({ path, payload }) =>
            inVocabularyOf(path.uid, (p, v) => access.evaluateMany(p, payload, v)))
          .handle("searchActions", ({ path, payload }) =>
            inVocabularyOf(path.uid, (p, v) =>
              Effect.map(access.searchActions(p, payload, v), (names) => ({
                results: names.map((name) => ({ name }))
              }))))
          .handle("searchSubjects", ({ path, payload }) =>
            inVocabularyOf(path.uid, (p, v) =>
              access.searchSubjects(p, payload, v)))
          .handle("searchResources", ({ path, payload }) =>
            inVocabularyOf(path.uid, (p, v) =>
              access.searchResources(p, payload, v)))),
      HttpApiBuilder.group(serve(DecisionVocabularies), "decisionVocabularies", (h) =>
        h
          .handle("get", ({ path }) => asCaller((p) => vocabularies.get(p, path.uid)))
          .handle("set", ({ path, payload }) => asCaller((p) => vocabularies.set(p, path.uid, payload)))),
      HttpApiBuilder.group(serve(DecisionsMetadata), "decisionsMetadata", (h) =>
        h
          .handle("configuration", () => Effect.succeed(configuration(tokens.audience)))
          .handle("organizationConfiguration", ({ path }) =>
            Effect.as(vocabularies.of(path.uid), configuration(`${tokens.audience}/authzen/${path.uid}`))))
    )
  },
  services: [],
  grpc: () => undefined
})
