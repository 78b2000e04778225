/**
 * Change events: every successful write publishes one event per resource it created, updated or deleted, after
 * the write is committed, so embedders can react (invalidate caches, audit, replicate).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** The kinds of resource an event may concern. */
export type ResourceKind =
  | "group"
  | "identity"
  | "role"
  | "role_binding"
  | "identity_provider"
  | "account_association"
  | "group_invite"
  | "repo"
  | "tag"
  | "advisory"

/** One committed change. */
export interface ChangeEvent {
  readonly type: "created" | "updated" | "deleted"
  readonly resource: ResourceKind
  readonly uid: string
  readonly time: DateTime.Utc
}

/** The in-process stream of change events. */
export class Events extends Effect.Service<Events>()("@arbor/core/Events", {
  scoped: Effect.gen(function*() {
    const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<ChangeEvent>(), PubSub.shutdown)
    return {
      /** Publishes committed changes, in order. */
      publish: (events: ReadonlyArray<ChangeEvent>): Effect.Effect<void> =>
        events.length === 0 ? Effect.void : Effect.asVoid(PubSub.publishAll(pubsub, events)),
      /** A subscription that receives every event published while the scope is open. */
      subscribe: PubSub.subscribe(pubsub) as Effect.Effect<Queue.Dequeue<ChangeEvent>, never, Scope.Scope>,
      /** Every event published from now on. */
      stream: Stream.fromPubSub(pubsub)
    }
  })
}) {}

/** An event stamped with the current time. */
export const make = (type: ChangeEvent["type"], resource: ResourceKind, uid: string): Effect.Effect<ChangeEvent> =>
  Effect.map(DateTime.now, (time) => ({ type, resource, uid, time }))
