/**
 * The DecisionVocabularies service (docs/api.md §14): each organization's decision vocabulary, read and replaced as a
 * whole, and the one function that reads an AuthZEN request's words in Arbor's terms (`interpret`), which every
 * evaluation and search at the organization's decision point goes through.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Errors from "../engine/Errors.js"
import { commit, conflict, operations, orNotFound, trusted } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as Person from "../tokens/internal/signIn/person.js"
import * as AccessEvaluation from "./AccessEvaluation.js"
import { atGroup } from "./Authorization.js"
import * as Capability from "./Capability.js"
import * as DecisionVocabulary from "./DecisionVocabulary.js"
import * as Group from "./Group.js"
import * as Identity from "./Identity.js"
import type * as Principal from "./Principal.js"

/** An entity of a request as the vocabulary reads it: in Arbor's terms, or `unknown` (no such subject or folder). */
export type Interpreted<A> = A | "unknown"

/** Builds the DecisionVocabularies service from the services in its context. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const vocabularies = yield* Repository.make(DecisionVocabulary.table, DecisionVocabulary.DecisionVocabulary)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  const authorization = ops.authorization

  /** The organization `uid`, or InvalidArgument: a vocabulary belongs to an organization, not a folder below one. */
  const organization = (uid: string, field: string) =>
    Effect.gen(function*() {
      const parsed = yield* Uid.parse(uid, field)
      if (Uid.parentOrNull(parsed) !== null) return yield* Errors.InvalidArgument.field(field, "is not an organization")
      return parsed
    })

  /** The organization's vocabulary as stored, or an empty one (version 0). */
  const stored = (org: Uid.Uid) =>
    Effect.map(
      vocabularies.get(org),
      (found) =>
        Option.getOrElse(found, () =>
          new DecisionVocabulary.DecisionVocabulary({
            uid: org,
            subjects: {},
            actions: {},
            resources: {},
            version: 0,
            updateTime: DateTime.unsafeMake(0)
          }, trusted))
    )

  /** The folder at `path` below `org` (the organization itself for an empty path), if there is one. */
  const folderAt = (org: Uid.Uid, path: string) =>
    Effect.gen(function*() {
      let at: Uid.Uid = org
      for (const name of path.split("/").filter((part) => part !== "")) {
        const found = yield* childNamed(at, name)
        if (found === undefined) return undefined
        at = found
      }
      return at
    })

  /** The folder named `name` right below `parent`, if there is one. */
  const childNamed = (parent: Uid.Uid, name: string) =>
    Effect.map(
      groups.find({
        conditions: [{ _tag: "Equals", column: "parent", value: parent }, {
          _tag: "Equals",
          column: "name",
          value: name
        }],
        order: [{ column: "uid", direction: "asc" }],
        limit: 1
      }),
      ([found]) => found?.uid
    )

  /** The identity a subject rule finds for `id` in `org`, if any. */
  const subjectOf = (org: Uid.Uid, rule: DecisionVocabulary.SubjectRule, id: string) =>
    Effect.gen(function*() {
      switch (rule.by) {
        case "uid":
          return Uid.isUid(id) ? id : undefined
        case "path": {
          const at = id.lastIndexOf("/")
          const folder = yield* folderAt(org, at < 0 ? "" : id.slice(0, at))
          if (folder === undefined) return undefined
          const [found] = yield* identities.find({
            conditions: [
              { _tag: "Equals", column: "parent", value: folder },
              { _tag: "Equals", column: "name", value: id.slice(at + 1) }
            ],
            order: [{ column: "uid", direction: "asc" }],
            limit: 1
          })
          return found?.uid
        }
        case "subject":
          return (yield* Person.find(ops.store, rule.issuer, id)) ?? Person.uidFor(rule.issuer, id)
      }
    })

  const record = (value: unknown) =>
    (typeof value === "object" && value !== null ? value : {}) as {
      readonly type?: unknown
      readonly id?: unknown
      readonly name?: unknown
    }

  const service: DecisionVocabulariesService = {
    get: (principal: Principal.Principal, org: string) =>
      operation("DecisionVocabularies.get")(Effect.gen(function*() {
        const uid = yield* organization(org, "organization")
        yield* authorization.check(principal, DecisionVocabulary.permissions.list, atGroup(uid))
        return yield* stored(uid)
      })),

    set: (principal: Principal.Principal, org: string, input: unknown) =>
      operation("DecisionVocabularies.set")(Effect.gen(function*() {
        const uid = yield* organization(org, "organization")
        yield* authorization.check(principal, DecisionVocabulary.permissions.update, atGroup(uid))
        const { etag, ...vocabulary } = yield* Validation.decode(DecisionVocabulary.SetVocabulary)(input)
        return yield* commit(
          ops,
          principal,
          Effect.gen(function*() {
            const current = yield* stored(uid)
            if (etag !== undefined && etag !== String(current.version)) {
              return yield* new Errors.Aborted({
                description: `the vocabulary changed since version ${etag}: it is at ${current.version}; read it again`,
                reason: "ETAG_MISMATCH"
              })
            }
            const next = new DecisionVocabulary.DecisionVocabulary({
              uid,
              ...vocabulary,
              version: current.version + 1,
              updateTime: yield* DateTime.now
            }, trusted)
            // Two first vocabularies at once: the second is ABORTED, to be retried (it then names the version).
            const raced = conflict("DecisionVocabulary", "the vocabulary was set meanwhile")
            if (current.version === 0) yield* vocabularies.insert(next).pipe(raced)
            else yield* vocabularies.update(next).pipe(raced)
            return next
          })
        )
      })),

    interpret: (vocabulary: DecisionVocabulary.DecisionVocabulary) => (request: Record<string, unknown>) =>
      Effect.gen(function*() {
        const org = vocabulary.uid
        let unknown = false
        const subject = record(request.subject)
        const subjectRule = typeof subject.type === "string"
          ? DecisionVocabulary.named(vocabulary.subjects, subject.type)
          : undefined
        const action = record(request.action)
        const capability = typeof action.name === "string" && !Capability.isCapabilityName(action.name)
          ? DecisionVocabulary.named(vocabulary.actions, action.name)
          : undefined
        const resource = record(request.resource)
        const resourceRule = typeof resource.type === "string"
          ? DecisionVocabulary.named(vocabulary.resources, resource.type)
          : undefined
        const interpreted: Record<string, unknown> = { ...request }
        // An id that is not a string is left out, for the decoder to refuse naming it.
        const { id: subjectId, ...subjectRest } = subject
        if (subjectRule !== undefined && typeof subjectId !== "string") {
          interpreted.subject = { ...subjectRest, type: "identity" }
        } else if (subjectRule !== undefined && typeof subjectId === "string") {
          const found = yield* subjectOf(org, subjectRule, subjectId)
          if (found === undefined) unknown = true
          interpreted.subject = { ...subject, type: "identity", id: found ?? org }
        }
        if (capability !== undefined) interpreted.action = { ...action, name: capability }
        if (resourceRule !== undefined && !("kind" in resourceRule) && typeof resource.id !== "string") {
          const { id: _, ...rest } = resource
          interpreted.resource = { ...rest, type: "group" }
        } else if (resourceRule !== undefined) {
          if ("kind" in resourceRule) interpreted.resource = { ...resource, type: resourceRule.kind }
          else {
            const folder = yield* folderAt(
              org,
              "folders" in resourceRule ? resourceRule.folders : resourceRule.folder ?? ""
            )
            if (folder === undefined) unknown = true
            // A resource of its own folder is decided there, one without at the folder of them all.
            const own = folder !== undefined && "folders" in resourceRule && typeof resource.id === "string"
              ? yield* childNamed(folder, resource.id)
              : undefined
            interpreted.resource = { ...resource, type: "group", id: own ?? folder ?? org }
          }
        }
        return unknown ? "unknown" as const : interpreted
      }),

    of: (org: string) =>
      Effect.gen(function*() {
        const uid = yield* organization(org, "organization")
        const vocabulary = yield* stored(uid)
        // None stored: the organization must be there, else there is no decision point to answer for.
        if (vocabulary.version === 0) yield* orNotFound(groups.get(uid), "organization", uid)
        return vocabulary
      }),

    actionsOf: (vocabulary: DecisionVocabulary.DecisionVocabulary, held: ReadonlyArray<Capability.Capability>) => {
      const names = Object.entries(vocabulary.actions)
      return names.length === 0 ? [...held] : names.filter(([, c]) => held.includes(c)).map(([name]) => name)
    },

    foldersOf: (vocabulary: DecisionVocabulary.DecisionVocabulary, type: string) =>
      Effect.gen(function*() {
        const rule = DecisionVocabulary.named(vocabulary.resources, type)
        if (rule === undefined || !("folders" in rule)) return undefined
        const folder = yield* folderAt(vocabulary.uid, rule.folders)
        if (folder === undefined) return []
        return yield* groups.find({
          conditions: [{ _tag: "Equals", column: "parent", value: folder }],
          order: [{ column: "uid", direction: "asc" }]
        })
      }),

    pathsOf: (vocabulary: DecisionVocabulary.DecisionVocabulary, uids: ReadonlyArray<Uid.Uid>) =>
      Effect.gen(function*() {
        const below = (uid: Uid.Uid) => Uid.ancestors(uid).filter((a) => Uid.isAncestor(vocabulary.uid, a))
        const byUid = { order: [{ column: "uid", direction: "asc" as const }] }
        const folders = yield* groups.find({
          conditions: [{ _tag: "In", column: "uid", values: [...new Set(uids.flatMap(below))] }],
          ...byUid
        })
        const named = yield* identities.find({ conditions: [{ _tag: "In", column: "uid", values: uids }], ...byUid })
        const names = new Map<string, string>([...folders, ...named].map((entity) => [entity.uid, entity.name]))
        return uids.map((uid) => [...below(uid), uid].map((a) => names.get(a)).join("/"))
      }),

    kindOf: (vocabulary: DecisionVocabulary.DecisionVocabulary, type: string) => {
      const rule = DecisionVocabulary.named(vocabulary.resources, type)
      return rule === undefined
        ? AccessEvaluation.isResourceType(type) ? type : undefined
        : "kind" in rule
        ? rule.kind
        : undefined
    }
  }
  return service
})

