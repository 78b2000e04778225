/**
 * Following the change log in process: every committed write's entries, from this process and from every other
 * sharing the store, in the log's order, so embedders can react (invalidate caches, audit, replicate).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
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
     * Every entry after `position` (from now on when undefined), as each becomes final, in the log's order: what
     * this process commits at once, what others commit within `pollInterval`.
     */
    const follow = (position?: string): Stream.Stream<ChangeLog.Entry, Internal | FailedPrecondition> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const woken = yield* PubSub.subscribe(commits)
        let cursor = position ?? (yield* latest)
        /** The next entries: at once when there are some, else after this process commits or the poll interval. */
        const next: Effect.Effect<ReadonlyArray<ChangeLog.Entry>, Internal | FailedPrecondition> = Effect.gen(
          function*() {
            for (;;) {
              const found = yield* after(cursor)
              if (found.length > 0) {
                cursor = found[found.length - 1]!.position
                return found
              }
              yield* Effect.raceFirst(woken.take, Effect.sleep(pollInterval))
            }
          }
        )
        return Stream.repeatEffect(next).pipe(Stream.flattenIterables)
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
