/**
 * The end of a role binding, logged (DECISIONS §21): a binding stops granting at its `expireTime` on every path by
 * itself (`Authorization` reads the clock); this writes the one change-log entry of that end, by whichever server
 * sees it first, so that the audit trail and the event sinks hear of it. Each server sweeps when it starts, at the
 * next end it knows of, and whenever it writes an expiry (which may be sooner), logging the ends that have passed in
 * a transaction that claims the sweep: of several servers, one logs each end. (An end another server set is logged
 * by that server at its time; should it be gone by then, by the next to sweep.)
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { commit, type Operations, unexpectedConflict } from "../../engine/internal/operations.js"
import type { Repository } from "../../engine/Repository.js"
import { orInternal } from "../../engine/Repository.js"
import * as ChangeLog from "../../events/ChangeLog.js"
import * as Principal from "../Principal.js"
import * as RoleBinding from "../RoleBinding.js"

/** The most ends one sweep logs; the next sweep follows at once. */
const perSweep = 200

/** Logs the ends that have passed and are not logged yet (a sweep's worth); how many it logged. */
export const logEnds = (ops: Operations, bindings: Repository<RoleBinding.Record>) =>
  commit(
    ops,
    Principal.system,
    Effect.gen(function*() {
      // Another server's sweep holds it: its ends are being logged.
      if (!(yield* orInternal(ops.store.claim("role_binding_ends")))) return 0
      const now = yield* DateTime.now
      const ended = yield* bindings.find({
        conditions: [
          { _tag: "Below", column: "expireTime", value: now.epochMillis + 1 },
          { _tag: "Equals", column: "endedTime", value: null }
        ],
        order: [{ column: "expireTime", direction: "asc" }, { column: "uid", direction: "asc" }],
        limit: perSweep
      })
      for (const binding of ended) {
        yield* bindings.update({ ...binding, endedTime: now }).pipe(
          unexpectedConflict,
          ChangeLog.typedAs("role_binding", "updated", RoleBinding.endedType)
        )
      }
      return ended.length
    })
  )

/** When the next end not yet logged is, if any binding has one. */
const nextEnd = (bindings: Repository<RoleBinding.Record>) =>
  Effect.map(
    bindings.find({
      conditions: [
        { _tag: "AtLeast", column: "expireTime", value: 0 },
        { _tag: "Equals", column: "endedTime", value: null }
      ],
      order: [{ column: "expireTime", direction: "asc" }, { column: "uid", direction: "asc" }],
      limit: 1
    }),
    ([first]) => first?.expireTime?.epochMillis
  )

/**
 * The sweeper: logs the ends due, then waits for the next end or for `wake` (a binding with an expiry written
 * here), whichever comes first; with no end ahead, for `wake` alone (no timer, so a clock moved far ahead in a test
 * wakes it once). Runs until its scope closes; a failed sweep (the database away) is logged and tried again 30 s
 * later, the ends meanwhile denying all the same.
 */
export const sweeper = (
  ops: Operations,
  bindings: Repository<RoleBinding.Record>,
  wake: Queue.Dequeue<void>
): Effect.Effect<never> =>
  Effect.gen(function*() {
    const logged: number = yield* logEnds(ops, bindings)
    if (logged === perSweep) return
    const next = yield* nextEnd(bindings)
    const now = (yield* DateTime.now).epochMillis
    yield* next === undefined
      ? Queue.take(wake)
      : Effect.race(Effect.sleep(Duration.millis(Math.max(0, next - now))), Queue.take(wake))
  }).pipe(
    Effect.catchAllCause((cause: unknown) =>
      Effect.zipRight(Effect.logWarning("logging the ends of role bindings failed", cause), Effect.sleep("30 seconds"))
    ),
    Effect.forever
  )
