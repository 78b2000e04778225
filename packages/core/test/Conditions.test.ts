/**
 * Role bindings with a condition (DECISIONS §21): a CEL expression over the moment, the resource and the request's
 * context, checked when written and decided on every decision about one resource.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as TestClock from "effect/TestClock"
import type { Errors } from "../src/index.js"
import { Access, Arbor, Condition, Groups, Identities, Principal, Role, RoleBindings, Roles } from "../src/index.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const editor = Role.builtInByName("editor")!.uid

/** An organization `acme` with folders `prod` and `dev`, and an identity with no binding, on Sunday 2026-11-29. */
const setUp = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-11-29T00:00:00Z"))
  const org = yield* organization("acme")
  const prod = yield* folder(org.uid, "prod")
  const dev = yield* folder(org.uid, "dev")
  const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
    name: "contractor",
    claimMatch: claimMatch("contractor")
  })
  const principal = Principal.identity(identity.uid)
  const bindings = yield* RoleBindings.RoleBindings
  const bind = (group: string, expression: string, title = "") =>
    bindings.create(Principal.system, group, {
      identityUid: identity.uid,
      roleUid: editor,
      condition: { expression, title }
    })
  return { org, prod, dev, identity, principal, bind, access: yield* Access.Access, bindings }
})

/** The refusal of `effect`: its tag and first violation, or a failure saying it succeeded. */
const refusalOf = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.isRight(result)
      ? Effect.dieMessage(`expected a refusal, got ${JSON.stringify(result.right)}`)
      : Effect.succeed({
        tag: result.left._tag,
        violation: (result.left as unknown as Errors.InvalidArgument).violations?.[0]
      }))

