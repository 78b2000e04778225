/**
 * What the conditions of a decision read of an AuthZEN request (DECISIONS §21): its parts as the request named them,
 * in a decision vocabulary's words when it has one, beside Arbor's reading of them.
 */
import type * as Condition from "../Condition.js"
import type { DecisionRequest } from "./grants.js"

/** What a request as it came may say of its parts: named reads, which a decision makes at each evaluation. */
interface Asked {
  readonly subject?: unknown
  readonly action?: unknown
  readonly resource?: unknown
  readonly id?: unknown
  readonly type?: unknown
  readonly name?: unknown
}

/** `value` as a request's part that may say what `Asked` names, if it is an object. */
const askedIn = (value: unknown): Asked => typeof value === "object" && value !== null ? value : {}

/** `value` if it is a string. */
const stringOr = (value: unknown, otherwise: string): string => typeof value === "string" ? value : otherwise

interface Entity {
  readonly type: string
  readonly id: string
  readonly properties?: { readonly [key: string]: unknown } | undefined
}

/**
 * What the conditions of a decision read of a request: its subject and resource as `input` asked (in a vocabulary's
 * words, when it has one), their properties and its context, as `decoded` (in Arbor's terms) holds them.
 */
export const askedOf = (
  input: unknown,
  decoded: {
    readonly subject: Entity
    readonly resource: Entity
    readonly action?: { readonly name: string; readonly properties?: Entity["properties"] }
    readonly context?: { readonly [key: string]: unknown } | undefined
  },
  budget: Condition.Budget
): DecisionRequest => {
  // Each part of the request read once: a condition's decision reads them at every evaluation.
  const asked = askedIn(input)
  const entity = (part: Asked, known: Entity) => ({
    id: stringOr(part.id, known.id),
    type: stringOr(part.type, known.type),
    properties: known.properties ?? {}
  })
  const resource = entity(askedIn(asked.resource), decoded.resource)
  return {
    resource: { uid: resource.id, kind: resource.type, properties: resource.properties },
    subject: entity(askedIn(asked.subject), decoded.subject),
    ...(decoded.action === undefined ? {} : {
      action: {
        name: stringOr(askedIn(asked.action).name, decoded.action.name),
        properties: decoded.action.properties ?? {}
      }
    }),
    context: decoded.context ?? {},
    budget
  }
}
