/**
 * The Access service: decisions for other services (DECISIONS §16; docs/api.md §14) and for embedders (`can`). A
 * decision is the one the API itself makes at that moment, from the current bindings (`Authorization`): a revoked
 * binding flips it at the next call. A caller may always ask about itself (as its token holds: narrowed, with its
 * sign-in's group mappings); asking about another identity needs `role_bindings.list` at the resource's group, so
 * whether an identity exists, or what it holds, is never shown to anyone who may not list bindings there.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Errors from "../engine/Errors.js"
import { trusted } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import * as Repository from "../engine/Repository.js"
import { Store } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as AccessEvaluation from "./AccessEvaluation.js"
import {
  atGroup,
  Authorization,
  type ConditionOutcome,
  type DecisionRequest,
  type Grant,
  type Grants,
  type Target
} from "./Authorization.js"
import { all, type Capability } from "./Capability.js"
import * as Condition from "./Condition.js"
import { DecisionVocabularies } from "./DecisionVocabularies.js"
import { type DecisionVocabulary, subjectRuleOf } from "./DecisionVocabulary.js"
import { askedOf } from "./internal/asked.js"
import { subjectOf } from "./internal/conditions.js"
import { maySeeGrant } from "./internal/embedding.js"
import { resourceKinds } from "./internal/resourceKinds.js"
import * as Principal from "./Principal.js"
import * as RoleBinding from "./RoleBinding.js"

/** A search's page token: the last key (uid, or a vocabulary's name) of the page before, opaque to the client. */
const tokenOf = (key: string) => Buffer.from(key).toString("base64url")
const afterToken = (token: string | undefined): string | undefined =>
  token === undefined || token === "" ? undefined : Buffer.from(token, "base64url").toString()

const nothingFound: AccessEvaluation.SearchResults = { results: [], nextToken: undefined }

/** Where both ranges reach (undefined: everywhere). */
const intersect = (a: ReadonlyArray<Uid.Range> | undefined, b: ReadonlyArray<Uid.Range> | undefined) =>
  a === undefined ? b : b === undefined ? a : Uid.intersectRanges(a, b)

/** What a batch answers: one decision per evaluation run (fewer when a semantic stopped it early). */
export interface Decisions {
  readonly evaluations: ReadonlyArray<AccessEvaluation.Decision>
}

const explained = (grant: Grant, outcome?: Condition.Outcome) =>
  new AccessEvaluation.Grant({
    group: grant.group,
    role: grant.source?.role ?? grant.group,
    ...(grant.source?.binding === undefined ? {} : { binding: grant.source.binding }),
    ...(grant.source?.mapping === undefined ? {} : { mapping: grant.source.mapping }),
    ...(grant.source?.expireTime === undefined ? {} : { expireTime: DateTime.unsafeMake(grant.source.expireTime) }),
    ...(grant.condition === undefined || outcome === undefined ? {} : {
      condition: {
        expression: grant.condition.written.expression,
        title: grant.condition.written.title,
        held: outcome.held,
        ...(outcome.held || outcome.error === undefined ? {} : { error: outcome.error })
      }
    })
  }, trusted)

/** What an embedder tells `can` of the resource and the request, for conditions to read (DECISIONS §21). */
export interface CanRequest {
  /** The resource decided on: its uid (the group's, by default), kind (`group` by default) and properties. */
  readonly resource?: {
    readonly uid?: string
    readonly kind?: string
    readonly properties?: { readonly [key: string]: unknown }
  }
  readonly context?: { readonly [key: string]: unknown }
}

/** The value of `item`'s `key`, else the batch's default. */
const merged = (defaults: Record<string, unknown>, item: Record<string, unknown>) => ({
  subject: item.subject ?? defaults.subject,
  action: item.action ?? defaults.action,
  resource: item.resource ?? defaults.resource,
  context: item.context ?? defaults.context
})

/** The two decisions without an explanation, made once. */
const permitted = new AccessEvaluation.Decision({ decision: true })
const denied = new AccessEvaluation.Decision({ decision: false })

