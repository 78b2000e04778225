/** The model suite's commands: one per engine operation, each run by a random caller and compared with the model. */
import * as FastCheck from "effect/FastCheck"
import { type Real } from "./checks.js"
import { type Actor, type Model, roleCaps } from "./model.js"

import { CreateAssociation, CreateInvite, CreateProvider } from "./accessCommands.js"
import {
  Approve,
  ChangeElevationBinding,
  CreateEligibility,
  DeleteEligibility,
  Elevate,
  type NarrowingPick
} from "./elevationCommands.js"
import {
  Bind,
  type ConditionPick,
  CreateGroup,
  CreateIdentity,
  CreateRole,
  DeleteGroup,
  DeleteIdentity,
  DeleteRole,
  RenameGroup,
  Unbind,
  UpdateIdentity,
  UpdateRole
} from "./iamCommands.js"
import { DeleteRepo, UpsertRepo, UpsertTag } from "./registryCommands.js"
import { type Tick } from "./step.js"

export const actorArb = FastCheck.constantFrom<Actor>("system", "system", "alice", "bob", "carol", "canary")
/** Approvers: mostly the owner, who holds every approver role. */
export const approverArb: FastCheck.Arbitrary<Actor> = FastCheck.oneof(
  { arbitrary: FastCheck.constant<Actor>("alice"), weight: 4 },
  { arbitrary: FastCheck.constantFrom<Actor>("bob", "carol", "system"), weight: 1 }
)
export const nameArb = FastCheck.constantFrom("a", "b", "c", "d")
export const capsArb = FastCheck.subarray([...roleCaps], { minLength: 1 })
export const tickArb: FastCheck.Arbitrary<Tick> = FastCheck.record({
  // Past a binding's end (1 s, 2.5 s) and an elevation's (60 s) now and then.
  advance: FastCheck.constantFrom(0, 0, 1, 1000, 0, 0, 1, 1000, 61_000),
  seed: FastCheck.nat()
})
export const at = FastCheck.nat()
/** A binding's condition, or none (it grants everywhere in its group), as often as not. */
export const conditionArb: FastCheck.Arbitrary<ConditionPick | null> = FastCheck.oneof(
  { arbitrary: FastCheck.constant(null), weight: 2 },
  {
    arbitrary: FastCheck.oneof(
      FastCheck.record({ kind: FastCheck.constant("name" as const), name: FastCheck.constantFrom("a", "b", "team") }),
      FastCheck.record({
        kind: FastCheck.constant("before" as const),
        offset: FastCheck.constantFrom(500, 5_000, 100_000)
      }),
      FastCheck.record({ kind: FastCheck.constant("tier" as const), tier: FastCheck.constantFrom("gold", "silver") })
    ),
    weight: 1
  }
)
/** A token's narrowing, or none (its whole token). */
export const narrowingArb: FastCheck.Arbitrary<NarrowingPick | null> = FastCheck.oneof(
  { arbitrary: FastCheck.constant(null), weight: 2 },
  { arbitrary: FastCheck.record({ caps: capsArb, scope: at }), weight: 1 }
)

/** Every command, with its weight among them. */
export const commands = FastCheck.commands(
  [
    ...Array.from(
      { length: 4 },
      () => FastCheck.tuple(actorArb, at, FastCheck.boolean(), nameArb, tickArb).map((a) => new CreateGroup(...a))
    ),
    FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new RenameGroup(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteGroup(...a)),
    ...Array.from(
      { length: 2 },
      () => FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new CreateIdentity(...a))
    ),
    ...Array.from(
      { length: 2 },
      () =>
        FastCheck.tuple(actorArb, at, FastCheck.constantFrom("name" as const, "assumption" as const), nameArb, tickArb)
          .map((a) => new UpdateIdentity(...a))
    ),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteIdentity(...a)),
    ...Array.from(
      { length: 2 },
      () => FastCheck.tuple(actorArb, at, nameArb, capsArb, tickArb).map((a) => new CreateRole(...a))
    ),
    FastCheck.tuple(actorArb, at, capsArb, tickArb).map((a) => new UpdateRole(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteRole(...a)),
    ...Array.from(
      { length: 4 },
      () =>
        FastCheck.tuple(
          actorArb,
          at,
          at,
          at,
          FastCheck.constantFrom(undefined, undefined, 1000, 2500),
          conditionArb,
          tickArb
        ).map((a) => new Bind(...a))
    ),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new Unbind(...a)),
    ...Array.from(
      { length: 2 },
      () => FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new UpsertRepo(...a))
    ),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteRepo(...a)),
    ...Array.from({ length: 2 }, () => FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new UpsertTag(...a))),
    FastCheck.tuple(actorArb, at, nameArb, tickArb).map((a) => new CreateProvider(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new CreateInvite(...a)),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new CreateAssociation(...a)),
    ...Array.from(
      { length: 6 },
      () =>
        FastCheck.tuple(actorArb, at, at, at, FastCheck.constantFrom(true, true, false), at, tickArb).map((a) =>
          new CreateEligibility(...a)
        )
    ),
    FastCheck.tuple(actorArb, at, tickArb).map((a) => new DeleteEligibility(...a)),
    ...Array.from(
      { length: 5 },
      () => FastCheck.tuple(at, FastCheck.constantFrom(60, 600), narrowingArb, tickArb).map((a) => new Elevate(...a))
    ),
    ...Array.from(
      { length: 5 },
      () => FastCheck.tuple(approverArb, at, narrowingArb, tickArb).map((a) => new Approve(...a))
    ),
    ...Array.from(
      { length: 2 },
      () =>
        FastCheck.tuple(actorArb, at, FastCheck.constantFrom("patch" as const, "delete" as const), tickArb).map((a) =>
          new ChangeElevationBinding(...a)
        )
    )
  ],
  { maxCommands: 40, size: "max" }
)

/** The commands of one run, as the property receives them. */
export type Commands = Iterable<FastCheck.AsyncCommand<Model, Real>>
