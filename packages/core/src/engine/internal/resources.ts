import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type { Grants, Target } from "../../iam/Authorization.js"
import type { Operations as Permissions } from "../../iam/Capability.js"
import type { Principal } from "../../iam/Principal.js"
import type { Internal, Unavailable } from "../Errors.js"
import type { Repository } from "../Repository.js"
import * as Uid from "../Uid.js"
import * as FieldMask from "./lists/fieldMask.js"
import type { Operations } from "./operations.js"
import { commit, conflict, fieldsOf, nextUpdateTime, orNotFound, unexpectedConflict } from "./operations.js"

/** What the shared operations need to know about a kind of resource. */
export interface Kind<R extends { readonly uid: Uid.Uid }> {
  /** The name in messages: `Not found: <resourceType> <uid>`. */
  readonly resourceType: string
  readonly repository: Repository<R>
  /** The capability each operation needs. */
  readonly permissions: Permissions
  /** The group whose capabilities govern the resource with this uid. */
  readonly groupOf: (uid: Uid.Uid) => Uid.Uid
}

/** The resource `uid` of `kind` as a check about it names it: its kind as AuthZEN does (`role_binding`). */
export const targetOf = <R extends { readonly uid: Uid.Uid }>(kind: Kind<R>, uid: Uid.Uid): Target => ({
  group: kind.groupOf(uid),
  uid,
  kind: kind.resourceType.replaceAll(" ", "_")
})

/** The parent group of a group-owned resource (a uid with no parent governs itself). */
export const parentGroup = (uid: Uid.Uid): Uid.Uid => Uid.parentOrNull(uid) ?? uid

/** Reads one resource: `list` capability at its group first, then existence. */
export const get = <R extends { readonly uid: Uid.Uid }>(
  ops: Operations,
  kind: Kind<R>,
  principal: Principal,
  uid: string
) => getPresented(ops, kind, principal, uid, (record) => Effect.succeed(record))

/**
 * Reads one resource as `get` does, then presents it (hydration) with the grants the permission check loaded, so
 * that what it embeds can follow what the caller may read.
 */
export const getPresented = <R extends { readonly uid: Uid.Uid }, A, E>(
  ops: Operations,
  kind: Kind<R>,
  principal: Principal,
  uid: string,
  present: (record: R, grants: Grants) => Effect.Effect<A, E>
) =>
  // Every read of one resource comes this way: steps chained, not a generator's (a generator and its adapter per call
  // were a third of a get).
  Effect.flatMap(Uid.parse(uid), (id) =>
    Effect.flatMap(ops.authorization.grants(principal), (grants) =>
      Effect.zipRight(
        ops.authorization.check(principal, kind.permissions.list, targetOf(kind, id), grants),
        Effect.flatMap(orNotFound(kind.repository.get(id), kind.resourceType, id), (record) => present(record, grants))
      )))

/** How an update computes the new record from the current one and the request. */
export type Apply<R, E, Env> = (
  current: R,
  request: {
    readonly body: Readonly<Record<string, unknown>>
    readonly mask: FieldMask.FieldMask
    readonly grants: Grants
    readonly updateTime: DateTime.Utc
  }
) => Effect.Effect<R, E, Env>

/** What an update asks for, and how the kind applies it. */
export interface UpdateRequest<R, E, Env> {
  readonly patch: unknown
  readonly updateMask: string | undefined
  /** The kind's mutable, immutable and output-only fields. */
  readonly fields: FieldMask.Fields
  readonly apply: Apply<R, E, Env>
  /** The description of the AlreadyExists when the new record clashes with a sibling; absent where none can. */
  readonly duplicate?: (next: R) => string
}

/** An update whose result is presented (hydrated) with the grants its permission check loaded. */
export interface PresentedUpdateRequest<R, E, Env, A> extends UpdateRequest<R, E, Env> {
  readonly present: (next: R, grants: Grants) => Effect.Effect<A, Internal | Unavailable>
}

/**
 * Updates one resource: the `update` capability at its group, the mask, then in one transaction the current
 * record, the new one from `apply` (merge and validation) and the write (with its change-log entry).
 */
export const update = <R extends { readonly uid: Uid.Uid; readonly updateTime: DateTime.Utc }, E, Env>(
  ops: Operations,
  kind: Kind<R>,
  principal: Principal,
  uid: string,
  request: UpdateRequest<R, E, Env>
) => updatePresented(ops, kind, principal, uid, { ...request, present: (next) => Effect.succeed(next) })

/** Updates one resource as `update` does, then presents the new record with the grants its check loaded. */
export const updatePresented = <R extends { readonly uid: Uid.Uid; readonly updateTime: DateTime.Utc }, E, Env, A>(
  ops: Operations,
  kind: Kind<R>,
  principal: Principal,
  uid: string,
  { apply, duplicate, fields, patch, present, updateMask }: PresentedUpdateRequest<R, E, Env, A>
) =>
  Effect.gen(function*() {
    const id = yield* Uid.parse(uid)
    const grants = yield* ops.authorization.grants(principal)
    yield* ops.authorization.check(principal, kind.permissions.update!, targetOf(kind, id), grants)
    const mask = yield* FieldMask.parse(updateMask, fields)
    const body = yield* fieldsOf(patch)
    yield* FieldMask.known(body, fields)
    const next = yield* commit(
      ops,
      principal,
      Effect.gen(function*() {
        const current = yield* orNotFound(kind.repository.get(id), kind.resourceType, id)
        const next = yield* apply(current, {
          body,
          mask,
          grants,
          updateTime: yield* nextUpdateTime(current.updateTime)
        })
        const write = kind.repository.update(next)
        yield* duplicate === undefined
          ? unexpectedConflict(write)
          : write.pipe(conflict(kind.resourceType, duplicate(next)))
        return next
      })
    )
    return yield* present(next, grants)
  })

/**
 * Deletes one resource: the `delete` capability at its group, then in one transaction the existence check (or
 * none, when deleting a missing one succeeds), `before` (refusals, cascades) and the delete.
 */
export const remove = <R extends { readonly uid: Uid.Uid }, E = never, Env = never>(
  ops: Operations,
  kind: Kind<R>,
  principal: Principal,
  uid: string,
  options: {
    readonly idempotent?: boolean
    readonly before?: (current: R) => Effect.Effect<unknown, E, Env>
  } = {}
) =>
  Effect.gen(function*() {
    const id = yield* Uid.parse(uid)
    yield* ops.authorization.check(principal, kind.permissions.delete!, targetOf(kind, id))
    return yield* commit(
      ops,
      principal,
      Effect.gen(function*() {
        const current = yield* kind.repository.get(id)
        if (current._tag === "None") {
          if (options.idempotent === true) return
          return yield* orNotFound(Effect.succeedNone, kind.resourceType, id)
        }
        if (options.before !== undefined) yield* options.before(current.value)
        yield* kind.repository.delete({ ranges: [Uid.only(id)] })
      })
    )
  })