/** Builds the Access service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const authorization = yield* Authorization
  const vocabularies = yield* DecisionVocabularies
  const store = yield* Store
  const bindings = yield* Repository.make(RoleBinding.table, RoleBinding.Record)

  /**
   * The principal whose grants decide for `subject`: the caller itself, as its token holds, when it asks about
   * itself; another identity only for a caller holding `role_bindings.list` at `group`.
   */
  const decidingFor = (caller: Principal.Principal, subject: Uid.Uid, group: Uid.Uid) =>
    caller._tag === "Identity" && caller.uid === subject
      ? Effect.succeed(caller)
      : Effect.as(
        authorization.check(caller, RoleBinding.permissions.list, atGroup(group)),
        Principal.identity(subject)
      )

  /**
   * What granted `capability` at `group` to the holder of `grants` (with the conditional grants that held), as
   * `caller` may see it: the grants it may list in full, and one `UnseenGrant` for all the others; and the
   * conditional grants whose conditions did not hold, those it may list.
   */
  const explanation = (
    caller: Principal.Principal,
    grants: Grants,
    capability: Capability,
    group: Uid.Uid,
    conditions: ReadonlyArray<ConditionOutcome>
  ) =>
    Effect.map(authorization.grants(caller), (readers) => {
      const giving: ReadonlyArray<readonly [Grant, Condition.Outcome | undefined]> = [
        ...grants.giving(capability, group).map((grant) => [grant, undefined] as const),
        ...conditions.filter((c) => c.outcome.held).map((c) => [c.grant, c.outcome] as const)
      ]
      const seen = giving.filter(([grant]) => maySeeGrant(readers, grant))
      const unmet = conditions.filter((c) => !c.outcome.held && maySeeGrant(readers, c.grant))
      return {
        grantedBy: [
          ...seen.map(([grant, outcome]) => explained(grant, outcome)),
          ...(seen.length < giving.length ? [AccessEvaluation.UnseenGrant.instance] : [])
        ],
        ...(unmet.length === 0 ? {} : { unmetConditions: unmet.map((c) => explained(c.grant, c.outcome)) })
      }
    })

  /**
   * `found` (in key order, one past the page when there is more) as a page of at most `limit`. The last page of
   * several (`continued`: asked with a token) says so with an empty `nextToken` (AuthZEN §8.2.2).
   */
  const paged = (
    type: string,
    found: ReadonlyArray<string>,
    limit: number,
    continued: boolean
  ): AccessEvaluation.SearchResults => {
    const page = found.slice(0, limit)
    return {
      results: page.map((id) => ({ type, id })),
      nextToken: found.length > limit ? tokenOf(page.at(-1)!) : continued ? "" : undefined
    }
  }

  /**
   * A decision on `evaluation` (in Arbor's terms); `asked` is the request as it came, in the vocabulary's words,
   * whose subject, resource and context the conditions read.
   */
  const decide = (
    caller: Principal.Principal,
    evaluation: AccessEvaluation.Evaluation,
    asked: unknown,
    budget: Condition.Budget
  ) => {
    const group = AccessEvaluation.groupOf(evaluation.resource.type, evaluation.resource.id)
    const capability = evaluation.action.name
    return Effect.flatMap(
      decidingFor(caller, evaluation.subject.id, group),
      (principal) =>
        evaluation.context?.explain === true
          ? Effect.flatMap(
            authorization.grants(principal),
            (grants) => withReasons(caller, grants, capability, group, askedOf(asked, evaluation, budget))
          )
          // Decided as `Access.can` decides: the request read only when a condition is to be.
          : Effect.map(
            authorization.decides(principal, capability, group, () => askedOf(asked, evaluation, budget)),
            (decision) => decision ? permitted : denied
          )
    )
  }

  /** A decision that says which bindings decided it (`explain`), conditions with how they came out. */
  const withReasons = (
    caller: Principal.Principal,
    grants: Grants,
    capability: Capability,
    group: Uid.Uid,
    asked: DecisionRequest
  ) =>
    Effect.gen(function*() {
      const conditions = yield* authorization.conditionsOf(grants, capability, group, asked)
      return new AccessEvaluation.Decision({
        decision: grants.holds(capability, group) || conditions.some((c) => c.outcome.held),
        ...(yield* explanation(caller, grants, capability, group, conditions))
        // Built from values the engine made: a check at construction would cost a third of an evaluation.
      }, trusted)
    })

  const decodeEvaluation = (input: unknown, prefix = "") =>
    Validation.decode(AccessEvaluation.Evaluation, prefix)(input)

  /**
   * `input` in Arbor's terms by `vocabulary` (an organization's decision point's) when there is one: its `keys` read
   * in the vocabulary's words, the rest as it was; or `"unknown"`. A search names the keys other than the entity it
   * searches for, which has a type and no id.
   */
  const interpreted = (
    input: unknown,
    vocabulary: DecisionVocabulary | undefined,
    keys: ReadonlyArray<"subject" | "action" | "resource"> = ["subject", "action", "resource"]
  ) => {
    if (vocabulary === undefined || typeof input !== "object" || input === null || Array.isArray(input)) {
      return Effect.succeed(input)
    }
    const request = input as Record<string, unknown>
    return Effect.map(
      vocabularies.interpret(vocabulary)(
        Object.fromEntries(keys.filter((key) => key in request).map((key) => [key, request[key]]))
      ),
      (parts) => parts === "unknown" ? parts : { ...request, ...parts }
    )
  }

  /**
   * One evaluation of `input`, by `vocabulary` when there is one: a subject or folder it cannot find is false. Its
   * conditions spend from `budget`, the request's.
   */
  const evaluation = (
    caller: Principal.Principal,
    input: unknown,
    vocabulary: DecisionVocabulary | undefined,
    budget: Condition.Budget
  ) =>
    Effect.flatMap(interpreted(input, vocabulary), (request) =>
      request === "unknown"
        ? Effect.succeed(new AccessEvaluation.Decision({ decision: false }))
        : Effect.flatMap(decodeEvaluation(request), (valid) => decide(caller, valid, input, budget)))

  /** A batch's item that could not be evaluated: false, with the status and message of why. */
  const refused = (status: number, message: string) =>
    new AccessEvaluation.Decision({
      decision: false,
      error: new AccessEvaluation.EvaluationError({ status, message })
    })

  const service: AccessService = {
    can: (
      principal: Principal.Principal,
      capability: Capability,
      uid: Uid.Uid,
      request?: CanRequest
    ): Effect.Effect<boolean, Errors.StoreFailure> =>
      authorization.decides(principal, capability, uid, () => ({
        resource: {
          uid: request?.resource?.uid ?? uid,
          kind: request?.resource?.kind ?? "group",
          properties: request?.resource?.properties ?? {}
        },
        subject: subjectOf(principal),
        context: request?.context ?? {}
      })),

    evaluate: (
      caller: Principal.Principal,
      input: unknown,
      vocabulary?: DecisionVocabulary
    ) => operation("Access.evaluate")(Effect.suspend(() => evaluation(caller, input, vocabulary, Condition.budget()))),

    evaluateMany: (
      caller: Principal.Principal,
      input: unknown,
      vocabulary?: DecisionVocabulary
    ) =>
      operation("Access.evaluateMany")(Effect.gen(function*() {
        const batch = yield* Validation.decode(AccessEvaluation.Evaluations)(input)
        const defaults = {
          subject: batch.subject,
          action: batch.action,
          resource: batch.resource,
          context: batch.context
        }
        // Every evaluation of the batch spends from one budget (DECISIONS §21).
        const budget = Condition.budget()
        if (batch.evaluations === undefined || batch.evaluations.length === 0) {
          return yield* evaluation(caller, merged(defaults, {}), vocabulary, budget)
        }
        // An item that cannot be evaluated is its own false decision, saying why (AuthZEN §7.1.3), named as the
        // request wrote it: a field of the item below `evaluations[i]`, one of the batch's defaults at the top.
        const evaluations = batch.evaluations.map((item, i) =>
          evaluation(caller, merged(defaults, item), vocabulary, budget).pipe(
            Effect.mapError((e) => {
              if (e._tag !== "InvalidArgument") return e
              const own = Object.keys(item).find((key) => e.violations[0].field.split(/[.[]/)[0] === key)
              return own === undefined ? e : e.within(`evaluations[${i}]`)
            })
          )
        )
        const semantic = batch.options?.evaluations_semantic ?? "execute_all"
        const stopAt = semantic === "deny_on_first_deny"
          ? false
          : semantic === "permit_on_first_permit"
          ? true
          : undefined
        const decisions: Array<AccessEvaluation.Decision> = []
        for (const evaluation of evaluations) {
          const decided = yield* evaluation.pipe(
            Effect.catchTags({
              InvalidArgument: (e) => Effect.succeed(refused(400, e.message)),
              PermissionDenied: (e) => Effect.succeed(refused(403, e.message))
            })
          )
          decisions.push(decided)
          if (decided.decision === stopAt) break
        }
        return { evaluations: decisions } satisfies Decisions
      })),

    searchSubjects: (
      caller: Principal.Principal,
      input: unknown,
      vocabulary?: DecisionVocabulary
    ) =>
      operation("Access.searchSubjects")(Effect.gen(function*() {
        const request = yield* interpreted(input, vocabulary, ["action", "resource"])
        if (request === "unknown") return nothingFound
        const search = yield* Validation.decode(AccessEvaluation.SubjectSearch)(request)
        const resource = AccessEvaluation.knownResource(search.resource)
        const action = AccessEvaluation.knownAction(search.action)
        if (resource === undefined || action === undefined) return nothingFound
        const group = AccessEvaluation.groupOf(resource.type, resource.id)
        // Who may act here is what the bindings here show: asked only by who may list them.
        yield* authorization.check(caller, RoleBinding.permissions.list, atGroup(group))
        // Identities are found as a type names them: by uid (`identity`, unless the vocabulary says otherwise), or
        // by their path below the organization; a type by a token's subject finds none.
        const rule = subjectRuleOf(vocabulary, search.subject.type)
        if (rule === undefined || rule.by === "subject") return nothingFound
        const limit = search.page?.limit ?? AccessEvaluation.defaultSearchResults
        const after = afterToken(search.page?.token)
        const bound = yield* bindings.find({
          conditions: [{ _tag: "In", column: "parent", values: [...Uid.ancestors(group), group] }],
          order: [{ column: "uid", direction: "asc" }]
        })
        // Each candidate decided as an evaluation is, so every rule of who may still act applies.
        const candidates = [...new Set(bound.map((b) => b.identityUid))].sort()
          .filter((uid) => after === undefined || uid > after)
          .filter((uid) => rule.by === "uid" || vocabulary === undefined || Uid.isAncestor(vocabulary.uid, uid))
        // A candidate's conditions see it as the request would name it: by its path, in a vocabulary that does.
        const byPath = rule.by !== "uid" && vocabulary !== undefined
        const named = byPath ? yield* vocabularies.pathsOf(vocabulary, candidates) : candidates
        const budget = Condition.budget()
        const found: Array<Uid.Uid> = []
        const ids = new Map<Uid.Uid, string>()
        for (const [i, uid] of candidates.entries()) {
          if (found.length > limit) break
          const subject = { type: search.subject.type, id: named[i]!, properties: search.subject.properties }
          const decided = yield* authorization.decides(
            Principal.identity(uid),
            action.name,
            group,
            () => askedOf(input, { ...search, subject, resource, action }, budget)
          )
          if (decided) {
            found.push(uid)
            ids.set(uid, named[i]!)
          }
        }
        const page = paged(search.subject.type, found, limit, after !== undefined)
        return byPath ? { ...page, results: page.results.map((r) => ({ ...r, id: ids.get(r.id as Uid.Uid)! })) } : page
      })),

    searchResources: (
      caller: Principal.Principal,
      input: unknown,
      vocabulary?: DecisionVocabulary
    ): Effect.Effect<AccessEvaluation.SearchResults, Errors.InvalidArgument | Errors.StoreFailure> =>
      operation("Access.searchResources")(Effect.gen(function*() {
        const request = yield* interpreted(input, vocabulary, ["subject", "action"])
        if (request === "unknown") return nothingFound
        const search = yield* Validation.decode(AccessEvaluation.ResourceSearch)(request)
        const type = search.resource.type
        const known = AccessEvaluation.knownSubject(search.subject)
        const action = AccessEvaluation.knownAction(search.action)
        if (known === undefined || action === undefined) return nothingFound
        const self = caller._tag === "Identity" && caller.uid === known.id
        const subject = self ? caller : Principal.identity(known.id)
        const limit = search.page?.limit ?? AccessEvaluation.defaultSearchResults
        const after = afterToken(search.page?.token)
        // Each candidate decided as an evaluation of it would be: the request's properties and context with it.
        const budget = Condition.budget()
        const about = (id: string) => () => askedOf(input, { ...search, resource: { ...search.resource, id } }, budget)
        // A vocabulary's resources with folders of their own are those folders where the subject may take the action
        // and the caller may list bindings (another's), by name.
        const folders = vocabulary === undefined ? undefined : yield* vocabularies.foldersOf(vocabulary, type)
        if (folders !== undefined) {
          const mine = self ? undefined : yield* authorization.grants(caller)
          const names = (yield* Effect.filter(
            folders.filter((f) => mine === undefined || mine.holds(RoleBinding.permissions.list, f.uid)),
            (f) => authorization.decides(subject, action.name, f.uid, about(f.name))
          )).map((f) => f.name).sort()
          return paged(type, names.filter((name) => after === undefined || name > after), limit, after !== undefined)
        }
        // A vocabulary's resource type is searched as the kind it names; one decided at one folder cannot be listed.
        const kind = vocabulary === undefined
          ? AccessEvaluation.isResourceType(type) ? type : undefined
          : vocabularies.kindOf(vocabulary, type)
        if (kind === undefined) return nothingFound
        const { list, table, visibleAt } = resourceKinds[kind]
        const target = (uid: Uid.Uid) => ({ group: AccessEvaluation.groupOf(kind, uid), uid, kind })
        const read = (range: Uid.Range, from: Uid.Uid | undefined, count: number) =>
          Effect.map(
            Repository.orInternal(store.find(table, {
              ranges: [range],
              order: [{ column: "uid", direction: "asc" }],
              ...(from === undefined ? {} : { after: [from] }),
              limit: count
            })),
            (rows) => rows.map((row) => row.uid as Uid.Uid)
          )
        /** Where `grants` give `capability` of that kind, conditions decided row by row (undefined: everywhere). */
        const where = (
          principal: Principal.Principal,
          grants: Grants,
          capability: Capability,
          within: ReadonlyArray<Uid.Range> | undefined,
          request?: (target: Target) => DecisionRequest
        ) =>
          Effect.gen(function*() {
            const scopes = grants.scopes(capability)
            if (scopes === "all") return within
            const covered = Uid.normalizeRanges(scopes.map(visibleAt === "self" ? Uid.subtree : Uid.descendants))
            const more = yield* authorization.visibleRows(principal, grants, capability, {
              visibleAt,
              target,
              covered,
              within,
              read,
              ...(request === undefined ? {} : { request })
            })
            return intersect(Uid.normalizeRanges([...covered, ...more]), within)
          })
        // What the caller may list of that kind (DECISIONS §21: a search answers a subset of it), and, about another
        // identity, where it may see who holds what.
        const mine = self ? subject : caller
        const myGrants = yield* authorization.grants(mine)
        const bindingsSeen = self ? "all" : myGrants.scopes(RoleBinding.permissions.list)
        const listable = yield* where(
          mine,
          myGrants,
          list,
          bindingsSeen === "all" ? undefined : Uid.normalizeRanges(bindingsSeen.map(Uid.subtree))
        )
        const ranges = yield* where(
          subject,
          yield* authorization.grants(subject),
          action.name,
          listable,
          (target) => about(target.uid)()
        )
        const rows = yield* Repository.orInternal(store.find(table, {
          ...(ranges === undefined ? {} : { ranges }),
          order: [{ column: "uid", direction: "asc" }],
          ...(after === undefined ? {} : { after: [after] }),
          limit: limit + 1
        }))
        return paged(type, rows.map((row) => row.uid), limit, after !== undefined)
      })),

    searchActions: (
      caller: Principal.Principal,
      input: unknown,
      vocabulary?: DecisionVocabulary
    ) =>
      operation("Access.searchActions")(Effect.gen(function*() {
        const request = yield* interpreted(input, vocabulary, ["subject", "resource"])
        if (request === "unknown") return []
        const search = yield* Validation.decode(AccessEvaluation.ActionSearch)(request)
        const subject = AccessEvaluation.knownSubject(search.subject)
        const resource = AccessEvaluation.knownResource(search.resource)
        if (subject === undefined || resource === undefined) return []
        const group = AccessEvaluation.groupOf(resource.type, resource.id)
        const grants = yield* authorization.grants(yield* decidingFor(caller, subject.id, group))
        const unconditional = grants.heldAt(group)
        // With the capabilities that conditional grants give here, where their conditions hold for this request.
        const asked = askedOf(input, search, Condition.budget())
        const conditional = yield* Effect.filter(
          all.filter((c) => !unconditional.includes(c) && grants.conditionalGiving(c, group).length > 0),
          (capability) =>
            Effect.map(
              authorization.conditionsOf(grants, capability, group, asked),
              (outcomes) => outcomes.some((o) => o.outcome.held)
            )
        )
        const held = conditional.length === 0 ?
          unconditional :
          all.filter((c) => unconditional.includes(c) || conditional.includes(c))
        return vocabulary === undefined ? held : vocabularies.actionsOf(vocabulary, held)
      }))
  }
  return service
})

