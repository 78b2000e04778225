/**
 * The Terms service: a group accepts legal documents by their ids, and lists the documents accepted by it and the
 * groups above it (docs/api.md §13). Accepting a document the group has accepted changes nothing.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Errors from "../engine/Errors.js"
import { commit, operations, orNotFound, trusted } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import { isUniqueViolation } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as ChangeLog from "../events/ChangeLog.js"
import { atGroup } from "./Authorization.js"
import * as Group from "./Group.js"
import * as Principal from "./Principal.js"
import * as TermsAcceptance from "./TermsAcceptance.js"

/** What `accept` answers: the group, and the documents it has now accepted. */
export interface Accepted {
  readonly group: Uid.Uid
  readonly documentIds: ReadonlyArray<string>
}

/** Builds the Terms service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const acceptances = yield* Repository.make(TermsAcceptance.table, TermsAcceptance.TermsAcceptance)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const spec: Lists.ListSpec<TermsAcceptance.TermsAcceptance> = {
    load: Lists.asIs,
    repository: acceptances,
    capability: TermsAcceptance.permissions.list,
    visibleAt: "parent",
    defaultOrder: "createTime"
  }

  const service: TermsService = {
    accept: Effect.fnUntraced(function*(principal: Principal.Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "group")
      yield* ops.authorization.check(principal, TermsAcceptance.permissions.accept, atGroup(group))
      const { documentIds } = yield* Validation.decodeRequest(TermsAcceptance.AcceptTerms)(input)
      const ids = [...new Set(documentIds)]
      yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(group), "group", group)
          const accepted = yield* acceptances.find({
            order: [{ column: "uid", direction: "asc" }],
            conditions: [{ _tag: "Equals", column: "parent", value: group }, {
              _tag: "In",
              column: "docId",
              values: ids
            }]
          })
          const known = new Set(accepted.map((a) => a.docId))
          const now = yield* DateTime.now
          const acceptedBy = ChangeLog.actorOf(principal).subject
          for (const docId of ids.filter((id) => !known.has(id))) {
            yield* acceptances.insert(
              new TermsAcceptance.TermsAcceptance(
                { uid: Uid.makeChild(group), docId, acceptedBy, orgUid: group, createTime: now },
                trusted
              )
            ).pipe(
              // Accepted meanwhile by another request: accepted all the same.
              Effect.catchIf(isUniqueViolation, () => Effect.void)
            )
          }
        })
      )
      return { group, documentIds: ids } satisfies Accepted
    }, operation("Terms.accept")),

    list: Effect.fnUntraced(function*(
      principal: Principal.Principal,
      groupUid: string,
      options: Lists.ListOptions = {}
    ) {
      const group = yield* Uid.parse(groupUid, "group")
      yield* ops.authorization.check(principal, TermsAcceptance.permissions.list, atGroup(group))
      const above = [group, ...Uid.ancestors(group)]
      // Holding terms.list at the group shows what it inherits, so the list runs unfiltered by visibility.
      return yield* Lists.list(ops, spec, Principal.system, options, {
        conditions: [{ _tag: "In", column: "parent", values: above }],
        violations: [],
        digest: [group]
      })
    }, operation("Terms.list"))
  }
  return service
})

/** The Terms service: the terms documents an organization's groups accept (`AcceptTerms`, `ListTermsAcceptances`). */
export interface TermsService {
  /** Records that `groupUid` accepts the documents `input.documentIds` names (`terms.accept` there). */
  readonly accept: (
    principal: Principal.Principal,
    groupUid: string,
    input: unknown
  ) => Effect.Effect<Accepted, Errors.WriteFailure>
  /**
   * The acceptances of `groupUid` and of the groups above it (`terms.list` at `groupUid`), oldest first unless
   * `order_by` says otherwise.
   */
  readonly list: (
    principal: Principal.Principal,
    groupUid: string,
    options?: Lists.ListOptions
  ) => Effect.Effect<Lists.Page<TermsAcceptance.TermsAcceptance>, Errors.ListFailure | Errors.PermissionDenied>
}

/** Terms: which legal documents each group has accepted. */
export class Terms extends Effect.Service<Terms>()("@arbor/core/Terms", { effect: make }) {}
