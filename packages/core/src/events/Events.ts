/**
 * Following the change log in process: every committed write's entries, from this process and from every other
 * sharing the store, in the log's order, so embedders can react (invalidate caches, audit, replicate).
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import * as Errors from "../engine/Errors.js"
import * as Repository from "../engine/Repository.js"
import { Store } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as ChangeLog from "./ChangeLog.js"

/** How many entries one read of the log returns at most. */
const batch = 500

/** How often a follower looks for other processes' entries when this one has written nothing. */
const pollInterval = Duration.millis(200)

/**
 * How often followers are handed an empty batch, whatever the log holds, so that a reader can tell a quiet log from a
 * broken link (the watch stream's keep-alive comments).
 */
export class Heartbeat extends Context.Reference<Heartbeat>()("@arbor/core/Events/Heartbeat", {
  defaultValue: (): Duration.Duration => Duration.seconds(15)
}) {}

/** A batch of entries, in the log's order; empty, a heartbeat. */
export type Batch = ReadonlyArray<ChangeLog.Entry>

/** Where a follower's batches go (`Events.relay`). */
export interface Receiver<E> {
  /**
   * Called by the tail reader with a batch: true when taken; false to decline it, and have it (and what follows)
   * handed to `take` instead from the follower's own fiber. It must return at once and not throw.
   */
  readonly offer: (batch: Batch) => boolean
  /** Takes a batch in the follower's own fiber, waiting while the receiver can take no more. */
  readonly take: (batch: Batch) => Effect.Effect<void, E>
}

/** How many batches the tail keeps for a follower while it catches up; beyond, it catches up again from the store. */
const maxPending = 64

/** How many batches a stream of them holds for its reader before the follower waits. */
const streamBuffer = 16

/** A stream of the batches a relay hands over (`Events.relay` with a receiver that queues them). */
export const streamOf = <E>(
  relaying: (receiver: Receiver<never>) => Effect.Effect<never, E>
): Stream.Stream<Batch, E> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(Queue.bounded<Take.Take<Batch, E>>(streamBuffer), Queue.shutdown)
    yield* relaying({
      offer: (batch) => queue.unsafeOffer(Take.of(batch)),
      take: (batch) => Queue.offer(queue, Take.of(batch))
    }).pipe(
      Effect.catchAllCause((cause) => Queue.offer(queue, Take.failCause(cause))),
      Effect.forkScoped
    )
    return Stream.flattenTake(Stream.fromQueue(queue))
  }))

