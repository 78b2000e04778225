/**
 * Webhook deliveries (docs/api.md §12): every change-log entry of a subscription's group and of the groups below it,
 * POSTed to its sink as a CloudEvent 1.0 in binary mode, with a JWT of the server's own keys naming the subscription,
 * the event and the body's digest. Each subscription's entries go one at a time, in the log's order; a sink that
 * fails holds back only its own, retried with backoff (the same `ce-id`) until it answers 2xx or, after 24 hours, is
 * given up on.
 *
 * Each subscription has its own worker, so no sink, however slow, delays another subscription's deliveries. Workers
 * sleep until there is something to send: the log's tail (`Events`, one read per commit of this server and one per
 * poll for the others') wakes the workers of the subscriptions an entry concerns, and a retry waits in its own
 * worker's timer. Nothing is read for a subscription with nothing due.
 *
 * Any number of servers share the work through one row per subscription (`Subscription.deliveriesTable`): a server
 * delivers for a subscription only while it holds that row's lease, and records its progress there as it goes (one
 * write at a time, beside the next delivery), so a server that dies makes the next holder send again only the entries
 * of its last moments. A server keeps its name across restarts (`holder`), so it takes its own leases back at once.
 */
import * as Wire from "@arbor/api/Wire"
import type { ChangeLog } from "@arbor/core"
import {
  AuditTrail,
  Egress,
  type Errors,
  Events,
  Repository,
  Store,
  Subscription,
  Subscriptions,
  TokenIssuer,
  Uid
} from "@arbor/core"
import { CloudEvent, HTTP } from "cloudevents"
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { createHash, randomUUID } from "node:crypto"
import * as Metrics from "./Metrics.js"

/** How long a lease on a subscription's deliveries lasts without being renewed (each recorded delivery renews it). */
const leaseMillis = 30_000

/** How long a worker keeps its lease after it has sent everything, for what may come next. */
const holdMillis = 2_000

/** How many deliveries are signed at once, ahead of sending them. */
const lookahead = 8

/** How many entries a worker reads from the log at once. */
const batch = 100

/** How many workers look at the store at once to see whether they have something to send (at start-up: all). */
const lookingAtOnce = 4

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

/** One entry as its delivery: the CloudEvent's headers and body, and its time as `ce-time` gives it. */
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
  const fields = Object.fromEntries(named)
  return { headers: fields, body: String(body), time: fields["ce-time"] ?? wire.time }
}

type State = Subscription.DeliveryState

type Failure = Errors.Internal | Errors.FailedPrecondition

/** The group whose entries (and those below it) `subscription` receives. */
const groupOf = (subscription: Subscription.Subscription) => Uid.parentOrNull(subscription.uid) ?? subscription.uid

/** What a look at a subscription's deliveries found: its lease taken, or when to look again (undefined: on a wake). */
type Claim = { readonly claimed: State } | { readonly lookAgainAt: number | undefined }

