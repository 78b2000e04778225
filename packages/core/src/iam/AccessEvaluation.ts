/**
 * Access evaluations (DECISIONS §16; docs/api.md §14), in the shapes of the OpenID AuthZEN Authorization API 1.0: may
 * this subject (an identity) take this action (a capability) on this resource (a group, or a resource in one)?
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import * as Uid from "../engine/Uid.js"
import * as Capability from "./Capability.js"

/** The kinds of resource a decision may be asked about. */
export const resourceTypes = [
  "group",
  "identity",
  "role",
  "role_binding",
  "identity_provider",
  "account_association",
  "group_invite",
  "external_group_role_mapping",
  "repo",
  "tag",
  "subscription"
] as const
export type ResourceType = typeof resourceTypes[number]

/**
 * The group a resource's capabilities are held at: a group and an account association are their own; a tag and a
 * group mapping are two levels below theirs (a repo's, a provider's); the rest are one level below theirs.
 */
export const groupOf = (type: ResourceType, uid: Uid.Uid): Uid.Uid => {
  const parent = (of: Uid.Uid) => Uid.parentOrNull(of) ?? of
  switch (type) {
    case "group":
    case "account_association":
      return uid
    case "tag":
    case "external_group_role_mapping":
      return parent(parent(uid))
    default:
      return parent(uid)
  }
}

const required = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.propertySignature(schema).annotations({ missingMessage: () => "is required" })

const Properties = Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/** The subject: an identity, by its uid. */
export const Subject = Schema.Struct({
  type: required(Schema.Literal("identity").annotations({ message: () => "must be identity" })),
  id: required(Uid.Uid),
  properties: Properties
})

/** The action: a capability, in either spelling (`groups.list`, `CAP_IAM_GROUPS_LIST`). */
export const Action = Schema.Struct({ name: required(Capability.Capability), properties: Properties })

/** The resource: one of `resourceTypes`, by its uid. */
export const Resource = Schema.Struct({
  type: required(
    Schema.Literal(...resourceTypes).annotations({ message: () => `must be one of ${resourceTypes.join(", ")}` })
  ),
  id: required(Uid.Uid),
  properties: Properties
})

/** The context: `explain: true` asks which bindings decided. */
export const Context = Schema.Struct({ explain: Schema.optional(Schema.Boolean) }, {
  key: Schema.String,
  value: Schema.Unknown
})

/** One evaluation (AuthZEN §6.1). */
export const Evaluation = Schema.Struct({
  subject: required(Subject),
  action: required(Action),
  resource: required(Resource),
  context: Schema.optional(Context)
})
export type Evaluation = typeof Evaluation.Type

/** The most evaluations one batch may hold. */
export const maxEvaluations = 200

/** How a batch runs (AuthZEN §7.1.2). */
export const Semantic = Schema.Literal("execute_all", "deny_on_first_deny", "permit_on_first_permit")

/**
 * A batch (AuthZEN §7.1): defaults for every item, overridden by each item's own; without items it is one evaluation.
 */
export const Evaluations = Schema.Struct({
  subject: Schema.optional(Schema.Unknown),
  action: Schema.optional(Schema.Unknown),
  resource: Schema.optional(Schema.Unknown),
  context: Schema.optional(Schema.Unknown),
  evaluations: Schema.optional(
    Schema.Array(
      Schema.Struct({
        subject: Schema.optional(Schema.Unknown),
        action: Schema.optional(Schema.Unknown),
        resource: Schema.optional(Schema.Unknown),
        context: Schema.optional(Schema.Unknown)
      })
    ).pipe(
      Schema.filter((items) => items.length <= maxEvaluations || `may hold at most ${maxEvaluations} evaluations`)
    )
  ),
  options: Schema.optional(Schema.Struct({ evaluations_semantic: Schema.optional(Semantic) }))
})

/**
 * An entity a search names by type and id: any type and id, one Arbor does not know finding nothing rather than
 * refused (AuthZEN §8: an unknown entity is an empty result). `known` tells them apart.
 */
const Named = Schema.Struct({ type: required(Schema.String), id: required(Schema.String), properties: Properties })
type Named = typeof Named.Type

/** A search's subject when it is one Arbor knows: an identity, by its uid; undefined otherwise. */
export const knownSubject = (named: Named): typeof Subject.Type | undefined =>
  named.type === "identity" && Uid.isUid(named.id) ? { ...named, type: "identity", id: named.id } : undefined

/** A search's resource when it is one Arbor knows: one of `resourceTypes`, by its uid; undefined otherwise. */
export const knownResource = (named: Named): typeof Resource.Type | undefined =>
  isResourceType(named.type) && Uid.isUid(named.id) ? { ...named, type: named.type, id: named.id } : undefined

/** An action a search names: any name, one that is no capability finding nothing (`knownAction`). */
const NamedAction = Schema.Struct({ name: required(Schema.String), properties: Properties })

