/**
 * Webhook deliveries (docs/api.md §12): every change-log entry of a subscription's group and of the groups below it,
 * POSTed to its sink as a CloudEvent 1.0 in binary mode, with a JWT of the server's own keys carrying the body's
 * digest. Each subscription's entries go one at a time, in the log's order; a sink that fails holds back only its
 * own, retried with backoff (the same `ce-id`) until it answers 2xx or, after 24 hours, is given up on.
 *
 * Any number of servers share the work through one row per subscription (`Subscription.deliveriesTable`): a server
 * delivers for a subscription only while it holds that row's lease, and records each delivery there before the next,
 * so while nothing fails every entry reaches every subscription once.
 */
import * as Wire from "@arbor/api/Wire"
import { ChangeLog, Egress, Events, Repository, Store, Subscription, TokenIssuer, Uid } from "@arbor/core"
import { HttpClientRequest } from "@effect/platform"
import { CloudEvent, HTTP } from "cloudevents"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createHash, randomUUID } from "node:crypto"
import * as Metrics from "./Metrics.js"

/** How long a lease on a subscription's deliveries lasts without being renewed. */
const leaseMillis = 30_000

/** How long a sink has to answer. */
const timeout = Duration.seconds(10)

/** How long an entry is retried before it is given up on. */
const giveUpAfterMillis = 24 * 60 * 60 * 1000

/** The wait before retry `attempt` (1, 2, …): exponential from 1 s, at most 10 minutes, with jitter. */
export const backoffMillis = (attempt: number): number => {
  const base = Math.min(1_000 * 2 ** (attempt - 1), 600_000)
  return Math.round(base * (0.5 + Math.random() * 0.5))
}

const encodeEntry = Schema.encodeSync(Wire.ChangeEntry)

/** One entry as its delivery: the CloudEvent's headers and body. */
export const cloudEvent = (entry: ChangeLog.Entry, source: string) => {
  const wire = encodeEntry(entry)
  const event = new CloudEvent({
    id: entry.id,
    source,
    type: entry.type,
    subject: entry.subject,
    time: wire.time,
    group: entry.group,
    datacontenttype: "application/json",
    data: { actor: wire.actor, body: wire.body }
  })
  const { body, headers } = HTTP.binary(event)
  const named = Object.entries(headers).flatMap(([name, value]): Array<[string, string]> =>
    typeof value === "string" ? [[name, value]] : []
  )
  return { headers: Object.fromEntries(named), body: String(body) }
}

type State = Subscription.DeliveryState

