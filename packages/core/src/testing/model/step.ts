/** What every command of the model suite is (`commands`): a step run by a random caller and compared with the model. */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as FastCheck from "effect/FastCheck"
import * as TestClock from "effect/TestClock"
import { Role } from "../../index.js"
import {
  checkCanary,
  checkCapabilities,
  checkDecisions,
  checkLists,
  checkNarrowing,
  checkSearch,
  ownedOrganizations,
  principalOf,
  reach,
  reaches,
  type Real
} from "./checks.js"
import { type Actor, type Model } from "./model.js"

export const viewerUid = Role.builtInByName("viewer")!.uid
export const viewerCaps = Role.builtInByName("viewer")!.capabilities

/** What every command carries besides its own fields: how far the clock moves first, and the seed of the checks. */
export interface Tick {
  readonly advance: number
  readonly seed: number
}

/**
 * A command of the model run: its operation (`step`, which predicts, runs and compares), preceded by the clock's
 * advance and followed by the checks of every list, every capability and every identity's reach.
 */
export abstract class Step implements FastCheck.AsyncCommand<Model, Real> {
  abstract readonly actor: Actor
  /** What its last run picked from the pools, as names (a counterexample shows them). */
  private picked: ReadonlyArray<string> = []
  constructor(readonly tick: Tick) {}
  check(): boolean {
    return true
  }
  abstract step(model: Model, real: Real, label: string): Effect.Effect<void>
  async run(model: Model, real: Real): Promise<void> {
    this.picked = []
    const label = this.toString()
    await real.run(
      Effect.gen(this, function*() {
        yield* TestClock.adjust(this.tick.advance)
        model.now += this.tick.advance
        const reachBefore = yield* reach(model, real)
        const ownedBefore = yield* ownedOrganizations(real)
        const actingGrants = yield* real.authorization.grants(principalOf(model, this.actor))
        model.picks.length = 0
        yield* this.step(model, real, label).pipe(
          Effect.ensuring(Effect.sync(() => this.picked = [...model.picks])),
          // Its own comparison names what it picked, as the checks after it do.
          Effect.catchAllDefect((defect) =>
            Effect.die(
              defect instanceof Error
                ? Object.assign(defect, { message: `${defect.message} (${this.picked.join(", ")})` })
                : defect
            )
          )
        )
        const ran = this.toString()
        // The engine's invariant, asked of the engine itself: an organization that had an owner still has one.
        const ownedAfter = yield* ownedOrganizations(real)
        for (const org of ownedBefore) {
          assert.isTrue(ownedAfter.has(org), `${ran} / ${model.nameOf(org)} lost its last owner`)
        }
        yield* checkLists(model, real, ran, this.tick.seed)
        yield* checkCapabilities(model, real, ran)
        yield* checkNarrowing(model, real, ran, this.tick.seed)
        yield* checkSearch(model, real, ran, this.tick.seed)
        yield* checkDecisions(model, real, ran, this.tick.seed)
        // No actor ever gains a capability, through any identity it can assume, that the caller did not hold itself;
        // but through an elevation, which the checks above hold to the model.
        const elevated = (grant: { readonly source?: { readonly binding?: string | undefined } | undefined }) =>
          grant.source?.binding !== undefined && model.entities.get(grant.source.binding)?.elevationUid !== undefined
        for (const [actor, grantsNow] of yield* reach(model, real)) {
          for (const grant of grantsNow.flatMap((g) => g.grants).filter((g) => !elevated(g))) {
            for (const cap of grant.capabilities) {
              if (reaches(reachBefore, actor, cap, grant.group)) continue
              assert.isTrue(
                actingGrants.holds(cap, grant.group),
                `${ran} / ${actor} gained ${cap} at ${model.nameOf(grant.group)}`
              )
            }
          }
        }
        yield* checkCanary(real)
      }).pipe(Effect.orDie)
    )
  }
  toString(): string {
    const { picked, tick: _, ...fields } = this
    return `${this.constructor.name} ${JSON.stringify(fields)}${picked.length === 0 ? "" : ` (${picked.join(", ")})`}`
  }
}
