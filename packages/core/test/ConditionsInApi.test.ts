/**
 * A binding's condition gives one answer everywhere (DECISIONS §21): the API's own checks about one resource decide
 * it with that resource's attributes as `Access.can` does, and a list shows an item exactly when its caller could get
 * it, with exact counts and pages; what delegates never rests on a condition.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as TestClock from "effect/TestClock"
import {
  Access,
  Arbor,
  Capability,
  GroupInvites,
  Groups,
  Identities,
  Principal,
  Role,
  RoleBindings,
  Roles,
  Subscriptions
} from "../src/index.js"
import { claimMatch, folder, organization } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const roleUid = (name: string) => Role.builtInByName(name)!.uid

/**
 * An organization `acme` with folder `f` and its children `a`, `b`, `ab`; an identity bound at `f` as `role` under
 * `expression`.
 */
const setUp = (role: string, expression: string) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse("2026-11-30T10:00:00Z"))
    const org = yield* organization("acme")
    const f = yield* folder(org.uid, "f")
    const a = yield* folder(f.uid, "a")
    const b = yield* folder(f.uid, "b")
    const ab = yield* folder(f.uid, "ab")
    const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
      name: "contractor",
      claimMatch: claimMatch("contractor")
    })
    yield* (yield* RoleBindings.RoleBindings).create(Principal.system, f.uid, {
      identityUid: identity.uid,
      roleUid: roleUid(role),
      condition: { expression, title: "part of f" }
    })
    return { org, f, a, b, ab, identity, principal: Principal.identity(identity.uid) }
  })

/** The tag of `effect`'s failure, or "succeeded". */
const outcome = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.either(effect), (result) => Either.isRight(result) ? "succeeded" : result.left._tag)

