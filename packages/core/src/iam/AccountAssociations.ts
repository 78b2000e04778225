/**
 * The AccountAssociations service: list, get, create, update and delete the cloud accounts a group trusts. A group
 * has at most one association, whose uid is the group's.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { AlreadyExists } from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import { commit, operations, orNotFound, trusted, unexpectedConflict } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import * as AccountAssociation from "./AccountAssociation.js"
import { atGroup } from "./Authorization.js"
import * as Group from "./Group.js"
import type { Principal } from "./Principal.js"

/** Builds the AccountAssociations service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const associations = yield* Repository.make(AccountAssociation.table, AccountAssociation.AccountAssociation)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const authorization = ops.authorization
  const kind: Resources.Kind<AccountAssociation.AccountAssociation> = {
    resourceType: "account association",
    repository: associations,
    permissions: AccountAssociation.permissions,
    groupOf: (uid) => uid
  }
  const spec: Lists.ListSpec<AccountAssociation.AccountAssociation> = {
    target: (uid) => Resources.targetOf(kind, uid),
    load: Lists.asIs,
    repository: associations,
    capability: AccountAssociation.permissions.list,
    visibleAt: "self"
  }

  const service: AccountAssociationsService = {
    list: (principal: Principal, options: Lists.ListOptions = {}) =>
      operation("AccountAssociations.list")(Lists.list(ops, spec, principal, options)),

    get: (principal: Principal, uid: string) =>
      operation("AccountAssociations.get")(Resources.get(ops, kind, principal, uid)),

    create: Effect.fnUntraced(function*(principal: Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      yield* authorization.check(principal, AccountAssociation.permissions.create, atGroup(group))
      const fields = yield* Validation.decodeRequest(
        AccountAssociation.CreateAccountAssociation,
        AccountAssociation.fields
      )(input)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(group), "group", group)
          if ((yield* associations.get(group))._tag === "Some") {
            return yield* new AlreadyExists({
              resourceType: "account association",
              description: `group ${group} already has an account association`
            })
          }
          const now = yield* DateTime.now
          const association = new AccountAssociation.AccountAssociation(
            { uid: group, ...fields, createTime: now, updateTime: now },
            trusted
          )
          yield* associations.insert(association).pipe(unexpectedConflict)
          return association
        })
      )
    }, operation("AccountAssociations.create")),

    update: (
      principal: Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("AccountAssociations.update")(Resources.update(ops, kind, principal, uid, {
        patch,
        updateMask,
        fields: AccountAssociation.fields,
        apply: (current, request) => {
          const { createTime: _c, uid: _u, updateTime: _t, ...input } = current
          return Validation.decodeRequest(AccountAssociation.CreateAccountAssociation, AccountAssociation.fields)(
            FieldMask.apply(input, request.body, request.mask, AccountAssociation.fields)
          ).pipe(Effect.map((fields) =>
            new AccountAssociation.AccountAssociation({
              uid: current.uid,
              ...fields,
              createTime: current.createTime,
              updateTime: request.updateTime
            }, trusted)
          ))
        }
      })),

    delete: (principal: Principal, uid: string) =>
      operation("AccountAssociations.delete")(
        Resources.remove<AccountAssociation.AccountAssociation, never, never>(ops, kind, principal, uid, {
          idempotent: true
        })
      )
  }
  return service
})

/**
 * The AccountAssociations service. An association's uid is its group's: creating a second one for a group is
 * refused, and deleting a missing one succeeds.
 */
export type AccountAssociationsService = ResourceService.Writable<AccountAssociation.AccountAssociation>

/** Account associations: one per group, at most. */
export class AccountAssociations
  extends Effect.Service<AccountAssociations>()("@arbor/core/AccountAssociations", { effect: make })
{}
