/**
 * The audit trail (docs/api.md §12): the change log as callers read it. A list with the standard parameters and
 * filters, and a watch that follows the log from a cursor. An entry is visible to callers holding
 * `subscriptions.list` at its group or above; visibility is part of the query, so pages are never short.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import * as Errors from "../engine/Errors.js"
import { operations } from "../engine/internal/operations.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import { type Condition, matches } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import { changesAuthority, Grants } from "../iam/Authorization.js"
import * as Embedding from "../iam/internal/embedding.js"
import type { Principal } from "../iam/Principal.js"
import type { Authority } from "../tokens/Authentication.js"
import * as ChangeLog from "./ChangeLog.js"
import * as Events from "./Events.js"

/** The capability that shows the entries of a group and of the groups below it. */
export const capability = "subscriptions.list" as const

/** The filters of the audit trail, beside the common list parameters. */
export interface EntryFilters {
  /** Only entries of these CloudEvent types. */
  readonly types?: ReadonlyArray<string> | undefined
  /** Only entries about resources of these kinds (`group`, `role_binding`, …): every change to them. */
  readonly kinds?: ReadonlyArray<string> | undefined
  /** Only entries about this resource. */
  readonly subject?: string | undefined
  /** Only entries whose actor is this identity uid, or `system`. */
  readonly actor?: string | undefined
  /** Only entries at or after this time (RFC 3339). */
  readonly since?: string | undefined
  /** Only entries before this time (RFC 3339). */
  readonly until?: string | undefined
}

/** The list parameters of the audit trail. */
export interface EntryListOptions extends Lists.ListOptions, EntryFilters {}

/** What a watch follows: the filters and hierarchy filters of a list, from a cursor. */
export interface WatchOptions extends EntryFilters {
  readonly descendantsOf?: string | undefined
  readonly childrenOf?: string | undefined
  /** The cursor of the last entry seen: the watch starts after it (absent: with what commits from now on). */
  readonly after?: string | undefined
}

/** The filters as store conditions, with the violations found reading them. */
export const filters = (options: EntryFilters): Lists.Filters => {
  const conditions: Array<Condition> = []
  const violations: Array<Errors.FieldViolation> = []
  if (options.types !== undefined) conditions.push({ _tag: "In", column: "type", values: [...new Set(options.types)] })
  if (options.kinds !== undefined) {
    const unknown = options.kinds.find((kind) => !Schema.is(ChangeLog.ResourceKind)(kind))
    if (unknown !== undefined) {
      violations.push(
        new Errors.FieldViolation({
          field: "kind",
          description: `'${unknown}' is no kind of resource (${ChangeLog.ResourceKind.literals.join(", ")})`
        })
      )
    }
    conditions.push({ _tag: "In", column: "kind", values: [...new Set(options.kinds)] })
  }
  if (options.subject !== undefined) {
    if (!Uid.isUid(options.subject)) {
      violations.push(
        new Errors.FieldViolation({ field: "subject", description: `'${options.subject}' is not a valid uid` })
      )
    }
    conditions.push({ _tag: "Equals", column: "subject", value: options.subject })
  }
  if (options.actor !== undefined) conditions.push({ _tag: "Equals", column: "actorSubject", value: options.actor })
  const since = Lists.timeFilter(violations, "since", options.since)
  const until = Lists.timeFilter(violations, "until", options.until)
  if (since !== undefined) conditions.push({ _tag: "AtLeast", column: "time", value: since })
  if (until !== undefined) conditions.push({ _tag: "Below", column: "time", value: until })
  return {
    conditions,
    violations,
    digest: [
      options.types === undefined ? undefined : [...new Set(options.types)].sort(),
      options.kinds === undefined ? undefined : [...new Set(options.kinds)].sort(),
      options.subject,
      options.actor,
      since,
      until
    ]
  }
}

/** Whether an entry's body embeds resources rendered for each reader (a role binding's): not shared between readers. */
export const rendersPerReader = Embedding.rendersPerReader

/** A cursor: the position of an entry in the log. */
const cursorPattern = /^[0-9]{40}$/