/** Builds the Events service from the services in its context; what it holds is released with the scope. */
export const make = Effect.gen(function*() {
  const store = yield* Store
  const entries = yield* Repository.make(ChangeLog.table, ChangeLog.Record)
  const commits = yield* Effect.acquireRelease(PubSub.sliding<void>(1), PubSub.shutdown)
  const heartbeat = Duration.toMillis(yield* Heartbeat)

  /** Below which position every entry is final: no transaction that could still add one below it runs. */
  const settledPosition = Repository.orInternal(store.settledPosition)

  /** Fails when entries after `position` have been pruned: a reader going on from it would miss them. */
  const stillHeld = (position: string) =>
    Effect.flatMap(
      Repository.orInternal(ChangeLog.prunedThrough(store)),
      (pruned) =>
        pruned === undefined || position >= pruned ? Effect.void : Effect.fail(
          new Errors.FailedPrecondition({
            summary: "entries after this cursor were pruned",
            reason: "CURSOR_PRUNED",
            violations: [
              new Errors.PreconditionViolation({
                type: "CURSOR_PRUNED",
                subject: position,
                description: "the change log no longer holds the entries after this cursor: list them from a time " +
                  "(since=) instead, or watch from now on"
              })
            ]
          })
        )
    )

  /**
   * Up to `limit` final entries after `position` (from the first when undefined), in the log's order, of the group
   * `within` and the groups below it when given; when entries after `position` have been pruned,
   * `FailedPrecondition` rather than a gap.
   */
  const after = (position: string | undefined, limit: number = batch, within?: Uid.Uid) =>
    Effect.gen(function*() {
      if (position !== undefined) yield* stillHeld(position)
      const settled = yield* settledPosition
      const records = yield* entries.find({
        // An entry's uid lies below its group: the entries of a group and of the groups below it.
        ...(within === undefined ? {} : { ranges: [Uid.descendants(within)] }),
        conditions: [
          ...(position === undefined ? [] : [{ _tag: "AtLeast", column: "position", value: position } as const]),
          ...(settled === undefined ? [] : [{ _tag: "Below", column: "position", value: settled } as const])
        ],
        order: [{ column: "position", direction: "asc" }, { column: "uid", direction: "asc" }],
        limit: limit + 1
      })
      return records.filter((r) => r.position !== position).slice(0, limit).map(ChangeLog.fromRecord)
    })

  /** The position of the last final entry, or undefined when the log is empty. */
  const lastBelow = (settled: string | undefined) =>
    Effect.map(
      entries.find({
        conditions: settled === undefined ? [] : [{ _tag: "Below", column: "position", value: settled }],
        order: [{ column: "position", direction: "desc" }, { column: "uid", direction: "desc" }],
        limit: 1
      }),
      ([last]) => last?.position
    )
  const latest = Effect.flatMap(settledPosition, lastBelow)

  /**
   * The log's end as of now: the position of the last final entry, and those of the entries committed after it that
   * are not final yet (an older transaction still runs), which a reader starting here must not be shown either.
   */
  const now = Effect.gen(function*() {
    const settled = yield* settledPosition
    const position = yield* lastBelow(settled)
    const committed = settled === undefined ? [] : yield* entries.find({
      conditions: [{ _tag: "AtLeast", column: "position", value: settled }],
      order: [{ column: "position", direction: "asc" }, { column: "uid", direction: "asc" }]
    })
    return { position, committed: new Set(committed.map((r) => r.position)) }
  })

  /**
   * The tail of the log: one reader per process finds the entries as they become final (at once after this
   * process commits, within `pollInterval` of another's) and hands each batch to every follower's receiver in
   * turn, without waking a fiber per follower: a hundred followers cost one read a commit and a hundred calls.
   * Every `Heartbeat` it hands them an empty batch.
   */
  const receivers = new Set<(batch: Batch, from: string | undefined) => void>()
  /** Hands `batch`, the entries after `from` (all of them), to every follower. */
  const handOut = (batch: Batch, from: string | undefined) =>
    Effect.sync(() => receivers.forEach((receive) => receive(batch, from)))
  let tailCursor: string | undefined
  const reading = Effect.gen(function*() {
    const woken = yield* PubSub.subscribe(commits)
    let beaten = yield* Clock.currentTimeMillis
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      if (now - beaten >= heartbeat) {
        beaten = now
        yield* handOut([], tailCursor)
      }
      const found = yield* after(tailCursor)
      if (found.length > 0) {
        const from = tailCursor
        tailCursor = found[found.length - 1]!.position
        yield* handOut(found, from)
      } else {
        yield* Effect.raceFirst(woken.take, Effect.sleep(pollInterval))
      }
    }
  }).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("reading the change log's tail failed", cause)),
    Effect.repeat(Schedule.spaced(pollInterval)),
    Effect.scoped
  )
  // The tail is read only while someone follows: the first follower starts it, the last one stops it.
  const scope = yield* Effect.scope
  const followers = { count: 0, reader: undefined as Fiber.RuntimeFiber<unknown> | undefined }
  const guard = yield* Effect.makeSemaphore(1)
  const joined = guard.withPermits(1)(Effect.gen(function*() {
    if (followers.count === 0) {
      // The tail starts at the log's end as it is now: followers catch up to it from the store themselves.
      tailCursor = yield* latest
      followers.reader = yield* Effect.forkIn(Effect.interruptible(reading), scope)
    }
    followers.count++
  }))
  const left = guard.withPermits(1)(
    Effect.suspend(() =>
      --followers.count === 0 && followers.reader !== undefined ? Fiber.interrupt(followers.reader) : Effect.void
    )
  )

  /**
   * Hands `receiver` every entry after `position` (from now on when undefined), in batches, in the log's order,
   * each entry once, and an empty batch every `Heartbeat` while it keeps up; runs until interrupted.
   *
   * While the receiver keeps up, the tail reader offers it each batch. When it declines one (it is behind, or must
   * read something first), the follower catches up from the store from its cursor in its own fiber, handing batches
   * to `take`, which may wait, and then goes back to the tail. The log is the buffer: a slow receiver costs no
   * memory here and misses nothing.
   */
  const relay = <E>(position: string | undefined, receiver: Receiver<E>) =>
    Effect.scoped(Effect.gen(function*() {
      yield* Effect.acquireRelease(joined, () => left)
      // Without a position, from the log's end as of now (the tail may not have read the newest commits yet): the
      // last final entry, and the entries already committed after it, which are skipped when they become final.
      const end = position === undefined ? yield* now : { position, committed: new Set<string>() }
      let cursor = end.position
      // The batch itself when all of it is new: whoever makes it into something once (a message) can reuse that.
      const fresh = (batch: Batch) =>
        end.committed.size === 0 && (cursor === undefined || batch[0]!.position > cursor) ?
          batch :
          batch.filter((e) => (cursor === undefined || e.position > cursor) && !end.committed.has(e.position))
      const state = {
        live: false,
        pending: [] as Array<{ readonly batch: Batch; readonly from: string | undefined }>,
        overflowed: false,
        behind: Deferred.unsafeMake<void>(FiberId.none)
      }
      const receive = (batch: Batch, from: string | undefined) => {
        if (!state.live) {
          // Catching up: what the tail finds meanwhile is kept to hand over after, up to a bound.
          if (batch.length === 0) return
          if (state.pending.length < maxPending) state.pending.push({ batch, from })
          else state.overflowed = true
          return
        }
        if (batch.length === 0) return void receiver.offer(batch)
        const shown = fresh(batch)
        if (shown.length === 0) return
        if (receiver.offer(shown)) cursor = shown[shown.length - 1]!.position
        else {
          state.live = false
          Deferred.unsafeDone(state.behind, Exit.void)
        }
      }
      yield* Effect.acquireRelease(Effect.sync(() => receivers.add(receive)), () =>
        Effect.sync(() => receivers.delete(receive)))
      const take = (batch: Batch) =>
        Effect.suspend(() => {
          const shown = fresh(batch)
          return shown.length === 0 ? Effect.void : Effect.zipRight(
            receiver.take(shown),
            Effect.sync(() =>
              cursor = shown[shown.length - 1]!.position
            )
          )
        })
      for (;;) {
        state.pending = []
        state.overflowed = false
        state.behind = yield* Deferred.make<void>()
        // From the store, until it holds no more or what the tail kept meanwhile goes on from the cursor.
        for (;;) {
          const kept = state.pending[0]
          if (kept !== undefined && !state.overflowed && (kept.from ?? "") <= (cursor ?? "")) break
          const found = yield* Effect.suspend(() => after(cursor))
          if (found.length === 0) break
          yield* take(found)
        }
        if (state.overflowed) continue
        while (state.pending.length > 0 && !state.overflowed) yield* take(state.pending.shift()!.batch)
        if (state.overflowed) continue
        // Nothing pending: from here on the tail hands batches over (no batch can arrive between check and switch).
        state.live = true
        yield* Deferred.await(state.behind)
      }
    }))

  /**
   * The entries after `position` (from now on when undefined) in batches, as each becomes final, in the log's
   * order, each entry once; and an empty batch every `Heartbeat`.
   */
  const batches = (
    position?: string
  ): Stream.Stream<Batch, Errors.StoreFailure | Errors.FailedPrecondition> =>
    streamOf((receiver) => relay(position, receiver))

  /** Every entry after `position` (from now on when undefined), as each becomes final, in the log's order. */
  const follow = (
    position?: string
  ): Stream.Stream<ChangeLog.Entry, Errors.StoreFailure | Errors.FailedPrecondition> =>
    Stream.flattenIterables(batches(position))

  const service: EventsService = {
    after,
    stillHeld,
    latest,
    prune: (before: number) => Repository.orInternal(ChangeLog.prune(store, before)),
    relay,
    batches,
    follow,
    stream: follow(),
    committed: PubSub.publish(commits, undefined).pipe(Effect.asVoid),
    wakeUps: PubSub.subscribe(commits)
  }
  return service
})

