/**
 * The Subscriptions service: list, get, create and delete webhooks (docs/api.md §12). A sink is an https URL on a
 * public address, checked when the subscription is created and again at every delivery; loopback `http://` sinks
 * only where the settings allow them (development and tests).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Errors from "../engine/Errors.js"
import * as Egress from "../engine/internal/egress.js"
import { commit, operations, orNotFound, trusted, unexpectedConflict } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import { atGroup } from "../iam/Authorization.js"
import * as Group from "../iam/Group.js"
import { grantor } from "../iam/internal/roles.js"
import * as Principal from "../iam/Principal.js"
import * as IssuerUrl from "../tokens/IssuerUrl.js"
import * as ChangeLog from "./ChangeLog.js"
import * as Subscription from "./Subscription.js"

/** Builds the Subscriptions service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const resolve = yield* Egress.Resolver
  const subscriptions = yield* Repository.make(Subscription.table, Subscription.Subscription)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const kind: Resources.Kind<Subscription.Subscription> = {
    resourceType: "subscription",
    repository: subscriptions,
    permissions: Subscription.permissions,
    groupOf: Resources.parentGroup
  }
  const states = yield* Repository.make(Subscription.deliveriesTable, Subscription.DeliveryState)
  const log = yield* Repository.make(ChangeLog.table, ChangeLog.Record)

  /** How many entries wait for a subscription whose last delivered entry is at `delivered` (empty: none yet). */
  const pending = (group: Uid.Uid, delivered: string) =>
    Effect.map(
      log.count({
        ranges: [Uid.descendants(group)],
        conditions: delivered === "" ? [] : [{ _tag: "AtLeast", column: "position", value: delivered }]
      }),
      // The delivered entry itself (or the subscription's own creation) is no longer pending.
      (count) => delivered === "" ? count : Math.max(0, count - 1)
    )

  /** Where a subscription's deliveries start: after its own creation's entry (or, were that pruned, the log's start). */
  const start = (subscription: Subscription.Subscription) =>
    Effect.map(
      log.find({
        conditions: [{ _tag: "Equals", column: "subject", value: subscription.uid }],
        order: [{ column: "position", direction: "asc" }, { column: "uid", direction: "asc" }],
        limit: 1
      }),
      ([created]) => created?.position ?? ""
    )

  /** The subscriptions with their health: how their deliveries stand, from their rows of `deliveriesTable`. */
  const withHealth = (subscriptions: ReadonlyArray<Subscription.Subscription>) =>
    Effect.gen(function*() {
      const rows = new Map((yield* states.getMany(subscriptions.map((s) => s.uid))).map((r) => [r.uid, r]))
      return yield* Effect.forEach(subscriptions, (subscription) =>
        Effect.gen(function*() {
          const state = rows.get(subscription.uid)
          const group = Uid.parentOrNull(subscription.uid) ?? subscription.uid
          const waiting = yield* pending(group, state?.delivered ?? (yield* start(subscription)))
          const health = new Subscription.Health({
            state: state?.stopped != null ? "STOPPED" : state?.failingSince != null ? "FAILING" : "ACTIVE",
            ...(state?.stopped != null ? { reason: state.stopped } : {}),
            ...(state?.lastDelivered != null ? { lastDeliveredTime: DateTime.unsafeMake(state.lastDelivered) } : {}),
            ...(state?.failingSince != null ? { failingSince: DateTime.unsafeMake(state.failingSince) } : {}),
            ...(state?.lastError != null ? { lastError: state.lastError } : {}),
            ...(state?.failingSince != null && state.retryAt > 0 ?
              { nextRetryTime: DateTime.unsafeMake(state.retryAt) } :
              {}),
            ...(state?.sendingSince != null ? { sendingSince: DateTime.unsafeMake(state.sendingSince) } : {}),
            pending: waiting
          }, trusted)
          return new Subscription.Subscription({ ...subscription, health }, trusted)
        }))
    })

  const spec: Lists.ListSpec<Subscription.Subscription> = {
    target: (uid) => Resources.targetOf(kind, uid),
    load: withHealth,
    repository: subscriptions,
    capability: Subscription.permissions.list,
    visibleAt: "parent"
  }
  const allowLoopback = ops.settings.allowLoopbackSinks === true

  /** Why `sink` may not receive deliveries, or undefined when it may. */
  const refusal = (sink: string) =>
    Effect.promise(async () => {
      const written = IssuerUrl.error(sink, { allowLoopback, allowQuery: true })
      if (written !== undefined) return written
      const host = new URL(sink).hostname.replace(/^\[|\]$/g, "")
      const unreachable = await Egress.unreachable(resolve, host, allowLoopback)
      return unreachable === undefined ? undefined : `its host ${unreachable}`
    })

  const service: SubscriptionsService = {
    list: (principal: Principal.Principal, options: Lists.ListOptions = {}) =>
      operation("Subscriptions.list")(Lists.list(ops, spec, principal, options)),

    get: (principal: Principal.Principal, uid: string) =>
      operation("Subscriptions.get")(
        Resources.getPresented(ops, kind, principal, uid, (subscription) =>
          Effect.map(withHealth([subscription]), ([one]) =>
            one!))
      ),

    start,

    pending,

    refusal: (subscription: Subscription.Subscription) =>
      subscription.createdBy === null ? Effect.succeed(undefined) : Effect.map(
        ops.authorization.grants(Principal.identity(subscription.createdBy)),
        (grants) =>
          grants.holds(Subscription.permissions.create, Uid.parentOrNull(subscription.uid) ?? subscription.uid)
            ? undefined
            : `its creator no longer holds ${Subscription.permissions.create} at its group`
      ),

    create: Effect.fnUntraced(function*(principal: Principal.Principal, parentUid: string, input: unknown) {
      const parent = yield* Uid.parse(parentUid, "parent")
      yield* ops.authorization.check(principal, Subscription.permissions.create, atGroup(parent))
      const { sink } = yield* Validation.decodeRequest(Subscription.CreateSubscription)(input)
      const refused = yield* refusal(sink)
      if (refused !== undefined) return yield* Errors.InvalidArgument.field("sink", refused)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(parent), "group", parent)
          const now = yield* DateTime.now
          const subscription = new Subscription.Subscription(
            { uid: Uid.makeChild(parent), sink, createdBy: grantor(principal), createTime: now, updateTime: now },
            trusted
          )
          yield* subscriptions.insert(subscription).pipe(unexpectedConflict)
          return subscription
        })
      )
    }, operation("Subscriptions.create")),

    delete: (principal: Principal.Principal, uid: string) =>
      operation("Subscriptions.delete")(Resources.remove(ops, kind, principal, uid, {
        idempotent: true,
        before: (subscription) =>
          Repository.orInternal(
            ops.store.delete(Subscription.deliveriesTable, { ranges: [Uid.only(subscription.uid)] })
          )
      }))
  }
  return service
})

/**
 * The Subscriptions service. A subscription receives the entries of its group and of the groups below it; its
 * sink is checked as an issuer's address is. Deleting one that is gone succeeds (the protos call it idempotent).
 */
export interface SubscriptionsService extends ResourceService.Creatable<Subscription.Subscription> {
  /** Where a subscription's deliveries start: after its own creation's entry. */
  readonly start: (subscription: Subscription.Subscription) => Effect.Effect<string, Errors.StoreFailure>
  /** How many entries wait for a subscription of `group` whose last delivered entry is at `delivered`. */
  readonly pending: (group: Uid.Uid, delivered: string) => Effect.Effect<number, Errors.StoreFailure>
  /**
   * Why `subscription`'s deliveries may not go on, or undefined while they may: its creator must still hold
   * `subscriptions.create` at its group (no grant outlives the authority that made it, as for invites).
   */
  readonly refusal: (
    subscription: Subscription.Subscription
  ) => Effect.Effect<string | undefined, Errors.StoreFailure>
}

/** Webhook subscriptions. */
export class Subscriptions extends Effect.Service<Subscriptions>()("@arbor/core/Subscriptions", { effect: make }) {}
