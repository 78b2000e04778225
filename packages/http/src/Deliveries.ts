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
import { CloudEvent, HTTP } from "cloudevents"
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { createHash, randomUUID } from "node:crypto"
import * as Metrics from "./Metrics.js"

/** How long a lease on a subscription's deliveries lasts without being renewed. */
const leaseMillis = 30_000

/** How many deliveries are signed at once, ahead of sending them. */
const lookahead = 8

/** How often the pending deliveries of each subscription are counted (`arbor_webhook_deliveries_pending`). */
const pendingInterval = Duration.seconds(15)

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
    const send = Egress.makeSender(yield* Egress.Resolver, options.allowLoopback, { keepAlive: true, timeout })
    const states = yield* Repository.make(Subscription.deliveriesTable, Subscription.DeliveryState)
    const subscriptions = yield* Repository.make(Subscription.table, Subscription.Subscription)
    const log = yield* Repository.make(ChangeLog.table, ChangeLog.Record)
    /** This server, as a lease holder. */
    const me = randomUUID()

    /** Where a new subscription starts: after its own creation's entry (or, were that pruned, at the log's start). */
    const start = (subscription: Subscription.Subscription) =>
      Effect.map(
        log.find({
          conditions: [{ _tag: "Equals", column: "subject", value: subscription.uid }],
          order: [{ column: "position", direction: "asc" }, { column: "uid", direction: "asc" }],
          limit: 1
        }),
        ([created]) => created?.position ?? ""
      )

    /** Takes the lease on `subscription`'s deliveries when nobody else holds it and no retry is waiting. */
    const claim = (subscription: Subscription.Subscription, now: number) =>
      Repository.orInternal(store.transaction(Effect.gen(function*() {
        const found = yield* states.get(subscription.uid)
        if (Option.isNone(found)) {
          const state: State = {
            uid: subscription.uid,
            delivered: yield* start(subscription),
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

    /** One entry's delivery, ready to send: the CloudEvent with its signed token. */
    const prepare = (entry: ChangeLog.Entry) =>
      Effect.gen(function*() {
        const { body, headers } = cloudEvent(entry, options.source)
        const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`
        const token = yield* tokens.signDelivery(entry.group, digest)
        return { method: "POST", headers: { ...headers, authorization: `Bearer ${token}` }, body }
      })

    /** POSTs one prepared delivery; why it failed, or undefined. */
    const post = (sink: URL, delivery: Effect.Effect.Success<ReturnType<typeof prepare>>) =>
      send(sink, delivery).pipe(
        Effect.map((status) => status >= 200 && status < 300 ? undefined : `the sink answered ${status}`),
        Effect.catchAll((error) => Effect.succeed(`${error}`))
      )

    /** Delivers what `subscription` has waiting, in order, while its lease holds and its sink answers. */
    const deliver = (subscription: Subscription.Subscription, claimed: State) =>
      Effect.gen(function*() {
        let state = claimed
        const group = Uid.parentOrNull(subscription.uid) ?? subscription.uid
        const sink = new URL(subscription.sink)
        for (;;) {
          const pending = yield* events.after(state.delivered === "" ? undefined : state.delivered, 100, group)
          if (pending.length === 0) break
          // Deliveries are signed a window at a time, the next window while this one is sent. (Their tokens last 5
          // minutes; one is sent at most two windows' worth of sink timeouts after it was signed.)
          const prepareWindow = (window: ReadonlyArray<ChangeLog.Entry>) =>
            Effect.forEach(window, (entry) =>
              // The subscription's own entries (its creation) are not sent to it.
              entry.subject === state.uid ? Effect.succeed(undefined) : prepare(entry), { concurrency: lookahead })
          const windows = Arr.chunksOf(pending, lookahead)
          let preparing = yield* Effect.fork(prepareWindow(windows[0]!))
          for (const [w, window] of windows.entries()) {
            const prepared = yield* Fiber.join(preparing)
            if (w + 1 < windows.length) preparing = yield* Effect.fork(prepareWindow(windows[w + 1]!))
            for (const [i, entry] of window.entries()) {
              const delivery = prepared[i]
              if (delivery === undefined) {
                state = { ...state, delivered: entry.position }
                continue
              }
              const now = Date.now()
              const failure = yield* post(sink, delivery)
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
          if (claimed !== undefined) yield* Effect.zipRight(deliver(subscription, claimed), measure(subscription))
        }).pipe(
          Effect.catchAll((error) => Effect.logWarning("delivering failed", error))
        ), { concurrency: 8, discard: true })
    })

    /** Sets `subscription`'s pending deliveries gauge: the entries of its group and below after the last delivered. */
    const measure = (subscription: Subscription.Subscription) =>
      Effect.gen(function*() {
        const state = yield* states.get(subscription.uid)
        const delivered = Option.isSome(state) ? state.value.delivered : yield* start(subscription)
        const within = { ranges: [Uid.descendants(Uid.parentOrNull(subscription.uid) ?? subscription.uid)] }
        // The entries at or after the last one delivered, less that one.
        const pending = delivered === "" ? yield* log.count(within) : (yield* log.count({
          ...within,
          conditions: [{ _tag: "AtLeast", column: "position", value: delivered }]
        })) - (yield* log.count({ ...within, conditions: [{ _tag: "Equals", column: "position", value: delivered }] }))
        yield* Metrics.recordPending(subscription.uid, pending)
      })

    /**
     * Measures every subscription, also those whose deliveries wait for a retry; a deleted subscription's gauge is
     * set to 0 once.
     */
    const reported = new Set<Uid.Uid>()
    const measureAll = Effect.gen(function*() {
      const all = yield* subscriptions.find({ order: [{ column: "uid", direction: "asc" }] })
      for (const subscription of all) {
        yield* measure(subscription)
        reported.add(subscription.uid)
      }
      const current = new Set(all.map((s) => s.uid))
      for (const uid of [...reported].filter((uid) => !current.has(uid))) {
        yield* Metrics.recordPending(uid, 0)
        reported.delete(uid)
      }
    })
    yield* measureAll.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("measuring pending deliveries failed", cause)),
      Effect.repeat(Schedule.spaced(pendingInterval)),
      Effect.forkScoped
    )

    // A round after each commit of this server, and at least every 200 ms for the others'.
    const woken = yield* events.wakeUps
    yield* round.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("a delivery round failed", cause)),
      Effect.zipRight(Effect.raceFirst(woken.take, Effect.sleep(options.interval ?? "200 millis"))),
      Effect.forever,
      Effect.forkScoped
    )
  }))
