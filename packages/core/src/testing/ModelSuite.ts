/**
 * The model-based suite, on fast-check's model-based testing: random sequences of commands, one per engine operation
 * (grouped below by area), each run by a random caller, its outcome predicted by a simple reference model of the
 * rules. After every command, callers' lists (paged to the end with random page sizes and skips), every capability
 * check, a random narrowed token's every check and a random resource search are compared with the model's answers,
 * and no caller may have gained through any identity it can assume a capability that the command's caller did not
 * hold (but through an elevation, which the model decides). A canary identity is never bound and must never see or
 * do anything beyond the built-in roles. A failure shrinks to the fewest commands that still fail. Every store
 * adapter runs it against itself:
 *
 * ```ts
 * import { ModelSuite } from "@arbor/core/testing"
 * ModelSuite.suite("sqlite", SqliteStore.layer({ filename: ":memory:" }))
 * ```
 *
 * The model is in `model/model.ts`, the commands in `model/commands.ts` (each in `model/*Commands.ts`, over
 * `model/step.ts`), the checks after each in `model/checks.ts`.
 */
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Secrets from "../engine/Secrets.js"
import type { Store } from "../engine/Store.js"
import type * as Uid from "../engine/Uid.js"
import {
  Access,
  AccountAssociations,
  Arbor,
  Authorization,
  Capability,
  Elevations,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  Principal,
  Repos,
  Role,
  RoleBindings,
  Roles,
  Tags
} from "../index.js"
import type { Real } from "./model/checks.js"
import { type Commands, commands } from "./model/commands.js"
import { type Actor, actors, claimMatch, type Condition, type Entity, expressionOf, Model } from "./model/model.js"

export type { Real } from "./model/checks.js"
export { type Commands, commands } from "./model/commands.js"
export { Model } from "./model/model.js"

/**
 * One run of `commands` against the engine over `store`, built afresh: two organizations, alice the owner of the
 * first, bob a binder and carol a role maker there, viewers of the second by a condition (carol of what is named `a`,
 * bob for a minute), a team folder with a repo and tags, a folder whose only content is its account association, and
 * the canary.
 */
export const run = <E>(store: Layer.Layer<Store, E>, steps: Commands): Effect.Effect<void, E> =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const identities = yield* Identities.Identities
    const roles = yield* Roles.Roles
    const bindings = yield* RoleBindings.RoleBindings
    const repos = yield* Repos.Repos
    const tags = yield* Tags.Tags
    const model = new Model()
    const add = (entity: Omit<Entity, "createTime" | "updateTime">) =>
      model.add({ ...entity, createTime: 0, updateTime: 0 })

    const org = yield* groups.createRoot(Principal.system, { name: "org" })
    const other = yield* groups.createRoot(Principal.system, { name: "other" })
    for (const g of [org, other]) add({ kind: "group", uid: g.uid, parent: null, name: g.name })
    for (const actor of actors.filter((a) => a !== "system")) {
      const identity = yield* identities.create(Principal.system, org.uid, {
        name: actor,
        claimMatch: claimMatch(actor)
      })
      add({ kind: "identity", uid: identity.uid, parent: org.uid, name: actor })
      model.actorUid.set(actor, identity.uid)
      model.controller.set(identity.uid, actor)
    }
    const bind = (actor: Actor, roleUid: string, at: Uid.Uid = org.uid, condition?: Condition) =>
      Effect.map(
        bindings.create(Principal.system, at, {
          identityUid: model.actorUid.get(actor)!,
          roleUid,
          ...(condition === undefined ? {} : { condition: { expression: expressionOf(condition), title: "" } })
        }),
        (b) =>
          add({
            kind: "binding",
            uid: b.uid,
            parent: at,
            name: "",
            identityUid: model.actorUid.get(actor)!,
            roleUid,
            ...(condition === undefined ? {} : { condition })
          })
      )
    yield* bind("alice", Role.builtInByName("owner")!.uid)
    // Bob may bind and see a little; carol may make roles: both meet escalation refusals often.
    for (
      const [actor, name, capabilities] of [
        ["bob", "binder", [
          "role_bindings.create",
          "role_bindings.delete",
          "identity.list",
          "identity.update",
          "groups.list",
          "roles.list"
        ]],
        ["carol", "role maker", [
          "roles.create",
          "roles.update",
          "roles.delete",
          "roles.list",
          "groups.list",
          "groups.create",
          "groups.delete",
          "group_invites.create",
          "identity_providers.create",
          "account_associations.create"
        ]]
      ] as const
    ) {
      const role = yield* roles.create(Principal.system, org.uid, { name, capabilities })
      add({ kind: "role", uid: role.uid, parent: org.uid, name, caps: Capability.normalize(capabilities) })
      yield* bind(actor, role.uid)
    }
    // In the other organization, each sees only what a condition lets it: carol what is named `a`, bob all of it
    // for a while (DECISIONS §21: a list shows exactly what its caller could get).
    const viewer = Role.builtInByName("viewer")!.uid
    yield* bind("carol", viewer, other.uid, { kind: "name", name: "a" })
    yield* bind("bob", viewer, other.uid, { kind: "before", time: model.now + 60_000 })
    const team = yield* groups.create(Principal.system, org.uid, { name: "team" })
    const cloud = yield* groups.create(Principal.system, org.uid, { name: "cloud" })
    for (const g of [team, cloud]) add({ kind: "group", uid: g.uid, parent: org.uid, name: g.name })
    const app = yield* repos.upsert(Principal.system, team.uid, { name: "app" })
    add({ kind: "repo", uid: app.uid, parent: team.uid, name: "app" })
    for (const name of ["v1", "latest"]) {
      const tag = yield* tags.upsert(Principal.system, app.uid, { name })
      add({ kind: "tag", uid: tag.uid, parent: app.uid, name })
    }
    const associations = yield* AccountAssociations.AccountAssociations
    yield* associations.create(Principal.system, cloud.uid, { name: "aws" })
    add({ kind: "association", uid: cloud.uid, parent: org.uid, name: "aws" })
    const missing = `${org.uid}/ffffffffffffffff`
    model.addMissing(missing, org.uid)

    const runtime = yield* Effect.runtime<never>()
    const real: Real = {
      groups,
      identities,
      roles,
      bindings,
      repos,
      tags,
      providers: yield* IdentityProviders.IdentityProviders,
      invites: yield* GroupInvites.GroupInvites,
      associations,
      authorization: yield* Authorization.Authorization,
      elevations: yield* Elevations.Elevations,
      access: yield* Access.Access,
      missing,
      canary: model.actorUid.get("canary")!,
      run: Runtime.runPromise(runtime)
    }
    yield* Effect.promise(() => FastCheck.asyncModelRun(() => ({ model, real }), steps))
  }).pipe(
    Effect.orDie,
    Effect.provide(Arbor.layer.pipe(Layer.provideMerge(store), Layer.provide(Secrets.layerEphemeral)))
  )

/** Runs the model-based tests against the engine over `store`, built afresh for each run. */
export const suite = <E>(
  name: string,
  store: Layer.Layer<Store, E>,
  options: { readonly numRuns?: number } = {}
): void => {
  describe(`model-based: ${name}`, () => {
    it.effect.prop(
      "every command's outcome, every caller's lists and every capability check match the model",
      [commands],
      ([steps]) => run(store, steps),
      { fastCheck: { numRuns: options.numRuns ?? 100 }, timeout: 600_000 }
    )
  })
}
