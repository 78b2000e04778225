/**
 * When identities were last used (`lastSeenTime`), recorded in batches: a token exchange only notes the time, and
 * the notes are written together every `interval` (one write per identity however often it was used) and at
 * shutdown. Reads see the notes before they are written (docs/api.md §8: a read that starts after an exchange
 * answered sees it).
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { trusted, unexpectedConflict } from "../../engine/internal/operations.js"
import * as Repository from "../../engine/Repository.js"
import { Store } from "../../engine/Store.js"
import type * as Uid from "../../engine/Uid.js"
import * as Identity from "../../iam/Identity.js"

/** How soon after it is noted a use is written. */
export const interval = Duration.millis(250)

/** Builds the LastSeen service from the services in its context; what it holds is released with the scope. */
export const make = Effect.gen(function*() {
  const store = yield* Store
  const identities = yield* Repository.make(Identity.table, Identity.Identity)
  /** Noted and not yet being written. */
  let pending = new Map<Uid.Uid, number>()
  /** Being written now: still shown until the write has committed. */
  let writing = new Map<Uid.Uid, number>()

  const latest = (uid: Uid.Uid): number | undefined => {
    const a = pending.get(uid)
    const b = writing.get(uid)
    return a === undefined ? b : b === undefined ? a : Math.max(a, b)
  }

  const write = (batch: ReadonlyMap<Uid.Uid, number>) =>
    Repository.orInternal(store.transaction(Effect.forEach(
      batch,
      ([uid, at]) =>
        Effect.flatMap(identities.get(uid), (found) =>
          Option.isNone(found) || found.value.lastSeenTime.epochMillis >= at
            ? Effect.void
            : unexpectedConflict(identities.rewrite(
              new Identity.Identity({ ...found.value, lastSeenTime: DateTime.unsafeMake(at) }, trusted)
            ))),
      { discard: true }
    )))

  const flush = Effect.suspend(() => {
    if (pending.size === 0) return Effect.void
    writing = pending
    pending = new Map()
    return write(writing).pipe(
      Effect.catchAll((error) => Effect.logWarning("could not record lastSeenTime", error)),
      Effect.ensuring(Effect.sync(() => (writing = new Map())))
    )
  })
  const scope = yield* Effect.scope
  yield* Effect.addFinalizer(() => flush)
  /** Whether a flush is due: one is scheduled by the first note after the last flush, none while idle. */
  let due = false
  const later = Effect.sleep(interval).pipe(
    Effect.zipRight(Effect.sync(() => (due = false))),
    Effect.zipRight(flush)
  )

  return {
    /** Notes that `identity` was used at `at` (epoch milliseconds); it is written within `interval`. */
    note: (identity: Uid.Uid, at: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        pending.set(identity, Math.max(at, pending.get(identity) ?? 0))
        if (due) return Effect.void
        due = true
        return Effect.asVoid(Effect.forkIn(later, scope))
      }),

    /** The identity with its latest use, written or only noted. */
    overlay: (identity: Identity.Identity): Identity.Identity => {
      const at = latest(identity.uid)
      return at === undefined || at <= identity.lastSeenTime.epochMillis
        ? identity
        : new Identity.Identity({ ...identity, lastSeenTime: DateTime.unsafeMake(at) }, trusted)
    }
  }
})

/** Identities' last use, noted now and written in batches. */
export class LastSeen extends Effect.Service<LastSeen>()("@arbor/core/LastSeen", { scoped: make }) {}