/**
 * True when `entry` meets `conditions`, the very ones a list of the same filters gives the store (`filters`), and
 * lies where the watch looks: a filter added to the list holds for the watch too.
 */
const passes = (entry: ChangeLog.Entry, options: WatchOptions, conditions: ReadonlyArray<Condition>): boolean => {
  const columns = ChangeLog.columnsOf(entry)
  return conditions.every((condition) => matches(columns, condition)) &&
    (options.childrenOf === undefined || entry.group === options.childrenOf) &&
    (options.descendantsOf === undefined || Uid.isAncestorOrSelf(options.descendantsOf as Uid.Uid, entry.group))
}

/**
 * Hands a receiver the entries of a watch, until interrupted (`AuditTrail.follow`, `Events.relay`), or until its
 * caller would be refused: then it fails with the refusal.
 */
export type Relay = <E>(
  receiver: Events.Receiver<E>
) => Effect.Effect<
  never,
  Errors.StoreFailure | Errors.FailedPrecondition | Errors.Unauthenticated | Errors.PermissionDenied | E
>

/** Builds the AuditTrail service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const events = yield* Events.Events
  const embedding = yield* Embedding.make
  const spec: Lists.ListSpec<ChangeLog.Entry, ChangeLog.Record> = {
    repository: yield* Repository.make(ChangeLog.table, ChangeLog.Record),
    capability,
    // An entry's uid lies below its group: visible where the capability is held at the group or above.
    visibleAt: "parent",
    // The log's own order (its position breaks the ties of time).
    defaultOrder: "time",
    // Embedded resources rendered for the reader, as `GET` would render them for it.
    load: (records, grants) => embedding.entries(grants, records.map(ChangeLog.fromRecord))
  }

  /** Checks a watch's parameters: the filters, the hierarchy filters, the cursor. */
  const checkWatch = (options: WatchOptions) => {
    const { violations = [] } = filters(options)
    const all = [...violations]
    for (const field of ["descendantsOf", "childrenOf"] as const) {
      const value = options[field]
      if (value !== undefined && !Uid.isUid(value)) {
        all.push(
          new Errors.FieldViolation({
            field: field === "descendantsOf" ? "uidp.descendants_of" : "uidp.children_of",
            description: `'${value}' is not a valid uid`
          })
        )
      }
    }
    if (options.after !== undefined && !cursorPattern.test(options.after)) {
      all.push(new Errors.FieldViolation({ field: "after", description: "is not a cursor of this change log" }))
    }
    const [first, ...rest] = all
    return first === undefined ? Effect.void : Effect.fail(new Errors.InvalidArgument({ violations: [first, ...rest] }))
  }

  const follow = (
    principal: Principal,
    options: WatchOptions = {},
    authority?: Authority
  ): Effect.Effect<Relay, Errors.ArborError> =>
    operation("AuditTrail.follow")(Effect.gen(function*() {
      yield* checkWatch(options)
      const { conditions } = filters(options)
      if (options.after !== undefined) yield* events.stillHeld(options.after)
      /**
       * Where the caller may see entries now: its authority checked as a request's would be (its token's, when it
       * came with one), then its grants. A caller who may see no entry at all is refused, at once rather than left
       * waiting for none, and later as soon as a request of theirs would be.
       */
      const admitted = Effect.gen(function*() {
        const caller = authority === undefined ? principal : yield* authority.current
        const grants = yield* ops.authorization.grants(caller)
        const scopes = grants.scopes(capability)
        if (scopes !== "all" && scopes.length === 0) {
          return yield* new Errors.PermissionDenied({
            capability,
            resource: options.childrenOf ?? options.descendantsOf ?? "events"
          })
        }
        return { grants, scopes }
      })
      let current = yield* admitted
      // The caller's authority changes only with a write the log carries (`changesAuthority`) or at its token's
      // expiry: a batch holding such a write is declined by the tail's offer and taken in the follower's fiber,
      // which checks the caller again before anything of it is shown. So is a batch with an entry rendered for
      // each reader (a role binding's embedded resources).
      const changes = (batch: Events.Batch) => batch.some((entry) => changesAuthority(entry.kind))
      const takenAlone = (batch: Events.Batch) => changes(batch) || batch.some(rendersPerReader)
      const see = (batch: Events.Batch) =>
        changes(batch) ? Effect.map(admitted, (now) => current = now) : Effect.succeed(current)
      // The batch itself when all of it passes, so that it is made into a message once for every watch.
      const shown = (at: typeof current.scopes, batch: Events.Batch) => {
        const passed = batch.filter((entry) =>
          (at === "all" || at.some((s) => Uid.isAncestorOrSelf(s, entry.group))) &&
          passes(entry, options, conditions)
        )
        return passed.length === batch.length ? batch : passed
      }
      const expiry = authority === undefined ? Effect.never : Effect.flatMap(
        Clock.currentTimeMillis,
        (now) =>
          Effect.zipRight(
            Effect.sleep(Math.max(0, authority.expiresAt - now)),
            Effect.fail(new Errors.Unauthenticated({ why: "the token has expired", reason: "ERR_JWT_EXPIRED" }))
          )
      )
      const relay: Relay = (receiver) =>
        Effect.raceFirst(
          events.relay(options.after, {
            offer: (batch) => {
              if (batch.length === 0) return receiver.offer(batch)
              if (takenAlone(batch)) return false
              const passed = shown(current.scopes, batch)
              return passed.length === 0 || receiver.offer(passed)
            },
            take: (batch) =>
              Effect.gen(function*() {
                const { grants, scopes } = yield* see(batch)
                const passed = shown(scopes, batch)
                if (passed.length > 0) yield* receiver.take(yield* embedding.entries(grants, passed))
              })
          }),
          expiry
        )
      return relay
    }))

  const service: AuditTrailService = {
    list: (principal: Principal, options: EntryListOptions = {}) =>
      operation("AuditTrail.list")(Lists.list(ops, spec, principal, options, filters(options))),

    follow,

    seenFrom: (group: Uid.Uid, entries: ReadonlyArray<ChangeLog.Entry>) =>
      embedding.entries(Grants.everythingAt(group), entries),

    watch: (principal: Principal, options: WatchOptions = {}, authority?: Authority) =>
      Effect.map(follow(principal, options, authority), (relay) => Events.streamOf((receiver) => relay(receiver)))
  }
  return service
})

