/**
 * The model suite's checks after every command (callers' lists, every capability check, the canary), and how a
 * command's outcome is compared with the model's prediction.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { ListOptions } from "../../engine/Lists.js"
import * as Uid from "../../engine/Uid.js"
import { atGroup } from "../../iam/Authorization.js"
import type {
  Access,
  AccountAssociations,
  Authorization,
  Elevations,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  Repos,
  RoleBindings,
  Roles,
  Tags
} from "../../index.js"
import { Principal, Role } from "../../index.js"
import {
  type Actor,
  actors,
  type Cap,
  type Kind,
  type Model,
  type Narrowing,
  orders,
  roleCaps,
  sortModel
} from "./model.js"

/** Small deterministic generator for page sizes and skips. */
export const lcg = (seed: number) => {
  let s = seed >>> 0
  return (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return (s >>> 8) % n
  }
}

/** The engine under test, the fixtures every run starts from, and how to run an operation on it. */
export interface Real {
  readonly groups: Groups.Groups
  readonly identities: Identities.Identities
  readonly roles: Roles.Roles
  readonly bindings: RoleBindings.RoleBindings
  readonly repos: Repos.Repos
  readonly tags: Tags.Tags
  readonly providers: IdentityProviders.IdentityProviders
  readonly invites: GroupInvites.GroupInvites
  readonly associations: AccountAssociations.AccountAssociations
  readonly authorization: Authorization.Authorization
  readonly elevations: Elevations.Elevations
  readonly access: Access.Access
  /** A group that does not exist, below the first organization. */
  readonly missing: string
  readonly canary: string
  readonly run: <A>(effect: Effect.Effect<A>) => Promise<A>
}

/** The organizations with an owner: an identity bound `owner` at the organization itself. */
export const ownedOrganizations = (real: Real) =>
  Effect.map(
    real.bindings.list(Principal.system, { role: Role.builtInByName("owner")!.uid, pageSize: 200 }),
    // Owned for good: by an owner binding that never ends, holds unconditionally and no elevation made (DECISIONS
    // §20, §21: any other keeps nothing owned).
    (page) =>
      new Set(
        page.items.filter((b) => b.expireTime === null && b.condition === null && b.elevationUid === null)
          .map((b) => b.group.uid).filter((group) => Uid.parentOrNull(group) === null)
      )
  )

export const principalOf = (model: Model, actor: Actor, narrowing?: Narrowing) =>
  actor === "system"
    ? Principal.system
    : Principal.identity(
      model.actorUid.get(actor) as Uid.Uid,
      narrowing === undefined
        ? {}
        : { narrowed: { capabilities: narrowing.capabilities, scopes: [narrowing.scope as Uid.Uid] } }
    )

/** Runs the real operation and compares its outcome with the model's prediction; on success, updates the model. */
export const expect = <A>(
  label: string,
  predicted: string,
  operation: Effect.Effect<A, { readonly _tag: string }>,
  apply: (a: A) => void = () => {}
) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(operation)
    const actual = Exit.match(exit, {
      onSuccess: () => "ok",
      onFailure: (cause) => cause._tag === "Fail" ? cause.error._tag : `defect ${String(cause)}`
    })
    assert.strictEqual(actual, predicted, label)
    if (Exit.isSuccess(exit)) apply(exit.value)
  })

/** What each actor can do through every identity it can assume. */
export const reach = (model: Model, real: Real) =>
  Effect.gen(function*() {
    const byActor = new Map<Actor, Array<Authorization.Grants>>()
    for (const [uid, actor] of model.controller) {
      if (actor === "system" || !model.entities.has(uid)) continue
      const grants = yield* real.authorization.grants(Principal.identity(uid as Uid.Uid))
      byActor.set(actor, [...(byActor.get(actor) ?? []), grants])
    }
    return byActor
  })

export const reaches = (r: Map<Actor, Array<Authorization.Grants>>, actor: Actor, cap: Cap, group: string) =>
  (r.get(actor) ?? []).some((g) => g.holds(cap, group))

