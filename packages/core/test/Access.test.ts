import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Access, AccessEvaluation, Arbor, Principal, Role, RoleBindings, Roles, Store, Uid } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

/** An organization with a folder, its owner, and a viewer of the folder. */
const setUp = Effect.gen(function*() {
  const org = yield* organization("acme")
  const team = yield* folder(org.uid, "team")
  return {
    org,
    team,
    owner: yield* principalWith(org.uid, "owner", "owner"),
    reader: yield* principalWith(org.uid, "reader", "viewer", [team.uid])
  }
})

const ask = (subject: string, action: string, type: string, id: string, context?: object) => ({
  subject: { type: "identity", id: subject },
  action: { name: action },
  resource: { type, id },
  ...(context === undefined ? {} : { context })
})

describe("Access", () => {
  it.effect("decides as the API does: can, evaluate about oneself, explain names the binding, a revocation flips it", () =>
    withArbor(Effect.gen(function*() {
      const access = yield* Access.Access
      const { org, reader, team } = yield* setUp
      assert.isTrue(yield* access.can(reader, "groups.list", team.uid))
      assert.isFalse(yield* access.can(reader, "groups.list", org.uid))
      assert.isFalse(yield* access.can(reader, "groups.create", team.uid))
      const subfolder = yield* folder(team.uid, "sub")
      const held = yield* access.evaluate(
        reader,
        ask(reader.identityUid, "CAP_IAM_GROUPS_LIST", "group", subfolder.uid)
      )
      assert.isTrue(held.decision)
      const explained = yield* access.evaluate(
        reader,
        ask(reader.identityUid, "groups.list", "group", subfolder.uid, { explain: true })
      )
      const [grant] = explained.grantedBy!
      if (!(grant instanceof AccessEvaluation.Grant)) return assert.fail("its own binding is named to it")
      assert.deepInclude(grant, { group: team.uid, role: Role.builtInByName("viewer")!.uid })
      // A resource's group is where its capabilities are held: an identity in the folder is the folder's.
      const notHeld = yield* access.evaluate(
        reader,
        ask(reader.identityUid, "identity.delete", "identity", `${team.uid}/0123456789abcdef`, { explain: true })
      )
      assert.deepStrictEqual([notHeld.decision, notHeld.grantedBy], [false, []])
      // Revoked: the next decision is false, warm (`can`, on cached grants) or not.
      assert.isTrue(yield* access.can(reader, "groups.list", team.uid))
      yield* (yield* RoleBindings.RoleBindings).delete(Principal.system, grant.binding!)
      assert.isFalse(yield* access.can(reader, "groups.list", team.uid))
      assert.isFalse(
        (yield* access.evaluate(reader, ask(reader.identityUid, "groups.list", "group", team.uid))).decision
      )
    })))

  it.effect("inside a transaction, a decision sees the transaction's own writes, and nothing of them once undone", () =>
    Effect.provide(
      Effect.gen(function*() {
        const access = yield* Access.Access
        const store = yield* Store.Store
        const { org, reader, team } = yield* setUp
        assert.isFalse(yield* access.can(reader, "groups.create", team.uid))
        const bind = RoleBindings.RoleBindings.pipe(
          Effect.flatMap((bindings) =>
            bindings.create(Principal.system, org.uid, {
              identityUid: reader.identityUid,
              roleUid: Role.builtInByName("owner")!.uid
            })
          )
        )
        const inside = yield* store.transaction(Effect.gen(function*() {
          const before = yield* access.can(reader, "groups.create", team.uid)
          yield* bind
          const after = yield* access.can(reader, "groups.create", team.uid)
          return yield* Effect.fail([before, after] as const)
        })).pipe(Effect.flip)
        assert.deepStrictEqual(inside, [false, true])
        assert.isFalse(yield* access.can(reader, "groups.create", team.uid))
      }),
      Arbor.layerMemory
    ))

  it.effect("explain names only the bindings and roles the caller may list, the others as one unseen grant", () =>
    withArbor(Effect.gen(function*() {
      const access = yield* Access.Access
      const { org, owner, reader, team } = yield* setUp
      const explain = (caller: Principal.Principal) =>
        Effect.map(
          access.evaluate(caller, ask(owner.identityUid, "groups.list", "group", team.uid, { explain: true })),
          (decision) => decision.grantedBy
        )
      // The owner's binding is at the organization, where the team's viewer may not list bindings.
      assert.deepStrictEqual(yield* explain(reader), [AccessEvaluation.UnseenGrant.instance])
      // A binding at the team of a built-in role is named; one of a custom role of the organization, which the
      // viewer may not read, is not.
      const bindings = yield* RoleBindings.RoleBindings
      const editor = Role.builtInByName("editor")!.uid
      const seen = yield* bindings.create(Principal.system, team.uid, {
        identityUid: owner.identityUid,
        roleUid: editor
      })
      const custom = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
        name: "lister",
        capabilities: ["groups.list"]
      })
      yield* bindings.create(Principal.system, team.uid, { identityUid: owner.identityUid, roleUid: custom.uid })
      const byReader = yield* explain(reader)
      assert.deepStrictEqual(byReader, [
        new AccessEvaluation.Grant({ group: team.uid, role: editor, binding: seen.uid }),
        AccessEvaluation.UnseenGrant.instance
      ])
      // The owner sees all three.
      const byOwner = yield* explain(owner)
      assert.lengthOf(byOwner!, 3)
      assert.isTrue(byOwner!.every((g) => g instanceof AccessEvaluation.Grant))
    })))

  it.effect("about another identity only with role_bindings.list there; an unknown one is a false decision", () =>
    withArbor(Effect.gen(function*() {
      const access = yield* Access.Access
      const { org, owner, reader, team } = yield* setUp
      const refused = yield* Refusal.of(
        access.evaluate(reader, ask(owner.identityUid, "groups.list", "group", org.uid))
      )
      assert.strictEqual(refused._tag, "PermissionDenied")
      assert.isTrue((yield* access.evaluate(owner, ask(reader.identityUid, "groups.list", "group", team.uid))).decision)
      const nobody = Uid.makeChild(org.uid)
      assert.isFalse((yield* access.evaluate(owner, ask(nobody, "groups.list", "group", team.uid))).decision)
      // A narrowed token decides as it is narrowed.
      const narrowed = Principal.identity(owner.identityUid, { narrowed: { capabilities: ["groups.list"] } })
      assert.isFalse(
        (yield* access.evaluate(narrowed, ask(owner.identityUid, "groups.create", "group", org.uid))).decision
      )
      assert.deepStrictEqual(
        yield* access.searchActions(narrowed, {
          subject: { type: "identity", id: owner.identityUid },
          resource: { type: "group", id: team.uid }
        }),
        ["groups.list"]
      )
    })))

  it.effect("bad requests name the field: subject type, capability, resource type, uids, each batch item", () =>
    withArbor(Effect.gen(function*() {
      const access = yield* Access.Access
      const { owner, team } = yield* setUp
      const bad = (input: unknown) => Effect.map(Refusal.of(access.evaluate(owner, input)), fieldsOf)
      assert.deepStrictEqual(
        yield* bad({ ...ask(owner.identityUid, "groups.list", "group", team.uid), subject: { type: "user", id: "x" } }),
        ["subject.type", "subject.id"]
      )
      assert.deepStrictEqual(yield* bad(ask(owner.identityUid, "groups.fly", "group", team.uid)), ["action.name"])
      assert.deepStrictEqual(yield* bad(ask(owner.identityUid, "groups.list", "document", team.uid)), ["resource.type"])
      assert.deepStrictEqual(yield* bad({}), ["subject", "action", "resource"])
      // In a batch, the bad item is its own false decision, naming the field as the request wrote it.
      const batch = yield* access.evaluateMany(owner, {
        subject: { type: "identity", id: owner.identityUid },
        resource: { type: "group", id: team.uid },
        evaluations: [{ action: { name: "groups.list" } }, { action: { name: "nope" } }]
      })
      assert.isTrue("evaluations" in batch)
      const [held, refused] = "evaluations" in batch ? batch.evaluations : []
      assert.strictEqual(held?.decision, true)
      assert.deepInclude(refused, { decision: false })
      assert.strictEqual(refused?.error?.status, 400)
      assert.include(refused?.error?.message, "evaluations[1].action.name")
    })))

  it.effect("batches take the batch's defaults and stop as their semantic says", () =>
    withArbor(Effect.gen(function*() {
      const access = yield* Access.Access
      const { org, owner, reader, team } = yield* setUp
      const batch = (semantic?: string) =>
        access.evaluateMany(owner, {
          subject: { type: "identity", id: reader.identityUid },
          resource: { type: "group", id: team.uid },
          evaluations: [
            { action: { name: "groups.list" } },
            { action: { name: "groups.delete" } },
            { action: { name: "groups.list" }, resource: { type: "group", id: org.uid } },
            { action: { name: "repo.list" } }
          ],
          ...(semantic === undefined ? {} : { options: { evaluations_semantic: semantic } })
        })
      const decisions = (answer: unknown) =>
        (answer as { evaluations: ReadonlyArray<{ decision: boolean }> }).evaluations.map((d) => d.decision)
      assert.deepStrictEqual(decisions(yield* batch()), [true, false, false, true])
      assert.deepStrictEqual(decisions(yield* batch("deny_on_first_deny")), [true, false])
      assert.deepStrictEqual(decisions(yield* batch("permit_on_first_permit")), [true])
      const single = yield* access.evaluateMany(owner, ask(reader.identityUid, "groups.list", "group", team.uid))
      // Without items, one decision.
      assert.deepInclude(single, { decision: true })
      assert.notProperty(single, "evaluations")
    })))
})