describe("conditions in the API's own checks and lists (DECISIONS §21)", () => {
  it.effect("a condition on the resource's name: get, update and delete answer as Access.can does", () =>
    withArbor(Effect.gen(function*() {
      const { a, ab, b, f, principal } = yield* setUp("owner", `resource.name.endsWith("a")`)
      const groups = yield* Groups.Groups
      const access = yield* Access.Access
      for (const [group, expected] of [[a, true], [b, false], [ab, false], [f, false]] as const) {
        assert.strictEqual(yield* access.can(principal, "groups.list", group.uid), expected, group.name)
        assert.strictEqual(
          yield* outcome(groups.get(principal, group.uid)),
          expected ? "succeeded" : "PermissionDenied"
        )
      }
      assert.strictEqual(
        yield* outcome(groups.update(principal, a.uid, { description: "mine" }, "description")),
        "succeeded"
      )
      assert.strictEqual(
        yield* outcome(groups.update(principal, b.uid, { description: "not mine" }, "description")),
        "PermissionDenied"
      )
      // Creating below `a` is a check about `a`: held there.
      const below = yield* groups.create(principal, a.uid, { name: "x" })
      assert.strictEqual(yield* outcome(groups.create(principal, b.uid, { name: "x" })), "PermissionDenied")
      // `x` is no name ending in "a": its own get is refused, its deletion too.
      assert.strictEqual(yield* outcome(groups.delete(principal, below.uid)), "PermissionDenied")
      assert.strictEqual(yield* outcome(groups.delete(principal, a.uid)), "FailedPrecondition")
    })))

  it.effect("a list shows an item exactly when its caller could get it: counts and pages exact", () =>
    withArbor(Effect.gen(function*() {
      const { f, org, principal } = yield* setUp("viewer", `resource.name.startsWith("keep")`)
      const groups = yield* Groups.Groups
      // 40 more children of f, every third kept; and one unconditional viewer binding at a sibling of f.
      const kept = new Set<string>()
      for (let i = 0; i < 40; i++) {
        const child = yield* folder(f.uid, `${i % 3 === 0 ? "keep" : "drop"}-${String(i).padStart(2, "0")}`)
        if (i % 3 === 0) kept.add(child.uid)
      }
      const other = yield* folder(org.uid, "other")
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, other.uid, {
        identityUid: principal._tag === "Identity" ? principal.uid : "",
        roleUid: roleUid("viewer")
      })
      const expected = new Set([...kept, other.uid])
      for (const options of [{ descendantsOf: org.uid }, { childrenOf: f.uid }, {}]) {
        const seen: Array<string> = []
        let pageToken: string | undefined
        do {
          const page = yield* groups.list(principal, { ...options, pageSize: 4, ...(pageToken ? { pageToken } : {}) })
          const total =
            [...expected].filter((uid) => ("childrenOf" in options ? uid.startsWith(`${f.uid}/`) : true)).length
          assert.strictEqual(page.totalCount, total, JSON.stringify(options))
          seen.push(...page.items.map((g) => g.uid))
          pageToken = page.nextPageToken
        } while (pageToken !== undefined)
        for (const uid of seen) assert.isTrue(expected.has(uid), `${uid} listed, ${JSON.stringify(options)}`)
        // Each listed item can be got: with the count above, the list is exactly what it may get.
        for (const uid of seen) assert.strictEqual(yield* outcome(groups.get(principal, uid)), "succeeded")
      }
      // By skip too: the same items as by pages.
      const skipped = yield* groups.list(principal, { childrenOf: f.uid, pageSize: 3, skip: 12 })
      assert.deepStrictEqual(skipped.items.map((g) => g.uid), [...kept].sort().slice(12, 15))
    })))

  it.effect("a condition on the moment alone decides a whole list at once, as it decides each get", () =>
    withArbor(Effect.gen(function*() {
      const { f, principal } = yield* setUp(
        "viewer",
        `request.time.getHours("UTC") >= 9 && request.time.getHours("UTC") < 17`
      )
      const identities = yield* Identities.Identities
      const inF = yield* identities.create(Principal.system, f.uid, { name: "bot", claimMatch: claimMatch("bot") })
      assert.deepStrictEqual((yield* identities.list(principal, { descendantsOf: f.uid })).items.map((i) => i.uid), [
        inF.uid
      ])
      assert.strictEqual(yield* outcome(identities.get(principal, inF.uid)), "succeeded")
      yield* TestClock.adjust("8 hours")
      assert.strictEqual((yield* identities.list(principal, { descendantsOf: f.uid })).totalCount, 0)
      assert.strictEqual(yield* outcome(identities.get(principal, inF.uid)), "PermissionDenied")
    })))

  it.effect("a condition on the resource's kind decides each kind's checks apart", () =>
    withArbor(Effect.gen(function*() {
      const { a, f, principal } = yield* setUp("viewer", `resource.kind == "identity"`)
      const inF = yield* (yield* Identities.Identities).create(Principal.system, f.uid, {
        name: "bot",
        claimMatch: claimMatch("bot")
      })
      assert.strictEqual(yield* outcome((yield* Identities.Identities).get(principal, inF.uid)), "succeeded")
      assert.strictEqual(yield* outcome((yield* Groups.Groups).get(principal, a.uid)), "PermissionDenied")
      assert.strictEqual((yield* (yield* Groups.Groups).list(principal, { descendantsOf: f.uid })).totalCount, 0)
    })))

  it.effect("what delegates never rests on a condition, on any surface that decides", () =>
    withArbor(Effect.gen(function*() {
      const { a, identity, principal } = yield* setUp("owner", "true")
      const access = yield* Access.Access
      for (const capability of Capability.delegating) {
        assert.isFalse(yield* access.can(principal, capability, a.uid), capability)
      }
      // The rest an owner holds, it holds here by its condition.
      assert.isTrue(yield* access.can(principal, "groups.delete", a.uid))
      const bind = (yield* RoleBindings.RoleBindings).create(principal, a.uid, {
        identityUid: identity.uid,
        roleUid: roleUid("viewer")
      })
      assert.strictEqual(yield* outcome(bind), "PermissionDenied")
      const invite = (yield* GroupInvites.GroupInvites).create(principal, a.uid, {
        roleUid: roleUid("viewer"),
        ttl: "3600s"
      })
      assert.strictEqual(yield* outcome(invite), "PermissionDenied")
      const subscribe = (yield* Subscriptions.Subscriptions).create(principal, a.uid, {
        sink: "https://hooks.example.invalid/arbor"
      })
      assert.strictEqual(yield* outcome(subscribe), "PermissionDenied")
      assert.strictEqual(yield* outcome((yield* Groups.Groups).create(principal, a.uid, { name: "x" })), "succeeded")
    })))

  it.effect("a list's conditions share one budget: past it the rest is not shown, and the list still answers", () =>
    withArbor(Effect.gen(function*() {
      // Some hundreds of units a row: fifty turns of a comprehension over the row's name.
      const numbers = Array.from({ length: 50 }, (_, i) => i).join(", ")
      const { f, principal } = yield* setUp("viewer", `[${numbers}].all(n, resource.name != string(n))`)
      for (let i = 0; i < 400; i++) yield* folder(f.uid, `row-${String(i).padStart(3, "0")}`)
      const groups = yield* Groups.Groups
      const listed = yield* groups.list(principal, { childrenOf: f.uid, pageSize: 200 })
      assert.isAbove(listed.totalCount, 40, "what the budget pays for is shown")
      assert.isBelow(listed.totalCount, 403, "what it does not, is not")
      // One by one, each is decided with a budget of its own.
      const last = yield* groups.list(Principal.system, { childrenOf: f.uid, orderBy: "name desc", pageSize: 1 })
      assert.strictEqual(yield* outcome(groups.get(principal, last.items[0]!.uid)), "succeeded")
    })))

  it.effect("a rename that could make a name condition hold needs what binding its role there needs", () =>
    withArbor(Effect.gen(function*() {
      const { a, f, org } = yield* setUp("viewer", "true")
      const child = yield* folder(a.uid, "c")
      const identities = yield* Identities.Identities
      const bindings = yield* RoleBindings.RoleBindings
      const person = (name: string) =>
        Effect.map(identities.create(Principal.system, org.uid, { name, claimMatch: claimMatch(name) }), (i) => i.uid)
      // Bob would own what is named `secret` in f, and what lies below a `secret` folder's path.
      const bob = yield* person("bob")
      yield* bindings.create(Principal.system, f.uid, {
        identityUid: bob,
        roleUid: roleUid("owner"),
        condition: { expression: `resource.name == "secret"` }
      })
      // Mallory may rename folders in f, and nothing else.
      const renamer = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "renamer",
        capabilities: ["groups.update", "groups.list"]
      })
      const mallory = yield* person("mallory")
      yield* bindings.create(Principal.system, f.uid, { identityUid: mallory, roleUid: renamer.uid })
      const groups = yield* Groups.Groups
      const rename = (who: string, group: string, name: string) =>
        outcome(groups.update(Principal.identity(who as never), group, { name }, "name"))
      assert.strictEqual(yield* rename(mallory, a.uid, "secret"), "PermissionDenied")
      assert.isFalse(yield* (yield* Access.Access).can(Principal.identity(bob as never), "groups.delete", a.uid))
      // A description is no name: changed freely.
      assert.strictEqual(
        yield* outcome(groups.update(Principal.identity(mallory as never), a.uid, { description: "x" }, "description")),
        "succeeded"
      )
      // A condition on a path below: renaming the folder above it changes that path too.
      const carol = yield* person("carol")
      yield* bindings.create(Principal.system, child.uid, {
        identityUid: carol,
        roleUid: roleUid("editor"),
        condition: { expression: `resource.path.startsWith("acme/f/b")` }
      })
      yield* bindings.delete(
        Principal.system,
        (yield* bindings.list(Principal.system, { identity: bob })).items[0]!.uid
      )
      assert.strictEqual(yield* rename(mallory, a.uid, "b2"), "PermissionDenied")
      // Whoever holds what those bindings give may rename.
      const owner = yield* person("owner")
      yield* bindings.create(Principal.system, org.uid, { identityUid: owner, roleUid: roleUid("owner") })
      assert.strictEqual(yield* rename(owner, a.uid, "b2"), "succeeded")
    })))
})