/** (a) Callers' lists, paged to the end with random page sizes and skips: a random third of the (caller, kind) pairs. */
export const checkLists = (model: Model, real: Real, label: string, seed: number) =>
  Effect.gen(function*() {
    const random = lcg(seed)
    const groupsNow = model.of("group").map((g) => g.uid)
    for (const actor of actors) {
      for (const kind of kinds) {
        if (random(3) !== 0) continue
        const filterPick = random(4)
        const target = groupsNow[random(groupsNow.length)]!
        const options: ListOptions = {
          orderBy: orders[kind][random(orders[kind].length)]!,
          ...(filterPick === 1 ? { descendantsOf: target } : filterPick === 2 ? { childrenOf: target } : {})
        }
        const expected = sortModel(
          model.of(kind).filter((e) =>
            model.visible(actor, e) &&
            (options.descendantsOf === undefined || Uid.isAncestor(options.descendantsOf, e.uid)) &&
            (options.childrenOf === undefined || e.parent === options.childrenOf)
          ),
          options.orderBy!
        ).map((e) => e.uid)
        let position = 0
        let pageToken: string | undefined
        const seen: Array<string> = []
        for (let pages = 0; pages < 50; pages++) {
          const pageSize = 1 + random(6)
          const skip = random(4) === 0 ? random(3) : 0
          const page = yield* listOf(real, kind)(principalOf(model, actor), { ...options, pageSize, skip, pageToken })
          const skipped = Math.min(skip, expected.length - position)
          position += skipped
          const items = expected.slice(position, position + pageSize)
          position += items.length
          const scope = options.descendantsOf !== undefined
            ? ` below ${model.nameOf(options.descendantsOf)}`
            : options.childrenOf !== undefined
            ? ` in ${model.nameOf(options.childrenOf)}`
            : ""
          const where = `${label} / ${actor} lists ${kind}${scope} by ${options.orderBy}, page ${pages + 1} ` +
            `(page_size ${pageSize}, skip ${skip}${pageToken === undefined ? "" : ", after the previous page"})`
          const named = (uids: ReadonlyArray<string>) => uids.map((uid) => `${model.nameOf(uid)} ${uid}`)
          assert.deepStrictEqual(named(page.items.map((i) => i.uid)), named(items), `${where}: the page's items`)
          assert.strictEqual(page.skipped, skipped, `${where}: skipped`)
          assert.strictEqual(page.totalCount, expected.length, `${where}: totalCount`)
          assert.strictEqual(
            page.nextPageToken !== undefined,
            position < expected.length,
            `${where}: a nextPageToken ${position < expected.length ? "while items remain" : "after the last item"}`
          )
          seen.push(...page.items.map((i) => i.uid))
          pageToken = page.nextPageToken
          if (pageToken === undefined) break
        }
        assert.strictEqual(new Set(seen).size, seen.length, `${label} / ${actor} lists ${kind}: no item twice`)
      }
    }
  }).pipe(Effect.orDie)

export const kinds = [
  "group",
  "identity",
  "role",
  "binding",
  "repo",
  "tag",
  "provider",
  "invite",
  "association",
  "eligibility",
  "elevation"
] as const

/** The list operation of a kind of resource. */
export const listOf = (real: Real, kind: Kind) =>
(principal: Principal.Principal, options: ListOptions): Effect.Effect<
  {
    readonly items: ReadonlyArray<{ readonly uid: string }>
    readonly nextPageToken?: string | undefined
    readonly totalCount: number
    readonly skipped: number
  },
  { readonly _tag: string }
> => {
  switch (kind) {
    case "group":
      return real.groups.list(principal, options)
    case "identity":
      return real.identities.list(principal, options)
    case "role":
      return real.roles.list(principal, options)
    case "binding":
      return real.bindings.list(principal, options)
    case "repo":
      return real.repos.list(principal, options)
    case "tag":
      return real.tags.list(principal, options)
    case "provider":
      return real.providers.list(principal, options)
    case "invite":
      return real.invites.list(principal, options)
    case "association":
      return real.associations.list(principal, options)
    case "eligibility":
      return real.elevations.listEligibilities(principal, options)
    case "elevation":
      return real.elevations.list(principal, options)
  }
}

/**
 * (b) Every capability check, at every group and at a group that does not exist: what a caller may delegate (its
 * grants, conditions aside) and the API's own check about the group (conditions decided).
 */
export const checkCapabilities = (model: Model, real: Real, label: string) =>
  Effect.gen(function*() {
    const groupsNow = model.of("group").map((g) => g.uid)
    for (const actor of actors) {
      const principal = principalOf(model, actor)
      const grants = yield* real.authorization.grants(principal)
      for (const group of [...groupsNow, real.missing]) {
        for (const cap of roleCaps) {
          const where = `${label} / ${actor} ${cap} at ${model.nameOf(group)} ${group}`
          assert.strictEqual(grants.holds(cap, group), model.holdsUnconditionally(actor, cap, group), where)
          assert.strictEqual(
            yield* real.authorization.allows(principal, cap, atGroup(group as Uid.Uid), grants),
            model.holds(actor, cap, group),
            `${where}: the API's check`
          )
        }
      }
    }
  }).pipe(Effect.orDie)

/** The actors the random checks pick from: every one with an identity (the system has none). */
const identityActors = actors.filter((a) => a !== "system")

/**
 * (d) No token acts beyond its narrowing (DECISIONS §21): a random identity's token narrowed to random capabilities
 * at a random group holds exactly what the model says its identity holds there and the narrowing keeps.
 */
