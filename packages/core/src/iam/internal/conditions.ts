/**
 * Deciding conditional grants (DECISIONS §21): what a decision about one resource gives their conditions, and how
 * each comes out. `Authorization` decides with it; lists and searches decide row by row with it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Errors from "../../engine/Errors.js"
import type { Repository } from "../../engine/Repository.js"
import {
  ancestors,
  descendants,
  intersectRanges,
  isAncestorOrSelf,
  normalizeRanges,
  only,
  type Range,
  subtree,
  type Uid
} from "../../engine/Uid.js"
import type { Capability } from "../Capability.js"
import * as Condition from "../Condition.js"
import type * as Group from "../Group.js"
import type { Principal } from "../Principal.js"
import type { ConditionOutcome, DecisionRequest, Grant, Grants } from "./grants.js"

/** What a check is about: one resource, by its uid and kind, decided at the group whose capabilities govern it. */
export interface Target {
  readonly group: Uid
  readonly uid: string
  /** `group`, or another kind of resource (`identity`, `role_binding`, …: AuthZEN's resource types). */
  readonly kind: string
}

/** A check about group `uid` itself: creating below it, or anything else done there. */
export const atGroup = (uid: Uid): Target => ({ group: uid, uid, kind: "group" })

/** The subject a condition sees for `principal`, when a request does not name one: the identity, by its uid. */
export const subjectOf = (principal: Principal) =>
  principal._tag === "System" ? { id: "system", type: "system" } : { id: principal.uid, type: "identity" }

/**
 * What the API's own check about `target` tells conditions: the resource, the caller as subject, and no context
 * (the request's own moment and the resource's names are added where they are decided).
 */
export const requestOf = (principal: Principal, target: Target, budget?: Condition.Budget): DecisionRequest => ({
  resource: { uid: target.uid, kind: target.kind, properties: {} },
  subject: { ...subjectOf(principal), properties: {} },
  context: {},
  ...(budget === undefined ? {} : { budget })
})

/** The names of a group and of the groups above it: a condition's `resource.name` and `resource.path`. */
export interface Names {
  readonly name: string | undefined
  readonly path: string | undefined
}

/** The attributes a condition reads in a decision at `now` for `request`, with the names of its group. */
export const attributesOf = (
  request: DecisionRequest,
  capability: Capability,
  now: number,
  names?: Names
): Condition.Attributes => ({
  time: now,
  resource: names === undefined ? request.resource : { ...request.resource, ...names },
  subject: request.subject,
  action: request.action ?? { name: capability },
  context: request.context,
  budget: request.budget
})

