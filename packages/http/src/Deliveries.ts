/**
 * Webhook deliveries (docs/api.md §12): every change-log entry of a subscription's group and of the groups below it,
 * POSTed to its sink as a CloudEvent 1.0 in binary mode, with a JWT of the server's own keys naming the subscription,
 * the event and the body's digest. Each subscription's entries go one at a time, in the log's order; a sink that
 * fails holds back only its own, retried with backoff (the same `ce-id`) until it answers 2xx or, after 24 hours, is
 * given up on.
 *
 * Each subscription has its own worker, so no sink, however slow, delays another subscription's deliveries. Workers
 * sleep until there is something to send: the log's tail (`Events`, one read per commit of this server and one per
 * poll for the others') hands each entry to the workers of the subscriptions it concerns and wakes them, and a retry
 * waits in its own worker's timer. Nothing is read for a subscription with nothing due, and a busy one reads the store
 * only to catch up: what comes while it delivers, the tail hands it.
 *
 * Any number of servers share the work through one row per subscription (`Subscription.deliveriesTable`): a server
 * delivers for a subscription only while it holds that row's lease, and records its progress there as it goes (one
 * write for all its subscriptions every few milliseconds, each delivery recorded before its subscription's next but
 * one is sent), so a server that dies makes the next holder send again at most the entry that was in flight and the
 * one before it. A server keeps its name across restarts (`holder`), so it
 * takes its own leases back at once.
 */
