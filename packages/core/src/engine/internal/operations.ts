import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ChangeLog from "../../events/ChangeLog.js"
import { Events } from "../../events/Events.js"
import { Authorization } from "../../iam/Authorization.js"
import type { Principal } from "../../iam/Principal.js"
import type { Internal, Unavailable } from "../Errors.js"
import { Aborted, AlreadyExists, InvalidArgument, NotFound } from "../Errors.js"
import type { Repository } from "../Repository.js"
import { orInternal } from "../Repository.js"
import type { SecretsService } from "../Secrets.js"
import { Secrets } from "../Secrets.js"
import type { SettingsService } from "../Settings.js"
import { Settings } from "../Settings.js"
import type { StoreError, StoreService, Table, UniqueViolation, Where } from "../Store.js"
import { isUniqueViolation, Store } from "../Store.js"
import * as Uid from "../Uid.js"

/**
 * What every operation needs, captured once when a service is built, so that no call needs a context: the store,
 * the change events, authorization, the secrets and the settings.
 */
export interface Operations {
  readonly store: StoreService
  readonly events: Events
  readonly authorization: Authorization
  readonly secrets: SecretsService
  readonly settings: SettingsService
}

/** The operations' dependencies, from the context a service is built in. */
export const operations: Effect.Effect<Operations, never, Store | Events | Authorization | Secrets> = Effect.all({
  store: Store,
  events: Events,
  authorization: Authorization,
  secrets: Secrets,
  settings: Settings
})

/**
 * Runs `body` as one transaction, its writes (and so their change-log entries) attributed to `principal`, then wakes
 * this process's followers of the log.
 */
export const commit = <A, E, R>(
  ops: Operations,
  principal: Principal,
  body: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, StoreError> | Internal | Unavailable, R> =>
  orInternal(ops.store.transaction(body)).pipe(
    ChangeLog.attributedTo(principal),
    Effect.tap(() => ops.events.committed)
  )

/** The value, or NotFound. */
export const orNotFound = <A, E, R>(
  effect: Effect.Effect<Option.Option<A>, E, R>,
  resourceType: string,
  uid: string
): Effect.Effect<A, E | NotFound, R> =>
  Effect.flatMap(
    effect,
    Option.match({
      onNone: () => Effect.fail(new NotFound({ resourceType, uid })),
      onSome: Effect.succeed
    })
  )

/** Unique violations as AlreadyExists (or, for a uid collision, Aborted so the caller may retry). */
export const conflict = (resourceType: string, description: string) =>
<A, E, R>(
  effect: Effect.Effect<A, E | UniqueViolation, R>
): Effect.Effect<A, Exclude<E, UniqueViolation> | AlreadyExists | Aborted, R> =>
  Effect.catchIf(
    effect,
    isUniqueViolation,
    (e): Effect.Effect<never, AlreadyExists | Aborted> =>
      e.columns.length === 1 && e.columns[0] === "uid"
        ? Effect.fail(new Aborted({ description: "a generated uid collided; retry the request" }))
        : Effect.fail(new AlreadyExists({ resourceType, description }))
  ) as Effect.Effect<A, Exclude<E, UniqueViolation> | AlreadyExists | Aborted, R>

/** The request body as an object of fields. */
export const fieldsOf = (input: unknown): Effect.Effect<Readonly<Record<string, unknown>>, InvalidArgument> =>
  typeof input === "object" && input !== null && !Array.isArray(input)
    ? Effect.succeed(input as Record<string, unknown>)
    : Effect.fail(InvalidArgument.field("request", "must be an object of fields"))

/** The update time for a resource last updated at `previous`: now, and always later than `previous`. */
export const nextUpdateTime = (previous: DateTime.Utc): Effect.Effect<DateTime.Utc> =>
  Effect.map(DateTime.now, (now) => DateTime.greaterThan(now, previous) ? now : DateTime.add(previous, { millis: 1 }))

/** True when any row of `table` matches `where`. */
export const exists = (ops: Operations, table: Table, where: Where): Effect.Effect<boolean, Internal | Unavailable> =>
  orInternal(ops.store.find(table, { ...where, order: [{ column: "uid", direction: "asc" }], limit: 1 })).pipe(
    Effect.map((rows) => rows.length > 0)
  )

/**
 * Inserts `values`, each named uniquely among its siblings (a unique key over `parent` and `name`), in one write: all
 * or none. Each parent (a group) exists, else NotFound; a name already taken beside one of them is AlreadyExists,
 * `taken` describing the value. With several values the clash is looked for first, to be named: the insert's own
 * refusal does not say which, and on PostgreSQL would end the transaction.
 */
export const insertNamed = <A extends { readonly uid: Uid.Uid; readonly name: string }>(
  repository: Repository<A>,
  groups: Pick<Repository<{ readonly uid: Uid.Uid }>, "getMany">,
  resourceType: string,
  values: ReadonlyArray<A>,
  taken: (value: A) => string
) =>
  Effect.gen(function*() {
    const parents = [...new Set(values.flatMap(({ uid }) => Uid.parentOrNull(uid) ?? []))]
    const found = new Set((yield* groups.getMany(parents)).map((group) => group.uid))
    const missing = parents.find((parent) => !found.has(parent))
    if (missing !== undefined) return yield* new NotFound({ resourceType: "group", uid: missing })
    if (values.length > 1) {
      const stored = yield* repository.findRows({
        conditions: [
          { _tag: "In", column: "parent", values: parents },
          { _tag: "In", column: "name", values: [...new Set(values.map(({ name }) => name))] }
        ],
        order: [{ column: "uid", direction: "asc" }]
      })
      const siblings = new Set(stored.map((row) => `${row.parent}\n${row.name}`))
      const clash = values.find(({ name, uid }) => siblings.has(`${Uid.parentOrNull(uid)}\n${name}`))
      if (clash !== undefined) return yield* new AlreadyExists({ resourceType, description: taken(clash) })
    }
    yield* repository.insertMany(values).pipe(
      conflict(resourceType, values.length === 1 ? taken(values[0]!) : `a ${resourceType} of the same name exists`)
    )
  })

/** Constructor options for domain values built from already-validated fields: skip re-validation. */
export const trusted = { disableValidation: true } as const

/** For writes that cannot conflict (random 64-bit keys, rows known to exist): a unique violation is a defect. */
export const unexpectedConflict = <A, E, R>(
  effect: Effect.Effect<A, E | UniqueViolation, R>
): Effect.Effect<A, Exclude<E, UniqueViolation>, R> =>
  Effect.catchIf(
    effect,
    isUniqueViolation,
    (e) => Effect.die(e)
  ) as Effect.Effect<A, Exclude<E, UniqueViolation>, R>