/** Delivers every subscription's entries, from this server as one of any number. */
export const layer = (options: {
  /** The server's base URL: each CloudEvent's `source`. */
  readonly source: string
  /** Sinks on loopback, over http too (`ARBOR_ALLOW_INSECURE_SINKS=loopback`). */
  readonly allowLoopback: boolean
  /**
   * This server's name as a lease holder, the same across its restarts and different from every other server's
   * sharing the store (the standalone server's: its host name and address). Random when not given: a restarted
   * server then waits for its old leases to expire.
   */
  readonly holder?: string
}) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const store = yield* Store.Store
    const events = yield* Events.Events
    const auditTrail = yield* AuditTrail.AuditTrail
    const subscriptionsService = yield* Subscriptions.Subscriptions
    const tokens = yield* TokenIssuer.TokenIssuer
    const send = Egress.makeSender(yield* Egress.Resolver, options.allowLoopback, { keepAlive: true, timeout })
    const states = yield* Repository.make(Subscription.deliveriesTable, Subscription.DeliveryState)
    const subscriptions = yield* Repository.make(Subscription.table, Subscription.Subscription)
    const me = options.holder ?? randomUUID()
    const looking = yield* Effect.makeSemaphore(lookingAtOnce)

    /** Whether entries of `subscription`'s group wait after `delivered`: reads only. */
    const waiting = (subscription: Subscription.Subscription, delivered: string) =>
      Effect.map(
        events.after(delivered === "" ? undefined : delivered, 1, groupOf(subscription)),
        (found) => found.length > 0
      )

    /**
     * When to look again, should `current` keep this server from delivering now: another server's lease (when it would
     * run out, should that server have died) or a retry due later.
     */
    const notNow = (current: State, now: number): number | undefined =>
      current.leaseOwner !== null && current.leaseOwner !== me && current.leaseUntil > now
        ? current.leaseUntil + Math.random() * 1_000
        : current.retryAt > now
        ? current.retryAt
        : undefined

    /**
     * Takes the lease on `subscription`'s deliveries when something waits, nobody else holds it and no retry is due
     * later; reads only unless it takes the lease.
     */
    const claim = (subscription: Subscription.Subscription, now: number): Effect.Effect<Claim, Failure> =>
      Effect.gen(function*() {
        const found = yield* states.get(subscription.uid)
        if (Option.isSome(found)) {
          const current = found.value
          const later = notNow(current, now)
          if (later !== undefined) return { lookAgainAt: later }
          if (!(yield* waiting(subscription, current.delivered))) {
            // A lease of ours from before a restart is handed back.
            if (current.leaseOwner === me) yield* release(current)
            return { lookAgainAt: undefined }
          }
        }
        return yield* Repository.orInternal(store.transaction(Effect.gen(function*() {
          const found = yield* states.get(subscription.uid)
          if (Option.isNone(found)) {
            const state: State = {
              uid: subscription.uid,
              delivered: yield* subscriptionsService.start(subscription),
              leaseOwner: me,
              leaseUntil: now + leaseMillis,
              attempts: 0,
              retryAt: 0,
              failingSince: null,
              lastDelivered: null,
              lastError: null,
              stopped: null
            }
            // Another server inserting it at the same moment wins: a savepoint keeps the conflict from the rest.
            const inserted = yield* store.transaction(states.insert(state)).pipe(
              Effect.as(true),
              Effect.catchTag("UniqueViolation", () => Effect.succeed(false))
            )
            return inserted ? { claimed: state } : { lookAgainAt: now + 1_000 }
          }
          const current = found.value
          const later = notNow(current, now)
          if (later !== undefined) return { lookAgainAt: later }
          const state: State = { ...current, leaseOwner: me, leaseUntil: now + leaseMillis }
          yield* states.update(state).pipe(Effect.orDie)
          return { claimed: state }
        })))
      })

    /** Records `next` if the lease is still ours; false when another server has taken it over. */
    const record = (next: State) =>
      Repository.orInternal(store.transaction(Effect.gen(function*() {
        const found = yield* states.get(next.uid)
        if (Option.isNone(found) || found.value.leaseOwner !== me) return false
        yield* states.update(next).pipe(Effect.orDie)
        return true
      })))

    /** Records `state` with the lease handed back. */
    const release = (state: State) => record({ ...state, leaseOwner: null, leaseUntil: 0 })

    /**
     * Progress recorded as deliveries succeed, one write at a time beside the next delivery: `mark` notes a state
     * (written now when no write is under way, else with the next mark or `flush`); false once the lease is lost.
     */
    const progress = () => {
      let writing: Fiber.RuntimeFiber<boolean, Failure> | undefined
      let unwritten: State | undefined
      const written = Effect.suspend(() => writing === undefined ? Effect.succeed(true) : Fiber.join(writing))
      const mark = (state: State) =>
        Effect.gen(function*() {
          unwritten = state
          if (writing !== undefined) {
            const done = yield* Fiber.poll(writing)
            if (Option.isNone(done)) return true
            if (!(yield* written)) return false
          }
          const next = { ...unwritten, leaseOwner: me, leaseUntil: Date.now() + leaseMillis }
          unwritten = undefined
          writing = yield* Effect.fork(record(next))
          return true
        })
      /** Waits for the write under way, then records `state`. */
      const flush = (state: State) => Effect.zipRight(written, record(state))
      return { mark, flush }
    }

    /**
     * Entries made into CloudEvents, by id: an entry goes to every subscription of its group and above, and is made
     * once for all of them (but for one whose body is rendered for each subscription's group). Emptied when full.
     */
    const made = new Map<string, ReturnType<typeof cloudEvent> & { readonly digest: string }>()
    const eventOf = (entry: ChangeLog.Entry) => {
      const shared = !AuditTrail.rendersPerReader(entry)
      const known = shared ? made.get(entry.id) : undefined
      if (known !== undefined) return known
      const event = cloudEvent(entry, options.source)
      const result = { ...event, digest: `sha256:${createHash("sha256").update(event.body).digest("hex")}` }
      if (shared) {
        if (made.size >= 4096) made.clear()
        made.set(entry.id, result)
      }
      return result
    }

    /** One entry's delivery to `subscription`, ready to send: the CloudEvent with its signed token. */
    const prepare = (subscription: Uid.Uid, entry: ChangeLog.Entry) =>
      Effect.gen(function*() {
        const { body, digest, headers, time } = eventOf(entry)
        const token = yield* tokens.signDelivery({
          subscription,
          id: entry.id,
          type: entry.type,
          subject: entry.subject,
          group: entry.group,
          time,
          digest
        })
        return { method: "POST", headers: { ...headers, authorization: `Bearer ${token}` }, body }
      })

    /** POSTs one prepared delivery; why it failed, or undefined. */
    const post = (sink: URL, delivery: Effect.Effect.Success<ReturnType<typeof prepare>>) =>
      send(sink, delivery).pipe(
        Effect.map((status) => status >= 200 && status < 300 ? undefined : `the sink answered ${status}`),
        Effect.catchAll((error) => Effect.succeed(`${error}`))
      )

    /**
     * Delivers what `subscription` has waiting, in order, while its lease holds and its sink answers, then hands the
     * lease back; when to look again (a retry), or undefined. Interrupted, it records where it got to.
     */
    const deliver = (subscription: Subscription.Subscription, claimed: State, wakes: Queue.Dequeue<void>) => {
      let state = claimed
      const recorded = progress()
      const group = groupOf(subscription)
      const sink = new URL(subscription.sink)
      return Effect.gen(function*() {
        for (;;) {
          // No delivery outlives its creator's authority: while it no longer holds subscriptions.create at the
          // subscription's group, the subscription is stopped (its health says why) and resumes if it holds it again.
          const refused = yield* subscriptionsService.refusal(subscription)
          if (refused !== undefined) {
            if (state.stopped !== refused) {
              yield* Effect.logWarning(`a subscription's deliveries stopped: ${refused}`).pipe(
                Effect.annotateLogs({ subscription: state.uid })
              )
            }
            yield* recorded.flush({ ...state, stopped: refused, leaseOwner: null, leaseUntil: 0 })
            yield* measure(subscription, state.delivered)
            return undefined
          }
          if (state.stopped !== null) state = { ...state, stopped: null }
          const pending = yield* events.after(state.delivered === "" ? undefined : state.delivered, batch, group).pipe(
            // Embedded resources as the subscription's group may see them.
            Effect.flatMap((found) => auditTrail.seenFrom(group, found))
          )
          if (pending.length === 0) {
            // Sent everything: where it got to is recorded, and the lease kept a moment for what comes next (a busy
            // subscription is not claimed and released once per entry), then handed back.
            if (!(yield* recorded.flush({ ...state, leaseOwner: me, leaseUntil: Date.now() + leaseMillis }))) {
              return undefined
            }
            const woken = yield* Effect.raceFirst(
              Effect.as(Queue.take(wakes), true),
              Effect.as(Effect.sleep(holdMillis), false)
            )
            if (!woken) break
            yield* Queue.takeAll(wakes)
            continue
          }
          // Deliveries are signed a window at a time, the next window while this one is sent. (Their tokens last 5
          // minutes; one is sent at most two windows' worth of sink timeouts after it was signed.)
          const prepareWindow = (window: ReadonlyArray<ChangeLog.Entry>) =>
            Effect.forEach(window, (entry) =>
              // The subscription's own entries (its creation) are not sent to it.
              entry.subject === state.uid ? Effect.succeed(undefined) : prepare(state.uid, entry), {
              concurrency: lookahead
            })
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
                state = {
                  ...state,
                  delivered: entry.position,
                  attempts: 0,
                  retryAt: 0,
                  failingSince: null,
                  lastDelivered: Date.now(),
                  lastError: null
                }
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
                  failingSince: state.failingSince ?? now,
                  lastError: failure
                }
                yield* Fiber.interrupt(preparing)
                yield* recorded.flush({ ...state, leaseOwner: null, leaseUntil: 0 })
                yield* measure(subscription, state.delivered)
                return state.retryAt
              }
              // Another server took the lease over (this one was too slow to renew it): it goes on from here.
              if (!(yield* recorded.mark(state))) return undefined
            }
          }
        }
        yield* recorded.flush({ ...state, leaseOwner: null, leaseUntil: 0 })
        yield* Metrics.recordPending(subscription.uid, 0)
        return undefined
      }).pipe(
        Effect.onInterrupt(() => Effect.ignore(release(state)))
      )
    }

    /** Sets `subscription`'s pending deliveries gauge: the entries of its group and below after `delivered`. */
    const measure = (subscription: Subscription.Subscription, delivered: string) =>
      Effect.flatMap(
        subscriptionsService.pending(groupOf(subscription), delivered),
        (pending) => Metrics.recordPending(subscription.uid, pending)
      )

    /** Looks at `subscription`'s deliveries and sends what waits; when to look again without a wake, if ever. */
    const run = (subscription: Subscription.Subscription, wakes: Queue.Dequeue<void>) =>
      Effect.gen(function*() {
        const found = yield* looking.withPermits(1)(claim(subscription, Date.now()))
        return "claimed" in found ? yield* deliver(subscription, found.claimed, wakes) : found.lookAgainAt
      })

    /**
     * A subscription's worker: sleeps until woken (an entry it may receive) or until the time it was told to look
     * again, then looks, one run at a time.
     */
    const worker = (subscription: Subscription.Subscription, wakes: Queue.Dequeue<void>) =>
      Effect.gen(function*() {
        let due = true
        let notBefore = 0
        for (;;) {
          for (;;) {
            const now = Date.now()
            if (due && now >= notBefore) break
            if (due) yield* Effect.sleep(notBefore - now)
            else {
              yield* Queue.take(wakes)
              due = true
            }
          }
          // A wake from before this run is answered by it.
          yield* Queue.takeAll(wakes)
          const next = yield* run(subscription, wakes).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning("delivering failed", cause), Date.now() + 1_000 + Math.random() * 4_000)
            )
          )
          due = next !== undefined
          notBefore = next ?? 0
        }
      })

    // The workers of this server, and which subscriptions each group's entries wake.
    const scope = yield* Effect.scope
    const workers = new Map<Uid.Uid, { readonly fiber: Fiber.RuntimeFiber<never>; readonly wakes: Queue.Queue<void> }>()
    const byGroup = new Map<Uid.Uid, Set<Uid.Uid>>()
    const started = (subscription: Subscription.Subscription) =>
      Effect.gen(function*() {
        if (workers.has(subscription.uid)) return
        const wakes = yield* Queue.sliding<void>(1)
        const fiber = yield* Effect.forkIn(worker(subscription, wakes), scope)
        workers.set(subscription.uid, { fiber, wakes })
        const group = groupOf(subscription)
        byGroup.set(group, (byGroup.get(group) ?? new Set()).add(subscription.uid))
      })
    const stopped = (uid: Uid.Uid) =>
      Effect.gen(function*() {
        const running = workers.get(uid)
        if (running === undefined) return
        workers.delete(uid)
        const group = Uid.parentOrNull(uid) ?? uid
        byGroup.get(group)?.delete(uid)
        if (byGroup.get(group)?.size === 0) byGroup.delete(group)
        yield* Fiber.interrupt(running.fiber)
        yield* Metrics.recordPending(uid, 0)
      })
    /** Wakes the workers of the subscriptions of `group` and of the groups above it. */
    const wake = (group: Uid.Uid) => {
      for (let at: Uid.Uid | null = group; at !== null; at = Uid.parentOrNull(at)) {
        byGroup.get(at)?.forEach((uid) => workers.get(uid)?.wakes.unsafeOffer(undefined))
      }
    }
    const types = Subscription.table.events!.types
    const dispatch = (entries: Events.Batch) =>
      Effect.forEach(entries, (entry) =>
        Effect.gen(function*() {
          if (entry.type === types.created) {
            const created = yield* subscriptions.get(entry.subject)
            if (Option.isSome(created)) yield* started(created.value)
          } else if (entry.type === types.deleted) {
            yield* stopped(entry.subject)
          }
          wake(entry.group)
        }), { discard: true })

    // Follow the log from its end as it is now, then start a worker for each subscription: one created meanwhile
    // arrives as an entry too. Should following fail, it starts again from the log's end, and every worker looks.
    const follow = (position: string | undefined) =>
      events.batches(position).pipe(
        Stream.runForEach(dispatch),
        Effect.catchAllCause((cause) => Effect.logWarning("following the change log for deliveries failed", cause))
      )
    const again = Effect.sleep("1 second").pipe(
      Effect.zipRight(Effect.sync(() => workers.forEach(({ wakes }) => wakes.unsafeOffer(undefined)))),
      Effect.zipRight(Effect.flatMap(Effect.orDie(events.latest), follow))
    )
    yield* Effect.forkScoped(Effect.zipRight(follow(yield* events.latest), Effect.forever(again)))
    yield* Effect.forEach(yield* subscriptions.find({ order: [{ column: "uid", direction: "asc" }] }), started, {
      discard: true
    })
  }))