/** The AuditTrail service: the change log as each reader may see it, listed, followed and sent on a group's behalf. */
export interface AuditTrailService {
  /** One page of the entries the caller may see, oldest first unless `order_by` says otherwise. */
  readonly list: (
    principal: Principal,
    options?: EntryListOptions
  ) => Effect.Effect<Lists.Page<ChangeLog.Entry>, Errors.ListFailure>
  /**
   * Checks the parameters, then returns a relay (`Events.relay`) of the entries after `options.after` that the
   * caller may see and the filters pass, then each new one as it becomes final, on any process sharing the store,
   * in the log's order, in batches; an empty batch is a heartbeat (`Events.Heartbeat`). The caller (with
   * `authority`, as its token gives it) is checked again before each batch holding a write that may change what
   * it may do, so a revoked binding stops the entries it showed; the relay fails with the refusal once a request
   * of the caller's would be refused, and at the token's expiry.
   */
  readonly follow: (
    principal: Principal,
    options?: WatchOptions,
    authority?: Authority
  ) => Effect.Effect<Relay, Errors.ArborError>
  /**
   * The entries as the group `group` may see them, for what is sent on its behalf (a subscription's deliveries):
   * embedded resources rendered as `GET` would render them for a reader holding every capability there.
   */
  readonly seenFrom: (
    group: Uid.Uid,
    entries: ReadonlyArray<ChangeLog.Entry>
  ) => Effect.Effect<ReadonlyArray<ChangeLog.Entry>, Errors.StoreFailure>
  /** `follow` as a stream of batches. */
  readonly watch: (
    principal: Principal,
    options?: WatchOptions,
    authority?: Authority
  ) => Effect.Effect<
    Stream.Stream<Events.Batch, Errors.ReadFailure | Errors.FailedPrecondition | Errors.Unauthenticated>,
    Errors.ArborError
  >
}

/** The audit trail. */
export class AuditTrail extends Effect.Service<AuditTrail>()("@arbor/core/AuditTrail", { effect: make }) {}