export const checkNarrowing = (model: Model, real: Real, label: string, seed: number) =>
  Effect.gen(function*() {
    const random = lcg(seed ^ 0x5bd1e995)
    const actor = identityActors[random(identityActors.length)]!
    const groupsNow = model.of("group").map((g) => g.uid)
    const narrowing: Narrowing = {
      capabilities: roleCaps.filter(() => random(3) === 0),
      scope: groupsNow[random(groupsNow.length)]!
    }
    const principal = principalOf(model, actor, narrowing)
    const grants = yield* real.authorization.grants(principal)
    for (const group of groupsNow) {
      for (const cap of roleCaps) {
        assert.strictEqual(
          yield* real.authorization.allows(principal, cap, atGroup(group as Uid.Uid), grants),
          model.holdsNarrowed(actor, narrowing, cap, group),
          `${label} / ${actor}'s token narrowed to ${narrowing.capabilities.join(" ")} at ` +
            `${model.nameOf(narrowing.scope)}: ${cap} at ${model.nameOf(group)}`
        )
      }
    }
  }).pipe(Effect.orDie)

/** The kinds a resource search finds, by the model's kinds. */
const searched: ReadonlyArray<readonly [Kind, string]> = [
  ["group", "group"],
  ["identity", "identity"],
  ["binding", "role_binding"],
  ["repo", "repo"],
  ["provider", "identity_provider"],
  ["invite", "group_invite"]
]

/**
 * (e) A search answers exactly what its caller may list and may take the action on, each decided as an evaluation of
 * it would be (DECISIONS §21): a random identity's search of its own resources of a random kind, for a random
 * capability, conditions included.
 */
export const checkSearch = (model: Model, real: Real, label: string, seed: number) =>
  Effect.gen(function*() {
    const random = lcg(seed ^ 0x27d4eb2d)
    const actor = identityActors[random(identityActors.length)]!
    const [kind, type] = searched[random(searched.length)]!
    const cap = roleCaps[random(roleCaps.length)]!
    const found = yield* real.access.searchResources(principalOf(model, actor), {
      subject: { type: "identity", id: model.actorUid.get(actor) },
      action: { name: cap },
      resource: { type },
      page: { limit: 1000 }
    })
    const expected = model.of(kind)
      .filter((e) => model.visible(actor, e) && model.decides(actor, cap, model.governedAt(e), {}))
      .map((e) => e.uid)
      .sort()
    assert.deepStrictEqual(
      found.results.map((r) => model.nameOf(r.id)),
      expected.map((uid) => model.nameOf(uid)),
      `${label} / ${actor} searched ${type} for ${cap}`
    )
  }).pipe(Effect.orDie)

/**
 * (f) Every surface gives one answer to a question about one resource (DECISIONS §21): for a random identity at a
 * random group, in a random context, `Access.can`, an AuthZEN evaluation and an action search say of each capability
 * what the model decides, conditions included.
 */
export const checkDecisions = (model: Model, real: Real, label: string, seed: number) =>
  Effect.gen(function*() {
    const random = lcg(seed ^ 0x9e3779b9)
    const actor = identityActors[random(identityActors.length)]!
    const groupsNow = [...model.of("group").map((g) => g.uid), real.missing]
    const group = groupsNow[random(groupsNow.length)]!
    const context = { tier: random(2) === 0 ? "gold" : "silver" }
    const principal = principalOf(model, actor)
    const subject = { type: "identity", id: model.actorUid.get(actor) }
    const resource = { type: "group", id: group }
    const actions = new Set(yield* real.access.searchActions(principal, { subject, resource, context }))
    for (const cap of roleCaps) {
      const expected = model.decides(actor, cap, group, context)
      const where = `${label} / ${actor} ${cap} at ${model.nameOf(group)} in a ${context.tier} context`
      assert.strictEqual(
        yield* real.access.can(principal, cap, group as Uid.Uid, { context }),
        expected,
        `${where}: can`
      )
      const evaluated = yield* real.access.evaluate(principal, { subject, action: { name: cap }, resource, context })
      assert.strictEqual(evaluated.decision, expected, `${where}: an AuthZEN evaluation`)
      assert.strictEqual(actions.has(cap), expected, `${where}: an action search`)
    }
  }).pipe(Effect.orDie)

/** (c) The canary: nothing beyond the built-in roles, ever. */
export const checkCanary = (real: Real) =>
  Effect.gen(function*() {
    const canary = Principal.identity(real.canary as Uid.Uid)
    assert.strictEqual((yield* real.authorization.grants(canary)).grants.length, 0)
    assert.strictEqual((yield* real.groups.list(canary)).totalCount, 0)
    assert.strictEqual((yield* real.roles.list(canary)).totalCount, Role.builtIns.length)
  }).pipe(Effect.orDie)

// ---- The hierarchy ----
