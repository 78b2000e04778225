/**
 * An organization's decision vocabulary (docs/api.md §14): the words of an application's AuthZEN requests in Arbor's
 * terms, so that a policy enforcement point written for that application asks the organization's own decision point
 * (`/authzen/<organization uid>`) verbatim. Subject types say how an id finds an identity, action names the
 * capability they mean, resource types where a decision about one of them is made. Arbor's own action and resource
 * words (capability names, resource kinds) keep their meaning beside them; `identity` finds identities by uid unless
 * the vocabulary says otherwise (the API gateway scenario's enforcement points name their people `identity`). It
 * grants nothing: every decision is still the bindings' (§7).
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as AccessEvaluation from "./AccessEvaluation.js"
import * as Capability from "./Capability.js"

/**
 * How a subject type's ids find an identity: its uid; its path below the organization (`team/deployer`, or a name at
 * the organization itself); or the subject (`sub`) of a token of `issuer`, the identity that token assumes (a
 * person who signs in there, or an identity whose claim match is that issuer and subject exactly).
 */
export const SubjectRule = Schema.Union(
  Schema.Struct({ by: Schema.Literal("uid") }),
  Schema.Struct({ by: Schema.Literal("path") }),
  Schema.Struct({
    by: Schema.Literal("subject"),
    issuer: Schema.String.pipe(
      Schema.filter((s) => /^https?:\/\/\S+$/.test(s) || "must be the issuer's URL, as its tokens' iss says it")
    )
  })
)
export type SubjectRule = typeof SubjectRule.Type

/**
 * Where a decision about a resource type is made: for an application's own resources, each at the folder of its id's
 * name below a folder (`folders`: its path; a resource without a folder of its own is decided there), or all of them,
 * whatever their ids, at one folder (`folder`: its path; the organization itself when absent); or the resources of
 * one of Arbor's kinds, by uid.
 */
export const ResourceRule = Schema.Union(
  Schema.Struct({ folders: Schema.String }),
  Schema.Struct({ folder: Schema.optional(Schema.String) }),
  Schema.Struct({
    kind: Schema.Literal(...AccessEvaluation.resourceTypes).annotations({
      message: () => `must be one of ${AccessEvaluation.resourceTypes.join(", ")}`
    })
  })
)
export type ResourceRule = typeof ResourceRule.Type

/** A name of the vocabulary: an AuthZEN type or action name, 1 to 128 characters, none of Arbor's own words. */
const Word = (own: ReadonlyArray<string>, what: string) =>
  Schema.String.pipe(
    Schema.filter((s) =>
      s.length < 1 || s.length > 128
        ? "must be 1 to 128 characters"
        : own.includes(s)
        ? `is Arbor's own ${what}: it keeps its meaning`
        : true
    )
  )

/** At most this many words of each kind. */
export const maxWords = 200

/** A vocabulary's names of one kind, at most `maxWords`. */
const words = <K extends Schema.Schema<string, string>, V extends Schema.Schema.Any>(key: K, value: V) =>
  Schema.Record({ key, value }).pipe(
    Schema.filter((r) => Object.keys(r).length <= maxWords || `may hold at most ${maxWords} names`)
  )

const fields = {
  subjects: words(Word([], "subject type"), SubjectRule),
  actions: words(
    Word([...Capability.all, ...Capability.all.map(Capability.toEnumName)], "capability name"),
    Capability.Capability
  ),
  resources: words(Word(AccessEvaluation.resourceTypes, "resource kind"), ResourceRule)
}

/** The vocabulary as it is written: subject types, action names (each a capability), resource types; each optional. */
export const Vocabulary = Schema.Struct({
  subjects: Schema.optionalWith(fields.subjects, { default: () => ({}) }),
  actions: Schema.optionalWith(fields.actions, { default: () => ({}) }),
  resources: Schema.optionalWith(fields.resources, { default: () => ({}) })
})
export type Vocabulary = typeof Vocabulary.Type

/** The vocabulary's meaning of `name` among `words`: its own entries only (`constructor` is no word of it). */
export const named = <A>(words: Readonly<Record<string, A>>, name: string): A | undefined =>
  Object.hasOwn(words, name) ? words[name] : undefined

/** The rule of subject type `type` in `vocabulary`: its own, or for `identity` by uid; none for another type. */
export const subjectRuleOf = (
  vocabulary: Pick<Vocabulary, "subjects"> | undefined,
  type: string
): SubjectRule | undefined =>
  named(vocabulary?.subjects ?? {}, type) ?? (type === "identity" ? { by: "uid" } : undefined)

/** What a replacement takes: the vocabulary, and the version it replaces (`etag`, optional). */
export const SetVocabulary = Schema.Struct({
  ...Vocabulary.fields,
  etag: Schema.optional(Schema.String)
})

/** An organization's vocabulary as stored: its uid the organization's. */
export class DecisionVocabulary extends Schema.Class<DecisionVocabulary>("@arbor/core/DecisionVocabulary")({
  uid: Uid,
  ...fields,
  /** Counts its changes: the etag a replacement may name. */
  version: Schema.Int,
  updateTime: Timestamp
}) {}

/**
 * The capability each operation needs at the organization: reading is for who may list its folders; changing what
 * its decision point's words mean is for who may change the organization.
 */
export const permissions = {
  list: "groups.list",
  update: "groups.update"
} as const satisfies Capability.Operations

/** How vocabularies are stored: one per organization, by its uid. */
export const table: Table = {
  name: "decision_vocabularies",
  events: ChangeLog.logged("decision_vocabulary", "dev.chainguard.api.iam.decision_vocabularies"),
  columns: {
    subjects: { type: "json" },
    actions: { type: "json" },
    resources: { type: "json" },
    version: { type: "integer" },
    updateTime: { type: "integer" }
  },
  roots: true,
  unique: [],
  indexes: []
}
