/**
 * Fairness between fibers and the event loop's I/O. Effect's default scheduler resumes a fiber that yields (every
 * 2,048 operations) on a microtask, and gives the event loop a turn only after 2,048 such resumptions in a row: one
 * busy fiber (a large `:apply`, an export) keeps every other request from being read, `/readyz` included, for
 * seconds. `make` builds one that gives the event loop a turn (`setImmediate`) whenever a resumption comes more than
 * `turnMillis` after the last turn it gave, so a busy fiber delays others by about that much; `layer` installs it.
 */
import * as Layer from "effect/Layer"
import * as Scheduler from "effect/Scheduler"

/** How long fibers may run on microtasks before the event loop gets a turn. */
export const turnMillis = 10

/** The scheduler: Effect's, but the event loop gets a turn at least every `turnMillis` of busy fibers. */
export const make = (turn: number = turnMillis): Scheduler.Scheduler => {
  let lastTurn = performance.now()
  const runners = Scheduler.SchedulerRunner.cached((depth, drain) => {
    if (performance.now() - lastTurn >= turn) {
      setImmediate(() => {
        lastTurn = performance.now()
        drain(0)
      })
    } else {
      void Promise.resolve().then(() => drain(depth + 1))
    }
  })
  return {
    shouldYield: (fiber) => Scheduler.defaultScheduler.shouldYield(fiber),
    scheduleTask: (task, priority, fiber) => runners(fiber).scheduleTask(task, priority)
  }
}

/** The fair scheduler, for every fiber of the layers it is provided to. */
export const layer: Layer.Layer<never> = Layer.setScheduler(make())
