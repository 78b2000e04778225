/**
 * The in-memory store's transactions: the committed state is one reference to persistent tables; a transaction works
 * on its own snapshot and commits by swapping the reference (writers one at a time); a nested one is a savepoint,
 * which costs nothing to keep.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import type { State } from "./tables.js"

export const make = Effect.gen(function*() {
  const committed = { state: new Map() as State }
  const currentTx = FiberRef.unsafeMake<{ state: State } | undefined>(undefined)
  const lock = yield* Effect.makeSemaphore(1)

  /** `f` of the state the calling fiber reads, asked of the fiber at once (a read is the hottest path of all). */
  const read = <A>(f: (state: State) => A): Effect.Effect<A> =>
    Effect.withFiberRuntime((fiber) => Effect.succeed(f(fiber.getFiberRef(currentTx)?.state ?? committed.state)))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(FiberRef.get(currentTx), (outer) => {
      if (outer !== undefined) {
        // A savepoint: the trees are persistent, so keeping the state to go back to costs nothing.
        const savepoint = outer.state
        return Effect.onExit(
          effect,
          (exit) => Exit.isFailure(exit) ? Effect.sync(() => (outer.state = savepoint)) : Effect.void
        )
      }
      return lock.withPermits(1)(
        Effect.suspend(() => {
          const tx = { state: committed.state }
          return effect.pipe(
            Effect.locally(currentTx, tx),
            Effect.tap(() => {
              committed.state = tx.state
            })
          )
        })
      )
    })

  /** Applies a write to the transaction's state, in a transaction of its own when outside one. */
  const write = <A, E>(f: (state: State) => Effect.Effect<readonly [State, A], E>): Effect.Effect<A, E> =>
    transaction(
      Effect.flatMap(FiberRef.get(currentTx), (tx) =>
        Effect.map(f(tx!.state), ([next, value]) => {
          tx!.state = next
          return value
        }))
    )

  /** The state `fiber` reads: its transaction's (which each write replaces), else the committed one. */
  const changeMarker = (fiber: Fiber.RuntimeFiber<unknown, unknown>): unknown =>
    fiber.getFiberRef(currentTx)?.state ?? committed.state

  return { changeMarker, read, transaction, write }
})
