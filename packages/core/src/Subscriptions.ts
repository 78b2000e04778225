/**
 * The Subscriptions service: list, get, create and delete webhooks (docs/api.md §12). A sink is an https URL on a
 * public address, checked when the subscription is created and again at every delivery; loopback `http://` sinks
 * only where the settings allow them (development and tests).
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { InvalidArgument } from "./Errors.js"
import * as Group from "./Group.js"
import { commit, operations, orNotFound, trusted, unexpectedConflict } from "./internal/operations.js"
import * as Resources from "./internal/resources.js"
import * as Egress from "./internal/tokens/egress.js"
import { operation } from "./internal/tracing.js"
import * as IssuerUrl from "./IssuerUrl.js"
import * as Lists from "./Lists.js"
import type { Principal } from "./Principal.js"
import * as Repository from "./Repository.js"
import type * as ResourceService from "./ResourceService.js"
import * as Subscription from "./Subscription.js"
import * as Uid from "./Uid.js"
import * as Validation from "./Validation.js"

/** Webhook subscriptions. */
export class Subscriptions extends Effect.Service<Subscriptions>()("@arbor/core/Subscriptions", {
  effect: Effect.gen(function*() {
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
    const spec: Lists.ListSpec<Subscription.Subscription> = {
      load: Lists.asIs,
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

    const service = {
      /** Subscriptions the caller may list (`subscriptions.list` at their group or above). */
      list: (principal: Principal, options: Lists.ListOptions = {}) =>
        operation("Subscriptions.list")(Lists.list(ops, spec, principal, options)),

      get: (principal: Principal, uid: string) =>
        operation("Subscriptions.get")(Resources.get(ops, kind, principal, uid)),

      /** Creates a subscription to the entries of `parentUid` and of the groups below it. */
      create: Effect.fnUntraced(function*(principal: Principal, parentUid: string, input: unknown) {
        const parent = yield* Uid.parse(parentUid, "parent")
        yield* ops.authorization.check(principal, Subscription.permissions.create, parent)
        const { sink } = yield* Validation.decode(Subscription.CreateSubscription)(input)
        const refused = yield* refusal(sink)
        if (refused !== undefined) return yield* InvalidArgument.field("sink", refused)
        return yield* commit(
          ops,
          principal,
          Effect.gen(function*() {
            yield* orNotFound(groups.get(parent), "group", parent)
            const now = yield* DateTime.now
            const subscription = new Subscription.Subscription(
              { uid: Uid.makeChild(parent), sink, createTime: now, updateTime: now },
              trusted
            )
            yield* subscriptions.insert(subscription).pipe(unexpectedConflict)
            return subscription
          })
        )
      }, operation("Subscriptions.create")),

      /** Deletes a subscription; deleting one that is gone succeeds (the protos call it idempotent). */
      delete: (principal: Principal, uid: string) =>
        operation("Subscriptions.delete")(Resources.remove(ops, kind, principal, uid, {
          idempotent: true,
          before: (subscription) =>
            Repository.orInternal(
              ops.store.delete(Subscription.deliveriesTable, { ranges: [Uid.only(subscription.uid)] })
            )
        }))
    }
    return service satisfies ResourceService.Creatable<Subscription.Subscription>
  })
}) {}