/**
 * The DecisionVocabularies service: an organization's own words for its decision point's requests (subject types,
 * actions, resource types), and their reading into Arbor's terms.
 */
export interface DecisionVocabulariesService {
  /** The organization's vocabulary (empty, version 0, when it has none); for who may list its folders. */
  readonly get: (
    principal: Principal.Principal,
    org: string
  ) => Effect.Effect<DecisionVocabulary.DecisionVocabulary, Errors.ReadFailure>
  /**
   * Replaces the organization's vocabulary as a whole; with `etag`, only the version it names (else ABORTED
   * `ETAG_MISMATCH`). For who may update the organization.
   */
  readonly set: (
    principal: Principal.Principal,
    org: string,
    input: unknown
  ) => Effect.Effect<DecisionVocabulary.DecisionVocabulary, Errors.WriteFailure>
  /**
   * `request`'s subject, action and resource in Arbor's terms by `org`'s vocabulary, the rest as it was: Arbor's
   * own words as they are; a type or action the vocabulary does not know is left for the decoder to refuse, naming
   * the field; a subject or folder it knows the type of but cannot find is `"unknown"` (a false decision, an empty
   * search). `vocabulary` is the organization's, read once per request.
   */
  readonly interpret: (
    vocabulary: DecisionVocabulary.DecisionVocabulary
  ) => (request: Record<string, unknown>) => Effect.Effect<Interpreted<Record<string, unknown>>, Errors.StoreFailure>
  /**
   * The organization's vocabulary, for its decision point's requests (none needs a capability to be read so);
   * NotFound when there is no such organization.
   */
  readonly of: (
    org: string
  ) => Effect.Effect<DecisionVocabulary.DecisionVocabulary, Errors.ListFailure | Errors.NotFound>
  /** The vocabulary's names of the capabilities `held`, in its order; the capabilities themselves without any. */
  readonly actionsOf: (
    vocabulary: DecisionVocabulary.DecisionVocabulary,
    held: ReadonlyArray<Capability.Capability>
  ) => Array<string>
  /**
   * The resources of a vocabulary's type that has folders of its own (`folders`): each folder below its folder, by
   * name; undefined for another type.
   */
  readonly foldersOf: (
    vocabulary: DecisionVocabulary.DecisionVocabulary,
    type: string
  ) => Effect.Effect<ReadonlyArray<Group.Group> | undefined, Errors.StoreFailure>
  /**
   * The ids of the identities `uids` (below the vocabulary's organization) as a subject type by `path` names them:
   * each one's path below the organization (`team/deployer`), in their order.
   */
  readonly pathsOf: (
    vocabulary: DecisionVocabulary.DecisionVocabulary,
    uids: ReadonlyArray<Uid.Uid>
  ) => Effect.Effect<Array<string>, Errors.StoreFailure>
  /** The resource kind a vocabulary's resource type names (or Arbor's own kind), if its resources can be listed. */
  readonly kindOf: (
    vocabulary: DecisionVocabulary.DecisionVocabulary,
    type: string
  ) => AccessEvaluation.ResourceType | undefined
}

/** Decision vocabularies. */
export class DecisionVocabularies
  extends Effect.Service<DecisionVocabularies>()("@arbor/core/DecisionVocabularies", { effect: make })
{}
