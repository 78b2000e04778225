/**
 * Following the change log in process: every committed write's entries, from this process and from every other
 * sharing the store, in the log's order, so embedders can react (invalidate caches, audit, replicate).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as ChangeLog from "./ChangeLog.js"
import type { Internal } from "./Errors.js"
import { FailedPrecondition, PreconditionViolation } from "./Errors.js"
import * as Repository from "./Repository.js"
import { Store } from "./Store.js"
import * as Uid from "./Uid.js"

/** How many entries one read of the log returns at most. */
const batch = 500

/** How often a follower looks for other processes' entries when this one has written nothing. */
const pollInterval = Duration.millis(200)

/** The in-process view of the change log. */
export class Events extends Effect.Service<Events>()("@arbor/core/Events", {
  scoped: Effect.gen(function*() {
    const store = yield* Store
    const entries = yield* Repository.make(ChangeLog.table, ChangeLog.Record)
    const commits = yield* Effect.acquireRelease(PubSub.sliding<void>(1), PubSub.shutdown)

    /** Fails when entries after `position` have been pruned: a reader going on from it would miss them. */
    const stillHeld = (position: string) =>
      Effect.flatMap(
        Repository.orInternal(ChangeLog.prunedThrough(store)),
        (pruned) =>
          pruned === undefined || position >= pruned ? Effect.void : Effect.fail(
            new FailedPrecondition({
              summary: "entries after this cursor were pruned",
              reason: "CURSOR_PRUNED",
              violations: [
                new PreconditionViolation({
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
        const settled = yield* Repository.orInternal(store.settledPosition)
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
    const latest = Effect.gen(function*() {
      const settled = yield* Repository.orInternal(store.settledPosition)
      const [last] = yield* entries.find({
        conditions: settled === undefined ? [] : [{ _tag: "Below", column: "position", value: settled }],
        order: [{ column: "position", direction: "desc" }, { column: "uid", direction: "desc" }],
        limit: 1
      })
      return last?.position
    })

    /**
     * The tail of the log: one reader per process finds the entries as they become final (at once after this
     * process commits, within `pollInterval` of another's) and hands each batch to every follower, so that a hundred
     * followers cost one read a commit, not a hundred.
     */
    const tail = yield* Effect.acquireRelease(PubSub.unbounded<ReadonlyArray<ChangeLog.Entry>>(), PubSub.shutdown)
    let tailCursor: string | undefined
    const reading = Effect.gen(function*() {
      const woken = yield* PubSub.subscribe(commits)
      for (;;) {
        const found = yield* after(tailCursor)
        if (found.length > 0) {
          tailCursor = found[found.length - 1]!.position
          yield* PubSub.publish(tail, found)
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
     * Every entry after `position` (from now on when undefined), as each becomes final, in the log's order: first
     * what the store holds after it, then what the tail finds, each entry once.
     */
    const follow = (position?: string): Stream.Stream<ChangeLog.Entry, Internal | FailedPrecondition> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        // Subscribed before catching up: what the tail finds from now on is queued, so nothing falls between.
        const live = yield* PubSub.subscribe(tail)
        yield* Effect.acquireRelease(Effect.orDie(joined), () => left)
        let cursor = position ?? tailCursor
        const newer = (found: ReadonlyArray<ChangeLog.Entry>) => {
          const fresh = cursor === undefined ? found : found.filter((entry) => entry.position > cursor!)
          if (fresh.length > 0) cursor = fresh[fresh.length - 1]!.position
          return fresh
        }
        const catchUp = Stream.repeatEffectOption(
          Effect.flatMap(
            Effect.mapError(Effect.suspend(() => after(cursor)), Option.some),
            (found) => found.length === 0 ? Effect.fail(Option.none()) : Effect.succeed(newer(found))
          )
        )
        const following = Stream.fromQueue(live).pipe(Stream.map(newer))
        return Stream.concat(catchUp, following).pipe(Stream.flattenIterables)
      }))

    return {
      after,
      stillHeld,
      latest,
      /** Removes the entries older than `before` (epoch milliseconds); how many (`ChangeLog.prune`). */
      prune: (before: number) => Repository.orInternal(ChangeLog.prune(store, before)),
      follow,
      /** Every entry committed from now on, from any process sharing the store. */
      stream: follow(),
      /** Wakes this process's followers: a write just committed. */
      committed: PubSub.publish(commits, undefined).pipe(Effect.asVoid),
      /** A queue that receives a wake-up after each commit of this process, for the scope's life. */
      wakeUps: PubSub.subscribe(commits)
    }
  })
}) {}