/** A search's action when it names a capability (in either spelling); undefined otherwise. */
export const knownAction = (named: typeof NamedAction.Type): typeof Action.Type | undefined => {
  const capability = Capability.fromName(named.name)
  return capability === undefined ? undefined : { ...named, name: capability }
}

/** A search of the actions a subject may take on a resource (AuthZEN §8.4). */
export const ActionSearch = Schema.Struct({
  subject: required(Named),
  resource: required(Named),
  context: Schema.optional(Context)
})

/** The most results one page of a search holds, and how many when the request does not say (AuthZEN §8.1). */
export const maxSearchResults = 1_000
export const defaultSearchResults = 100

/** A search's page: at most `limit` results, after those of the page whose `next_token` is `token`. */
export const SearchPage = Schema.Struct({
  token: Schema.optional(Schema.String),
  limit: Schema.optional(
    Schema.Int.pipe(
      Schema.between(1, maxSearchResults, { message: () => `must be an integer from 1 to ${maxSearchResults}` })
    )
  )
})

/** An entity searched for by its type alone: any type, an unknown one finding nothing. */
const Typed = Schema.Struct({ type: required(Schema.String), properties: Properties })

/**
 * A search of the subjects that may take an action on a resource (AuthZEN §8.2): identities, found by their
 * bindings at the resource's group or above and each decided as an evaluation is.
 */
export const SubjectSearch = Schema.Struct({
  subject: required(Typed),
  action: required(NamedAction),
  resource: required(Named),
  context: Schema.optional(Context),
  page: Schema.optional(SearchPage)
})

/** A search of the resources of a type a subject may take an action on (AuthZEN §8.3). */
export const ResourceSearch = Schema.Struct({
  subject: required(Named),
  action: required(NamedAction),
  resource: required(Typed),
  context: Schema.optional(Context),
  page: Schema.optional(SearchPage)
})

/** A page of a search's results: entities by type and id, in uid order, and the token of the next page. */
export interface SearchResults {
  /** Each found entity: its id a uid, or in a vocabulary's words (a path, a folder's name). */
  readonly results: ReadonlyArray<{ readonly type: string; readonly id: string }>
  readonly nextToken: string | undefined
}

/** True for one of `resourceTypes`. */
export const isResourceType = (type: string): type is ResourceType =>
  (resourceTypes as ReadonlyArray<string>).includes(type)

/** A conditional grant's condition in an explanation, and how it came out. */
export const GrantCondition = Schema.Struct({
  expression: Schema.String,
  title: Schema.String,
  held: Schema.Boolean,
  error: Schema.optionalWith(Schema.String, { exact: true })
})

/** What granted a decision: a binding (or a sign-in's group mapping) of a role at a group. */
export class Grant extends Schema.Class<Grant>("@arbor/core/AccessEvaluation/Grant")({
  group: Uid.Uid,
  role: Uid.Uid,
  binding: Schema.optionalWith(Uid.Uid, { exact: true }),
  mapping: Schema.optionalWith(Uid.Uid, { exact: true }),
  /** When the binding that grants it ends, if it does. */
  expireTime: Schema.optionalWith(Timestamp, { exact: true }),
  /** The binding's condition, and how it came out for this request (false with an error: it could not be decided). */
  condition: Schema.optionalWith(GrantCondition, { exact: true })
}) {}

/**
 * What granted a decision, where the caller may not list it (a binding, a mapping or a custom role it may not see):
 * it learns only that something it cannot see granted it (DECISIONS §16).
 */
export class UnseenGrant extends Schema.Class<UnseenGrant>("@arbor/core/AccessEvaluation/UnseenGrant")({
  description: Schema.Literal("granted by a binding you cannot see")
}) {
  static readonly instance = new UnseenGrant({ description: "granted by a binding you cannot see" })
}

/** Why an evaluation of a batch could not be made: an HTTP status and its message (AuthZEN §7.1.3). */
export class EvaluationError extends Schema.Class<EvaluationError>("@arbor/core/AccessEvaluation/EvaluationError")({
  status: Schema.Number,
  message: Schema.String
}) {}

/** A decision, with what granted it when asked to explain. */
export class Decision extends Schema.Class<Decision>("@arbor/core/AccessEvaluation/Decision")({
  decision: Schema.Boolean,
  /** In a batch, an evaluation that could not be made: its decision false, and why. */
  error: Schema.optional(EvaluationError),
  /**
   * With `explain`: the grants that hold the capability at the resource's group (none for a false decision), each
   * the caller may list in full, and one `UnseenGrant` for all those it may not.
   */
  grantedBy: Schema.optional(Schema.Array(Schema.Union(Grant, UnseenGrant))),
  /**
   * With `explain`: the conditional grants that would hold the capability there but whose conditions did not hold
   * for this request (each with its condition's outcome), as far as the caller may list them.
   */
  unmetConditions: Schema.optional(Schema.Array(Grant))
}) {}