/** Deciding conditions, reading groups' names from `groups` when a condition wants them. */
export const make = (groups: Repository<Group.Group>) => {
  /** The names of each of `uids` (the groups decisions are made at), read at once. */
  const namesOfMany = (uids: ReadonlyArray<Uid>): Effect.Effect<ReadonlyMap<Uid, Names>, Errors.StoreFailure> => {
    const needed = [...new Set(uids.flatMap((uid) => [...ancestors(uid), uid]))]
    return Effect.map(groups.getMany(needed), (found) => {
      const byUid = new Map(found.map((g) => [g.uid as string, g.name]))
      return new Map(uids.map((uid) => {
        const names = [...ancestors(uid), uid].map((of) => byUid.get(of))
        return [
          uid,
          names.every((name) => name !== undefined)
            ? { name: names.at(-1)!, path: names.join("/") }
            : { name: undefined, path: undefined }
        ] as const
      }))
    })
  }

  /**
   * How each conditional grant of `grants` that would give `capability` at `group` comes out for `request` now: the
   * group's names read first when a condition wants them.
   */
  const conditionsOf = (
    grants: Grants,
    capability: Capability,
    group: Uid,
    request: DecisionRequest
  ): Effect.Effect<ReadonlyArray<ConditionOutcome>, Errors.StoreFailure> => {
    const candidates = grants.conditionalGiving(capability, group)
    if (candidates.length === 0) return Effect.succeed([])
    // Without a read unless a condition wants the group's names: a decision's own step, with no generator.
    const decided = (names?: Names) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const attributes = attributesOf(request, capability, now, names)
        return candidates.map((grant): ConditionOutcome => ({
          grant,
          outcome: grant.condition!.compiled.decide(attributes)
        }))
      })
    return candidates.some((g) => g.condition!.compiled.readsNames)
      ? Effect.flatMap(namesOfMany([group]), (names) => decided(names.get(group)))
      : decided()
  }

  /**
   * The ranges of rows a list shows beyond `covered` (what `principal`'s unconditional grants show) through its
   * conditional grants of `capability`: each row decided as a check about it would be (`target`), with the list's
   * budget (with what a search's `request` says of it). A condition that reads nothing of the resource is decided
   * once for all its rows. The others are decided
   * row by row, read in uid order within `within` (the list's own ranges, undefined for all): consecutive rows shown
   * become one range, so the list's query, count and pages stay the store's. Rows left once the budget is spent are
   * undecided, so not shown.
   */
  const visibleRows = (
    principal: Principal,
    grants: Grants,
    capability: Capability,
    list: {
      readonly visibleAt: "self" | "parent"
      readonly target: (uid: Uid) => Target
      readonly covered: ReadonlyArray<Range>
      readonly within: ReadonlyArray<Range> | undefined
      readonly read: (range: Range, after: Uid | undefined, limit: number) => Effect.Effect<
        ReadonlyArray<Uid>,
        Errors.StoreFailure
      >
      /** What the conditions read of a row: the API's own check about it, unless a search says more. */
      readonly request?: (target: Target, budget: Condition.Budget) => DecisionRequest
    }
  ): Effect.Effect<ReadonlyArray<Range>, Errors.StoreFailure> =>
    Effect.gen(function*() {
      const rangeOf = (grant: Grant) => (list.visibleAt === "self" ? subtree : descendants)(grant.group)
      const inside = (ranges: ReadonlyArray<Range>, uid: Uid) => ranges.some((r) => uid >= r.from && uid < r.to)
      // Those whose rows the list shows already need no deciding.
      const conditional = grants.conditionalFor(capability).filter((grant) => {
        const range = rangeOf(grant)
        return !list.covered.some((r) => r.from <= range.from && range.to <= r.to)
      })
      if (conditional.length === 0) return []
      const budget = Condition.budget()
      const now = yield* Clock.currentTimeMillis
      const request = (target: Target) =>
        list.request === undefined ? requestOf(principal, target, budget) : list.request(target, budget)
      // Decided once: what reads nothing of the resource is alike for every row.
      const wholesale = conditional.filter((grant) =>
        !grant.condition!.compiled.readsResource &&
        grant.condition!.compiled.decide(attributesOf(request(list.target(grant.group)), capability, now)).held
      )
      const shown = normalizeRanges([...list.covered, ...wholesale.map(rangeOf)])
      const perRow = conditional.filter((grant) => grant.condition!.compiled.readsResource)
      const scanned = normalizeRanges(perRow.map(rangeOf))
      const ranges = list.within === undefined ? scanned : intersectRanges(scanned, list.within)
      const found: Array<Range> = wholesale.map(rangeOf)
      for (const range of ranges) {
        let run: { from: string; to: string } | undefined
        const close = () => {
          if (run !== undefined) found.push(run)
          run = undefined
        }
        let after: Uid | undefined
        while (budget.left > 0) {
          const uids = yield* list.read(range, after, page)
          if (uids.length === 0) break
          const targets = uids.map(list.target)
          const names = perRow.some((g) => g.condition!.compiled.readsNames)
            ? yield* namesOfMany(targets.map((t) => t.group))
            : undefined
          for (const [i, uid] of uids.entries()) {
            const target = targets[i]!
            const attributes = () => attributesOf(request(target), capability, now, names?.get(target.group))
            const held = inside(shown, uid) || perRow.some((grant) =>
              isAncestorOrSelf(grant.group, target.group) && grant.condition!.compiled.decide(attributes()).held
            )
            if (!held) close()
            else run = { from: run?.from ?? uid, to: only(uid).to }
          }
          after = uids.at(-1)
          if (uids.length < page) break
        }
        close()
      }
      return normalizeRanges(found)
    })

  return { conditionsOf, visibleRows }
}

/** How many rows a list's conditional grants decide per read. */
const page = 500