/**
 * The Access service: decisions for other services (AuthZEN's evaluation and search APIs) and the engine's own
 * check, made from the same grants every operation reads.
 */
export interface AccessService {
  /**
   * True when `principal` holds `capability` at group `uid` (or, for a resource's uid, at the group it lives in:
   * pass `AccessEvaluation.groupOf(type, uid)`), from its current bindings: the check every operation makes.
   */
  readonly can: (
    principal: Principal.Principal,
    capability: Capability,
    uid: Uid.Uid,
    request?: CanRequest
  ) => Effect.Effect<boolean, Errors.StoreFailure>
  /**
   * One evaluation (AuthZEN's `/access/v1/evaluation`); a false decision is an answer, never a failure. With an
   * organization's `vocabulary` (its decision point's), the request is read in its words first (docs/api.md §14);
   * so for every method below.
   */
  readonly evaluate: (
    caller: Principal.Principal,
    input: unknown,
    vocabulary?: DecisionVocabulary
  ) => Effect.Effect<AccessEvaluation.Decision, Errors.ListFailure | Errors.PermissionDenied>
  /**
   * A batch (AuthZEN's `/access/v1/evaluations`): each item's subject, action, resource and context, or the
   * batch's. An item that cannot be evaluated (a field refused, a subject the caller may not ask about) is a false
   * decision with its `error` (status 400 or 403 and why), the others decided as usual. `execute_all` (the default)
   * decides each; `deny_on_first_deny` and `permit_on_first_permit` stop after the first false or true decision.
   * Without items it is one evaluation.
   */
  readonly evaluateMany: (
    caller: Principal.Principal,
    input: unknown,
    vocabulary?: DecisionVocabulary
  ) => Effect.Effect<AccessEvaluation.Decision | Decisions, Errors.ListFailure | Errors.PermissionDenied>
  /**
   * The identities that may take the action on the resource (AuthZEN's `/access/v1/search/subject`), in uid
   * order, each decided as an evaluation is; asking needs `role_bindings.list` at the resource's group.
   */
  readonly searchSubjects: (
    caller: Principal.Principal,
    input: unknown,
    vocabulary?: DecisionVocabulary
  ) => Effect.Effect<AccessEvaluation.SearchResults, Errors.ListFailure | Errors.PermissionDenied>
  /**
   * The resources of a type the subject may take the action on (AuthZEN's `/access/v1/search/resource`), in uid
   * order: those in the groups where it holds the capability and, for another identity than the caller, where the
   * caller holds `role_bindings.list`. An unknown subject or resource type, or a subject id that is no uid, finds
   * nothing.
   */
  readonly searchResources: (
    caller: Principal.Principal,
    input: unknown,
    vocabulary?: DecisionVocabulary
  ) => Effect.Effect<AccessEvaluation.SearchResults, Errors.ListFailure>
  /**
   * The actions the subject may take on the resource (AuthZEN's `/access/v1/search/action`): the capabilities it
   * holds there, in the canonical order; with a vocabulary that names actions, its names of them instead.
   */
  readonly searchActions: (
    caller: Principal.Principal,
    input: unknown,
    vocabulary?: DecisionVocabulary
  ) => Effect.Effect<ReadonlyArray<string>, Errors.ListFailure | Errors.PermissionDenied>
}

/** Decisions. */
export class Access extends Effect.Service<Access>()("@arbor/core/Access", { effect: make }) {}