import type { ChangeLog } from "@arbor/core"
import {
  AuditTrail,
  Authorization,
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
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { createHash, randomUUID } from "node:crypto"
import { backoffMillis, cloudEvent } from "./internal/cloudEvents.js"
import { Feed } from "./internal/feed.js"
import * as Metrics from "./Metrics.js"

/** How long a lease on a subscription's deliveries lasts without being renewed (each recorded delivery renews it). */
const leaseMillis = 30_000

/** How long a worker keeps its lease after it has sent everything, for what may come next. */
const holdMillis = 2_000

/**
 * How long the progress writer gathers what deliveries note before it records it: a subscription sends its next entry
 * meanwhile, but not the one after, so this bounds one subscription's pace (about 500 deliveries a second).
 */
const gatherMillis = 2

/** After how long a delivery waiting for its sink's answer is recorded as in flight (`sendingSince`). */
const slowAfterMillis = 1_000

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

export { backoffMillis, cloudEvent } from "./internal/cloudEvents.js"

type State = Subscription.DeliveryState

type Failure = Errors.Internal | Errors.Unavailable | Errors.FailedPrecondition

/** The group whose entries (and those below it) `subscription` receives. */
const groupOf = (subscription: Subscription.Subscription) => Uid.parentOrNull(subscription.uid) ?? subscription.uid

/** What a look at a subscription's deliveries found: its lease taken, or when to look again (undefined: on a wake). */
type Claim = { readonly claimed: State } | { readonly lookAgainAt: number | undefined }

/** What wakes a subscription's worker: a wake-up, and the entries the tail found for it. */
interface Inbox {
  readonly wakes: Queue.Queue<void>
  readonly feed: Feed
}

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
    // A gate of `lookingAtOnce` tokens, taken first come, first served: a returned token wakes one waiting worker,
    // where a semaphore's release wakes every waiter to try again (thousands of them at start-up, each time).
    const gate = yield* Queue.bounded<void>(lookingAtOnce)
    yield* gate.offerAll(Array.from({ length: lookingAtOnce }, () => undefined))
    const looking = <A, E>(look: Effect.Effect<A, E>) =>
      Effect.acquireUseRelease(Queue.take(gate), () => look, () => Queue.offer(gate, undefined))

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
     * later; reads only unless it takes the lease (a subscription with nothing to deliver yet has no state written).
     */
    const claim = (subscription: Subscription.Subscription, now: number): Effect.Effect<Claim, Failure> =>
      Effect.gen(function*() {
        const current = Option.getOrUndefined(yield* states.get(subscription.uid))
        if (current !== undefined) {
          const later = notNow(current, now)
          if (later !== undefined) return { lookAgainAt: later }
        }
        const from = current?.delivered ?? (yield* subscriptionsService.start(subscription))
        if (!(yield* waiting(subscription, from))) {
          // A lease of ours from before a restart is handed back.
          if (current?.leaseOwner === me) yield* release(current)
          return { lookAgainAt: undefined }
        }
        return yield* Repository.orInternal(store.transaction(Effect.gen(function*() {
          const found = yield* states.get(subscription.uid)
          if (Option.isNone(found)) {
            const state: State = {
              uid: subscription.uid,
              delivered: from,
              leaseOwner: me,
              leaseUntil: now + leaseMillis,
              attempts: 0,
              retryAt: 0,
              failingSince: null,
              lastDelivered: null,
              lastError: null,
              stopped: null,
              sendingSince: null
            }
            // Another server inserting it at the same moment wins: a savepoint keeps the conflict from the rest.
            const inserted = yield* store.transaction(states.insert(state)).pipe(
              Effect.as(true),
              Effect.catchTag("UniqueViolation", () => Effect.succeed(false))
            )
            return inserted ? { claimed: state } : { lookAgainAt: now + 1_000 }
          }
          const latest = found.value
          const later = notNow(latest, now)
          if (later !== undefined) return { lookAgainAt: later }
          const state: State = { ...latest, leaseOwner: me, leaseUntil: now + leaseMillis }
          yield* states.update(state).pipe(Effect.orDie)
          return { claimed: state }
        })))
      })

    /**
     * Progress, recorded for every subscription by one writer: a worker notes each state it reaches, and the writer
     * records all the states noted since its last write in one transaction (one at a time, beside the deliveries), so
     * the writes follow the deliveries' pace without one commit per delivery. A state is recorded only while its
     * subscription's lease is this server's.
     */
    const noted = new Map<Uid.Uid, State>()
    /** The subscriptions whose lease another server was found to hold when their progress was recorded. */
    const lost = new Set<Uid.Uid>()
    let nextWrite = yield* Deferred.make<void, Failure>()
    const wakeWriter = yield* Queue.sliding<void>(1)
    const writer = Effect.gen(function*() {
      yield* Queue.take(wakeWriter)
      // What the deliveries of the next moment note is recorded with it.
      yield* Effect.sleep(gatherMillis)
      // A wake whose note the last write took: nothing to record.
      if (noted.size === 0) return
      // Taken at once (no other fiber runs in between): a state noted after this waits for the next write.
      const following = yield* Deferred.make<void, Failure>()
      const recording = [...noted.values()]
      noted.clear()
      const done = nextWrite
      nextWrite = following
      // Lazily committed: a database crash that loses the last moments of progress only has entries sent again.
      const written = Repository.orInternal(Store.lazyCommit(store.transaction(Effect.gen(function*() {
        const current = new Map(
          (yield* states.getMany(recording.map((state) => state.uid))).map((row) => [row.uid, row])
        )
        for (const next of recording) {
          if (current.get(next.uid)?.leaseOwner !== me) lost.add(next.uid)
          else yield* states.update(next).pipe(Effect.orDie)
        }
      }))))
      const outcome = yield* Effect.exit(written)
      if (Exit.isFailure(outcome)) {
        // Noted again, unless a later state has been noted meanwhile, and tried again in a moment (a defect too:
        // the writer never stops while the server runs).
        for (const state of recording) if (!noted.has(state.uid)) noted.set(state.uid, state)
        yield* Deferred.failCause(done, outcome.cause)
        yield* Effect.logWarning("recording deliveries' progress failed", outcome.cause)
        yield* Effect.sleep("1 second")
        yield* wakeWriter.offer(undefined)
      } else {
        yield* Deferred.succeed(done, undefined)
      }
    }).pipe(Effect.forever)

    /**
     * Notes `state` (its lease renewed) to be recorded with the next write; that write (for the worker to wait for
     * before its delivery after next), or undefined once its lease has been found lost.
     */
    const noting = (state: State) =>
      Effect.suspend(() => {
        if (lost.has(state.uid)) return Effect.succeed(undefined)
        noted.set(state.uid, { ...state, leaseOwner: me, leaseUntil: Date.now() + leaseMillis })
        const write = nextWrite
        return Effect.as(wakeWriter.offer(undefined), write)
      })

    /** Notes `state` as `noting` does; false once its lease has been found lost. */
    const mark = (state: State) => Effect.map(noting(state), (write) => write !== undefined)

    /** Notes `state` as it is and waits until it is recorded; false when its lease had been lost. */
    const flush = (state: State) =>
      Effect.suspend(() => {
        noted.set(state.uid, state)
        const write = nextWrite
        return Effect.zipRight(wakeWriter.offer(undefined), Deferred.await(write))
      }).pipe(Effect.as(Effect.sync(() => !lost.delete(state.uid))), Effect.flatten)

    /** Records `state` with the lease handed back. */
    const release = (state: State) => flush({ ...state, leaseOwner: null, leaseUntil: 0 })

    // Before any worker, so that it outlives them at shutdown, when they hand their leases back.
    yield* Effect.forkScoped(writer)

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
    const deliver = (subscription: Subscription.Subscription, claimed: State, { feed, wakes }: Inbox) => {
      let state = claimed
      const group = groupOf(subscription)
      const sink = new URL(subscription.sink)
      return Effect.gen(function*() {
        // Whether the log may hold more for it without a wake: after a full read.
        let more = true
        // The write that records the last entry delivered, waited for before the next but one is sent.
        let recording: Deferred.Deferred<void, Failure> | undefined
        // How many writes that may change its creator's authority the tail had found at the last check.
        let checked: number | undefined
        for (;;) {
          if (!more) {
            // Sent everything: the lease is kept a moment for what comes next (a busy subscription is not claimed
            // and released once per entry), then handed back. Where it got to is recorded meanwhile.
            if (!(yield* mark(state))) return undefined
            const woken = yield* Effect.raceFirst(
              Effect.as(Queue.take(wakes), true),
              Effect.as(Effect.sleep(holdMillis), false)
            )
            if (!woken) break
          }
          // A wake from before this read is answered by it.
          yield* Queue.takeAll(wakes)
          // What the tail handed over since the last read, unless the store may hold more (a full read before, or
          // entries the feed missed): then the store, with the feed listening from just before.
          const fed: ReadonlyArray<ChangeLog.Entry> | undefined = more ? undefined : feed.take(state.delivered)
          // No delivery outlives its creator's authority: while it no longer holds subscriptions.create at the
          // subscription's group, the subscription is stopped (its health says why) and resumes if it holds it again.
          // Checked before each read of the store, and before what the tail hands over whenever the tail has found a
          // write that may change it (`changesAuthority`) since the last check: the tail hands entries over in the
          // log's order, so such a write before them has been counted.
          const refused = fed !== undefined && checked === authorityChanges
            ? undefined
            : yield* Effect.zipRight(
              Effect.sync(() => checked = authorityChanges),
              subscriptionsService.refusal(subscription)
            )
          if (refused !== undefined) {
            if (state.stopped !== refused) {
              yield* Effect.logWarning(`a subscription's deliveries stopped: ${refused}`).pipe(
                Effect.annotateLogs({ subscription: state.uid })
              )
            }
            yield* flush({ ...state, stopped: refused, leaseOwner: null, leaseUntil: 0 })
            yield* measure(subscription, state.delivered)
            return undefined
          }
          if (state.stopped !== null) state = { ...state, stopped: null }
          if (fed === undefined) feed.listen()
          // A retry reads and signs only the entry it retries: a sink that keeps failing costs one entry's work a
          // retry, not a batch's (beside 100 sinks that never answer, a healthy subscription's lag would pay for it).
          const size = state.attempts > 0 ? 1 : batch
          const found: ReadonlyArray<ChangeLog.Entry> = fed ??
            (yield* events.after(state.delivered === "" ? undefined : state.delivered, size, group))
          more = fed === undefined && found.length === size
          // Embedded resources as the subscription's group may see them.
          const pending = yield* auditTrail.seenFrom(group, found)
          if (pending.length === 0) continue
          // Deliveries are signed a window at a time, the next window while this one is sent. (Their tokens last 5
          // minutes; one is sent at most two windows' worth of sink timeouts after it was signed.)
          const prepareWindow = (window: ReadonlyArray<ChangeLog.Entry>) =>
            Effect.forEach(window, (entry) =>
              // The subscription's own entries (its creation) are not sent to it.
              entry.subject === state.uid ? Effect.succeed(undefined) : prepare(state.uid, entry), {
              concurrency: Math.min(window.length, lookahead)
            })
          const windows = Arr.chunksOf(pending, lookahead)
          let prepared = yield* prepareWindow(windows[0]!)
          for (const [w, window] of windows.entries()) {
            const preparing = w + 1 < windows.length ? yield* Effect.fork(prepareWindow(windows[w + 1]!)) : undefined
            for (const [i, entry] of window.entries()) {
              const delivery = prepared[i]
              if (delivery === undefined) {
                state = { ...state, delivered: entry.position }
                continue
              }
              const now = Date.now()
              // Noted as in flight once the sink has been slow to answer for a second (its health says so).
              const sending = { ...state, sendingSince: now }
              const failure = yield* Effect.raceFirst(
                post(sink, delivery),
                Effect.zipRight(Effect.sleep(slowAfterMillis), Effect.zipRight(mark(sending), Effect.never))
              )
              state = { ...state, sendingSince: null }
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
                if (preparing !== undefined) yield* Fiber.interrupt(preparing)
                yield* flush({ ...state, leaseOwner: null, leaseUntil: 0 })
                yield* measure(subscription, state.delivered)
                return state.retryAt
              }
              // Recorded while the next is sent, and before the one after it: a crash sends again at most the entry
              // in flight and the one before it (the writer records every subscription's progress in one
              // transaction). Another server took the lease over (this one was too slow to renew it): it goes on
              // from here.
              const write = yield* noting(state)
              if (write === undefined) return undefined
              if (recording !== undefined) yield* Deferred.await(recording)
              if (lost.has(state.uid)) return undefined
              recording = write
            }
            if (preparing !== undefined) prepared = yield* Fiber.join(preparing)
          }
        }
        yield* flush({ ...state, leaseOwner: null, leaseUntil: 0 })
        yield* Metrics.recordPending(subscription.uid, 0)
        return undefined
      }).pipe(
        Effect.onInterrupt(() => Effect.ignore(release(state))),
        Effect.ensuring(Effect.sync(() => feed.stop()))
      )
    }

    /** Sets `subscription`'s pending deliveries gauge: the entries of its group and below after `delivered`. */
    const measure = (subscription: Subscription.Subscription, delivered: string) =>
      Effect.flatMap(
        subscriptionsService.pending(groupOf(subscription), delivered),
        (pending) => Metrics.recordPending(subscription.uid, pending)
      )

    /** Looks at `subscription`'s deliveries and sends what waits; when to look again without a wake, if ever. */
    const run = (subscription: Subscription.Subscription, inbox: Inbox) =>
      Effect.gen(function*() {
        const found = yield* looking(claim(subscription, Date.now()))
        if ("claimed" in found) lost.delete(subscription.uid)
        return "claimed" in found ? yield* deliver(subscription, found.claimed, inbox) : found.lookAgainAt
      })

    /**
     * A subscription's worker: sleeps until woken (an entry it may receive) or until the time it was told to look
     * again, then looks, one run at a time.
     */
    const worker = (subscription: Subscription.Subscription, inbox: Inbox) =>
      Effect.gen(function*() {
        let due = true
        let notBefore = 0
        for (;;) {
          for (;;) {
            const now = Date.now()
            if (due && now >= notBefore) break
            if (due) yield* Effect.sleep(notBefore - now)
            else {
              yield* Queue.take(inbox.wakes)
              due = true
            }
          }
          // A wake from before this run is answered by it.
          yield* Queue.takeAll(inbox.wakes)
          const next = yield* run(subscription, inbox).pipe(
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
    const workers = new Map<Uid.Uid, Inbox & { readonly fiber: Fiber.RuntimeFiber<never> }>()
    const byGroup = new Map<Uid.Uid, Set<Uid.Uid>>()
    const started = (subscription: Subscription.Subscription) =>
      Effect.gen(function*() {
        if (workers.has(subscription.uid)) return
        const inbox = { wakes: yield* Queue.sliding<void>(1), feed: new Feed() }
        const fiber = yield* Effect.forkIn(worker(subscription, inbox), scope)
        workers.set(subscription.uid, { ...inbox, fiber })
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
        lost.delete(uid)
        yield* Metrics.recordPending(uid, 0)
      })
    /** Hands `entry` to the workers of the subscriptions of its group and of the groups above it, and wakes them. */
    const hand = (entry: ChangeLog.Entry) => {
      for (let at: Uid.Uid | null = entry.group; at !== null; at = Uid.parentOrNull(at)) {
        byGroup.get(at)?.forEach((uid) => {
          const inbox = workers.get(uid)
          inbox?.feed.push(entry)
          inbox?.wakes.unsafeOffer(undefined)
        })
      }
    }
    const types = Subscription.table.events!.types
    /** How many writes that may change a subscription's creator's authority the tail has found. */
    let authorityChanges = 0
    const dispatch = (entries: Events.Batch) =>
      Effect.forEach(entries, (entry) =>
        Effect.gen(function*() {
          if (entry.type === types.created) {
            const created = yield* subscriptions.get(entry.subject)
            if (Option.isSome(created)) yield* started(created.value)
          } else if (entry.type === types.deleted) {
            yield* stopped(entry.subject)
          }
          if (Authorization.changesAuthority(entry.kind)) authorityChanges++
          hand(entry)
        }), { discard: true })

    // Follow the log from its end as it is now, then start a worker for each subscription: one created meanwhile
    // arrives as an entry too. Should following fail, it starts again from the log's end, and every worker looks.
    const follow = (position: string | undefined) =>
      events.batches(position).pipe(
        Stream.runForEach(dispatch),
        Effect.catchAllCause((cause) => Effect.logWarning("following the change log for deliveries failed", cause))
      )
    const again = Effect.sleep("1 second").pipe(
      Effect.zipRight(Effect.orDie(events.latest)),
      // Every worker looks, and what the tail handed over so far no longer counts as complete: following again starts
      // after what a read of the store from now on finds.
      Effect.tap(() =>
        Effect.sync(() =>
          workers.forEach(({ feed, wakes }) => {
            feed.stop()
            wakes.unsafeOffer(undefined)
          })
        )
      ),
      Effect.flatMap(follow)
    )
    yield* Effect.forkScoped(Effect.zipRight(follow(yield* events.latest), Effect.forever(again)))
    yield* Effect.forEach(yield* subscriptions.find({ order: [{ column: "uid", direction: "asc" }] }), started, {
      discard: true
    })
  }))