/** The in-process view of the change log, which every server and embedder follows. */
export interface EventsService {
  /**
   * Up to `limit` final entries after `position` (from the first when undefined), in the log's order, of the group
   * `within` and the groups below it when given; when entries after `position` have been pruned,
   * `FailedPrecondition` rather than a gap.
   */
  readonly after: (
    position: string | undefined,
    limit?: number,
    within?: Uid.Uid
  ) => Effect.Effect<Array<ChangeLog.Entry>, Errors.StoreFailure | Errors.FailedPrecondition>
  /** Fails when entries after `position` have been pruned: a reader going on from it would miss them. */
  readonly stillHeld: (position: string) => Effect.Effect<void, Errors.StoreFailure | Errors.FailedPrecondition>
  /** The position of the last final entry, or undefined when the log is empty. */
  readonly latest: Effect.Effect<string | undefined, Errors.StoreFailure>
  /** Removes the entries older than `before` (epoch milliseconds); how many (`ChangeLog.prune`). */
  readonly prune: (before: number) => Effect.Effect<number, Errors.StoreFailure>
  /**
   * Hands `receiver` every entry after `position` (from now on when undefined), in batches, in the log's order,
   * each entry once, and an empty batch every `Heartbeat` while it keeps up; runs until interrupted. A slow
   * receiver catches up from the store: it costs no memory here and misses nothing.
   */
  readonly relay: <E>(
    position: string | undefined,
    receiver: Receiver<E>
  ) => Effect.Effect<never, Errors.StoreFailure | Errors.FailedPrecondition | E>
  /** `relay` as a stream: every entry after `position`, in batches, and an empty batch every `Heartbeat`. */
  readonly batches: (position?: string) => Stream.Stream<Batch, Errors.StoreFailure | Errors.FailedPrecondition>
  /** Every entry after `position` (from now on when undefined), as each becomes final, in the log's order. */
  readonly follow: (
    position?: string
  ) => Stream.Stream<ChangeLog.Entry, Errors.StoreFailure | Errors.FailedPrecondition>
  /** Every entry committed from now on, from any process sharing the store. */
  readonly stream: Stream.Stream<ChangeLog.Entry, Errors.StoreFailure | Errors.FailedPrecondition>
  /** Wakes this process's followers: a write just committed. */
  readonly committed: Effect.Effect<void>
  /** A queue that receives a wake-up after each commit of this process, for the scope's life. */
  readonly wakeUps: Effect.Effect<Queue.Dequeue<void>, never, Scope.Scope>
}

/** The in-process view of the change log. */
export class Events extends Effect.Service<Events>()("@arbor/core/Events", { scoped: make }) {}