/** Delivers every subscription's entries, from this server as one of any number. */
export const layer = (options: {
  /** The server's base URL: each CloudEvent's `source`. */
  readonly source: string
  /** Sinks on loopback, over http too (`ARBOR_ALLOW_INSECURE_SINKS=loopback`). */
  readonly allowLoopback: boolean
  readonly interval?: Duration.DurationInput
}) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const store = yield* Store.Store
    const events = yield* Events.Events
    const tokens = yield* TokenIssuer.TokenIssuer
    const client = Egress.make(yield* Egress.Resolver, options.allowLoopback, { keepAlive: true })
    const states = yield* Repository.make(Subscription.deliveriesTable, Subscription.DeliveryState)
    const subscriptions = yield* Repository.make(Subscription.table, Subscription.Subscription)
    const log = yield* Repository.make(ChangeLog.table, ChangeLog.Record)
    /** This server, as a lease holder. */
    const me = randomUUID()

    /** Takes the lease on `subscription`'s deliveries when nobody else holds it and no retry is waiting. */
    const claim = (subscription: Subscription.Subscription, now: number) =>
      Repository.orInternal(store.transaction(Effect.gen(function*() {
        const found = yield* states.get(subscription.uid)
        if (Option.isNone(found)) {
          // A new subscription starts after its own creation's entry (or, were that pruned, at the log's start).
          const [created] = yield* log.find({
            conditions: [{ _tag: "Equals", column: "subject", value: subscription.uid }],
            order: [{ column: "position", direction: "asc" }, { column: "uid", direction: "asc" }],
            limit: 1
          })
          const state: State = {
            uid: subscription.uid,
            delivered: created?.position ?? "",
            leaseOwner: me,
            leaseUntil: now + leaseMillis,
            attempts: 0,
            retryAt: 0,
            failingSince: null
          }
          // Another server inserting it at the same moment wins: a savepoint keeps the conflict from the rest.
          const inserted = yield* store.transaction(states.insert(state)).pipe(
            Effect.as(true),
            Effect.catchTag("UniqueViolation", () => Effect.succeed(false))
          )
          return inserted ? state : undefined
        }
        const current = found.value
        if ((current.leaseOwner !== me && current.leaseUntil > now) || current.retryAt > now) return undefined
        const state: State = { ...current, leaseOwner: me, leaseUntil: now + leaseMillis }
        yield* states.update(state).pipe(Effect.orDie)
        return state
      })))

    /** Records `next` if the lease is still ours; false when another server has taken it over. */
    const record = (next: State) =>
      Repository.orInternal(store.transaction(Effect.gen(function*() {
        const found = yield* states.get(next.uid)
        if (Option.isNone(found) || found.value.leaseOwner !== me) return false
        yield* states.update(next).pipe(Effect.orDie)
        return true
      })))

    /** POSTs one entry; the outcome. */
    const post = (sink: string, entry: ChangeLog.Entry) =>
      Effect.gen(function*() {
        const { body, headers } = cloudEvent(entry, options.source)
        const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`
        const token = yield* tokens.signDelivery(entry.group, digest)
        const response = yield* client.execute(
          HttpClientRequest.post(sink).pipe(
            HttpClientRequest.setHeaders({ ...headers, authorization: `Bearer ${token}` }),
            HttpClientRequest.bodyText(body, "application/json")
          )
        ).pipe(
          // The answer's body is read and dropped, so that the connection serves the next delivery.
          // (A 204 has no body to read: draining it fails, which says nothing of the delivery.)
          Effect.tap((response) => Effect.ignore(Stream.runDrain(response.stream))),
          Effect.scoped,
          Effect.timeout(timeout)
        )
        return response.status >= 200 && response.status < 300 ? undefined : `the sink answered ${response.status}`
      }).pipe(Effect.catchAll((error) => Effect.succeed(`${error}`)))

    /** Delivers what `subscription` has waiting, in order, while its lease holds and its sink answers. */
    const deliver = (subscription: Subscription.Subscription, claimed: State) =>
      Effect.gen(function*() {
        let state = claimed
        const group = Uid.parentOrNull(subscription.uid) ?? subscription.uid
        for (;;) {
          const pending = yield* events.after(state.delivered === "" ? undefined : state.delivered, 100, group)
          if (pending.length === 0) break
          for (const entry of pending) {
            if (entry.subject === state.uid) {
              // The subscription's own entries (its creation) are not sent to it.
              state = { ...state, delivered: entry.position }
              continue
            }
            const now = Date.now()
            const failure = yield* post(subscription.sink, entry)
            const delivered = failure === undefined
            yield* Metrics.recordDelivery(delivered ? "delivered" : "failed", Date.now() - entry.time.epochMillis)
            if (delivered) {
              state = { ...state, delivered: entry.position, attempts: 0, retryAt: 0, failingSince: null }
            } else if (state.failingSince !== null && now - state.failingSince > giveUpAfterMillis) {
              yield* Metrics.recordDelivery("abandoned")
              yield* Effect.logWarning("a delivery was given up on after 24 hours of failures").pipe(
                Effect.annotateLogs({ subscription: state.uid, entry: entry.id })
              )
              state = { ...state, delivered: entry.position, attempts: 0, retryAt: 0, failingSince: null }
            } else {
              const attempts = state.attempts + 1
              if (attempts === 1) {
                yield* Effect.logWarning(`a delivery failed and will be retried: ${failure}`).pipe(
                  Effect.annotateLogs({ subscription: state.uid, entry: entry.id })
                )
              }
              state = {
                ...state,
                attempts,
                retryAt: now + backoffMillis(attempts),
                failingSince: state.failingSince ?? now
              }
              yield* record({ ...state, leaseOwner: null, leaseUntil: 0 })
              return
            }
          }
          // Recorded once a batch (at most 100 entries): a server that dies within one makes the next holder send
          // its entries again, which at-least-once allows; while nothing fails, each is sent once.
          state = { ...state, leaseUntil: Date.now() + leaseMillis }
          if (!(yield* record(state))) return
        }
        yield* record({ ...state, leaseOwner: null, leaseUntil: 0 })
      })

    /** True when `subscription` may have entries waiting that this server could send now: reads only. */
    const due = (subscription: Subscription.Subscription, now: number) =>
      Effect.gen(function*() {
        const found = yield* states.get(subscription.uid)
        if (Option.isNone(found)) return true
        const state = found.value
        if ((state.leaseOwner !== me && state.leaseUntil > now) || state.retryAt > now) return false
        const group = Uid.parentOrNull(subscription.uid) ?? subscription.uid
        return (yield* events.after(state.delivered === "" ? undefined : state.delivered, 1, group)).length > 0
      })

    const round = Effect.gen(function*() {
      const all = yield* subscriptions.find({ order: [{ column: "uid", direction: "asc" }] })
      yield* Effect.forEach(all, (subscription) =>
        Effect.gen(function*() {
          if (!(yield* due(subscription, Date.now()))) return
          const claimed = yield* claim(subscription, Date.now())
          if (claimed !== undefined) yield* deliver(subscription, claimed)
        }).pipe(
          Effect.catchAll((error) => Effect.logWarning("delivering failed", error))
        ), { concurrency: 8, discard: true })
    })

    // A round after each commit of this server, and at least every 200 ms for the others'.
    const woken = yield* events.wakeUps
    yield* round.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("a delivery round failed", cause)),
      Effect.zipRight(Effect.raceFirst(woken.take, Effect.sleep(options.interval ?? "200 millis"))),
      Effect.forever,
      Effect.forkScoped
    )
  }))