describe("Conditions (DECISIONS §21)", () => {
  it.effect("a condition on the time grants only while it holds, decided at each call with the cache warm", () =>
    withArbor(Effect.gen(function*() {
      const { access, bind, principal, prod } = yield* setUp
      // Working hours, Monday to Friday, in UTC.
      yield* bind(
        prod.uid,
        "request.time.getDayOfWeek() >= 1 && request.time.getDayOfWeek() <= 5 && " +
          "request.time.getHours() >= 9 && request.time.getHours() < 17",
        "working hours"
      )
      const holds = access.can(principal, "repo.create", prod.uid)
      assert.isFalse(yield* holds, "Sunday")
      yield* TestClock.adjust("1 day")
      assert.isFalse(yield* holds, "Monday 00:00")
      yield* TestClock.adjust("9 hours")
      assert.isTrue(yield* holds, "Monday 09:00")
      assert.isTrue(yield* holds, "warm")
      yield* TestClock.adjust("8 hours")
      assert.isFalse(yield* holds, "Monday 17:00")
    })))

  it.effect("a condition on the resource's path grants below one folder; its names are read when it wants them", () =>
    withArbor(Effect.gen(function*() {
      const { access, bind, dev, org, principal, prod } = yield* setUp
      yield* bind(org.uid, `resource.path.startsWith("acme/dev")`, "development only")
      const api = yield* folder(dev.uid, "api")
      assert.isTrue(yield* access.can(principal, "repo.create", dev.uid))
      assert.isTrue(yield* access.can(principal, "repo.create", api.uid))
      assert.isFalse(yield* access.can(principal, "repo.create", prod.uid))
      assert.isFalse(yield* access.can(principal, "repo.create", org.uid))
      // A rename changes what the path says.
      yield* (yield* Groups.Groups).update(Principal.system, prod.uid, { name: "dev-two" }, "name")
      assert.isTrue(yield* access.can(principal, "repo.create", prod.uid))
    })))

  it.effect("a condition reads the resource's properties and the context an embedder gives `can`", () =>
    withArbor(Effect.gen(function*() {
      const { access, bind, identity, principal, prod } = yield* setUp
      yield* bind(prod.uid, `resource.properties.ownerID == subject.id && context.ticket.startsWith("CHG-")`)
      const can = (ownerID: string, ticket: unknown) =>
        access.can(principal, "repo.update", prod.uid, {
          resource: { kind: "todo", properties: { ownerID } },
          context: { ticket }
        })
      assert.isTrue(yield* can(identity.uid, "CHG-1"))
      assert.isFalse(yield* can("someone-else", "CHG-1"))
      assert.isFalse(yield* can(identity.uid, "INC-1"))
      // A condition that cannot be decided denies: a missing attribute, a value of the wrong type.
      assert.isFalse(yield* access.can(principal, "repo.update", prod.uid))
      assert.isFalse(yield* can(identity.uid, 42))
      // Past the limits of what a condition is given: undecided, so denied.
      assert.isFalse(yield* can(identity.uid, Array.from({ length: Condition.maxItems + 1 }, () => "CHG-1")))
    })))

  it("only the properties and context a condition reads are held to the limits", () => {
    const many = Object.fromEntries(Array.from({ length: Condition.maxValues + 1 }, (_, i) => [`k${i}`, i]))
    const attributes: Condition.Attributes = {
      time: 0,
      resource: { uid: "r", kind: "todo", properties: many },
      subject: { id: "s", type: "identity", properties: many },
      action: { name: "repo.update", properties: many },
      context: many
    }
    const decided = (expression: string) => Condition.compiled(expression).decide(attributes)
    const errorOf = (expression: string) => {
      const outcome = decided(expression)
      return outcome.held ? "held" : outcome.error ?? "not held"
    }
    // Read: past the limits, undecided, so denied however it would come out.
    assert.match(errorOf(`has(resource.properties.k1)`), /at most 10000 values/)
    assert.match(errorOf(`size(subject.properties) > 0`), /at most 10000 values/)
    assert.match(errorOf(`has(action.properties.k1)`), /at most 10000 values/)
    assert.match(errorOf(`has(context.k1)`), /at most 10000 values/)
    // Not read: decided as if they were small.
    assert.deepStrictEqual(decided(`resource.kind == "todo" && subject.id == "s" && action.name == "repo.update"`), {
      held: true
    })
  })

  it.effect("a condition is checked when written, and a refusal points into the expression", () =>
    withArbor(Effect.gen(function*() {
      const { bind, bindings, identity, prod } = yield* setUp
      const refused = (expression: string) => refusalOf(bind(prod.uid, expression))
      const unknown = yield* refused("resource.nmae == 'x'")
      assert.strictEqual(unknown.tag, "InvalidArgument")
      assert.strictEqual(unknown.violation?.field, "condition.expression")
      assert.match(unknown.violation!.description, /nmae.*\(at character \d+\)/)
      assert.match((yield* refused("request.time.getHours() + 'x' == 'y'")).violation!.description, /overload/)
      assert.match((yield* refused("1 +")).violation!.description, /at character 4/)
      assert.match((yield* refused("resource.name")).violation!.description, /must be a bool/)
      assert.match((yield* refused("nobody == 1")).violation!.description, /nobody/)
      assert.match(
        (yield* refused("context.a.all(x, context.b.exists(y, x == y))")).violation!.description,
        /may not be nested/
      )
      assert.match((yield* refused("x".repeat(1001))).violation!.description, /at most 1000 characters/)
      // Nothing was written.
      const listed = yield* bindings.list(Principal.system, { identity: identity.uid })
      assert.deepStrictEqual(listed.items, [])
      // Updated to a condition: checked as well; removed: grants everywhere in its group.
      const bound = yield* bindings.create(Principal.system, prod.uid, { identityUid: identity.uid, roleUid: editor })
      const badUpdate = yield* refusalOf(
        bindings.update(Principal.system, bound.uid, { condition: { expression: "1" } }, "condition")
      )
      assert.strictEqual(badUpdate.violation?.field, "condition.expression")
      const updated = yield* bindings.update(
        Principal.system,
        bound.uid,
        { condition: { expression: "false", title: "never" } },
        "condition"
      )
      assert.deepInclude(updated.condition, { expression: "false", title: "never", description: "" })
    })))

  it.effect("explain names the condition that held, and the ones that did not", () =>
    withArbor(Effect.gen(function*() {
      const { access, bind, identity, prod } = yield* setUp
      yield* bind(prod.uid, `context.reason != ""`, "with a reason")
      const evaluate = (context: Record<string, unknown>) =>
        access.evaluate(Principal.system, {
          subject: { type: "identity", id: identity.uid },
          action: { name: "repo.create" },
          resource: { type: "group", id: prod.uid },
          context: { explain: true, ...context }
        })
      const granted = yield* evaluate({ reason: "incident 7" })
      assert.isTrue(granted.decision)
      assert.deepInclude(granted.grantedBy?.[0], {
        condition: { expression: `context.reason != ""`, title: "with a reason", held: true }
      })
      const missing = yield* evaluate({})
      assert.isFalse(missing.decision)
      assert.deepStrictEqual(missing.grantedBy, [])
      assert.strictEqual(missing.unmetConditions?.[0]?.condition?.held, false)
      assert.match(missing.unmetConditions?.[0]?.condition?.error ?? "", /reason/)
    })))

  it.effect("conditional grants count in decisions only: not in what one may list or delegate", () =>
    withArbor(Effect.gen(function*() {
      const { bind, bindings, identity, principal, prod } = yield* setUp
      yield* bind(prod.uid, "true")
      // An owner by condition cannot bind others: delegation rests on unconditional grants.
      yield* bindings.create(Principal.system, prod.uid, {
        identityUid: identity.uid,
        roleUid: Role.builtInByName("owner")!.uid,
        condition: { expression: "true" }
      })
      const refused = yield* refusalOf(
        bindings.create(principal, prod.uid, { identityUid: identity.uid, roleUid: Role.builtInByName("viewer")!.uid })
      )
      assert.strictEqual(refused.tag, "PermissionDenied")
    })))

  it.effect("an owner binding with a condition keeps no organization owned", () =>
    withArbor(Effect.gen(function*() {
      const { bindings, org } = yield* setUp
      const boss = yield* principalWith(org.uid, "boss", "owner")
      const [own] = (yield* bindings.list(Principal.system, { identity: boss.identityUid })).items
      const refused = yield* refusalOf(
        bindings.update(Principal.system, own!.uid, { condition: { expression: "true" } }, "condition")
      )
      assert.strictEqual(refused.tag, "FailedPrecondition")
    })))

  it.effect("an identity with a conditional grant cannot be taken over by one who lacks that grant", () =>
    withArbor(Effect.gen(function*() {
      const { bind, identity, org, prod } = yield* setUp
      yield* bind(prod.uid, `context.reason != ""`)
      // Someone who may update identities in the organization, and who holds nothing at prod.
      const updater = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "updater",
        capabilities: ["identity.update", "identity.list"]
      })
      const mallory = yield* principalWith(org.uid, "mallory", "viewer", [])
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: mallory.identityUid,
        roleUid: updater.uid
      })
      const repoint = (yield* Identities.Identities).update(mallory, identity.uid, {
        claimMatch: claimMatch("mallory's own")
      })
      assert.strictEqual((yield* refusalOf(repoint)).tag, "PermissionDenied")
    })))
})
