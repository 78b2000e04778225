import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import {
  Arbor,
  Group,
  Groups,
  Identities,
  MemoryStore,
  Principal,
  Role,
  RoleBindings,
  Roles,
  Secrets,
  Settings,
  Store,
  Uid
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const violations = (e: unknown) =>
  (e as { violations: ReadonlyArray<{ field: string; description: string }> }).violations.map((
    v
  ) => [v.field, v.description])

const nameRule =
  "must match the pattern ^[a-z0-9 ._-]{1,}$ and be at most 63 characters, with no space at either end and not only dots"

describe("Groups", () => {
  it.effect("folders nest Group.maxDepth levels below their organization; one more is INVALID_ARGUMENT on parent", () =>
    withArbor(Effect.gen(function*() {
      let deepest = (yield* organization("acme")).uid
      for (let level = 1; level <= Group.maxDepth; level++) deepest = (yield* folder(deepest, "f")).uid
      const refused = yield* Refusal.of((yield* Groups.Groups).create(Principal.system, deepest, { name: "f" }))
      assert.strictEqual(refused._tag, "InvalidArgument")
      assert.deepStrictEqual(violations(refused).map(([field]) => field), ["parent"])
      const groups = yield* (yield* Groups.Groups).list(Principal.system, { descendantsOf: deepest })
      assert.strictEqual(groups.items.length, 0)
    })))

  it.effect("creates a folder as a child of its parent, unverified, with equal create and update times", () =>
    withArbor(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T10:00:00.123Z"))
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "platform team")
      assert.match(org.uid, /^[0-9a-f]{40}$/)
      assert.match(team.uid, new RegExp(`^${org.uid}/[0-9a-f]{16}$`))
      assert.isFalse(team.verified)
      assert.strictEqual(team.description, "")
      assert.strictEqual(DateTime.formatIso(team.createTime), "2026-11-22T10:00:00.123Z")
      assert.isTrue(DateTime.Equivalence(team.createTime, team.updateTime))
      const back = yield* (yield* Groups.Groups).get(Principal.system, team.uid)
      assert.deepStrictEqual(back, team)
    })))

  describe("validation", () => {
    const create = (body: unknown) =>
      withArbor(Effect.gen(function*() {
        const org = yield* organization("acme")
        return yield* Refusal.of((yield* Groups.Groups).create(Principal.system, org.uid, body as any))
      }))

    it.effect("a missing or null name is one violation stating the pattern, in the spec's message form", () =>
      Effect.gen(function*() {
        for (const body of [{ description: "no name" }, { name: null }]) {
          const error = yield* create(body)
          assert.strictEqual(error._tag, "InvalidArgument")
          assert.deepStrictEqual(violations(error), [["name", nameRule]])
          assert.strictEqual(error.message, `Invalid argument: name: ${nameRule}`)
        }
      }))

    it.effect("a name off the pattern states the pattern; spaces at either end and dots alone are refused", () =>
      Effect.gen(function*() {
        for (const name of ["Acme", "acme!", "", "a".repeat(64), "tab\there", " ", " a", "a ", ".", "..", "..."]) {
          const error = yield* create({ name })
          assert.deepStrictEqual(violations(error), [["name", nameRule]], name)
        }
        for (const name of ["a b", ".a", "a.", "..a", "-", "_"]) {
          assert.strictEqual(
            (yield* withArbor(Effect.flatMap(organization("acme"), (org) => folder(org.uid, name)))).name,
            name
          )
        }
        const ok = yield* withArbor(Effect.flatMap(organization("acme"), (org) => folder(org.uid, "a".repeat(63))))
        assert.strictEqual(ok.name.length, 63)
      }))

    it.effect("every bad field is reported once, wrong types included", () =>
      Effect.gen(function*() {
        const error = yield* create({ name: 5, description: "line\nbreak" })
        assert.deepStrictEqual(violations(error).map(([field]) => field), ["name", "description"])
        for (
          const description of ["d".repeat(513), "a\u0000b", "a\u007fb", "a\u2028b", "\ud800", "a\u202eb", "\u2066x"]
        ) {
          assert.deepStrictEqual(violations(yield* create({ name: "x", description })), [[
            "description",
            "must be at most 512 characters with no line breaks, tabs, control characters or bidirectional overrides"
          ]], JSON.stringify(description))
        }
        const ok = yield* withArbor(Effect.flatMap(organization("acme"), (org) => (Effect.flatMap(Groups.Groups, (g) =>
          g.create(Principal.system, org.uid, { name: "x", description: "Déjà vu 👍 ٢" })))))
        assert.strictEqual(ok.description, "Déjà vu 👍 ٢")
        assert.deepStrictEqual(
          violations(yield* create("not an object")).map(([f]) =>
            f
          ),
          ["request"]
        )
      }))

    it.effect("output-only fields are ignored; an unknown one is refused by name, on create and update, nothing done", () =>
      withArbor(Effect.gen(function*() {
        const org = yield* organization("acme")
        const groups = yield* Groups.Groups
        const body = { name: "x", uid: "ffff", createTime: "1999-01-01T00:00:00Z", verified: true }
        const group = yield* groups.create(Principal.system, org.uid, body)
        assert.notStrictEqual(group.uid, "ffff")
        assert.isFalse(group.verified)
        const refused = yield* Refusal.of(groups.create(Principal.system, org.uid, { name: "y", color: "red" }))
        assert.deepStrictEqual(refused._tag === "InvalidArgument" && refused.violations.map((v) => ({ ...v })), [
          { field: "color", description: "is not a field of this request" }
        ])
        const patched = yield* Refusal.of(
          groups.update(Principal.system, group.uid, { description: "d", colour: "red" })
        )
        assert.deepStrictEqual(patched._tag === "InvalidArgument" && patched.violations.map((v) => v.field), ["colour"])
        assert.deepStrictEqual(
          (yield* groups.list(Principal.system, { childrenOf: org.uid })).items.map((g) => [g.name, g.description]),
          [["x", ""]]
        )
      })))

    it.effect("malformed uids are invalid arguments, never lookups", () =>
      withArbor(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        for (const uid of ["", "abc", "../x", `${"a".repeat(40)}/`, `${"A".repeat(40)}`, `${"a".repeat(40)}/123`]) {
          const error = yield* Refusal.of(groups.get(Principal.system, uid))
          assert.strictEqual(error._tag, "InvalidArgument", uid)
        }
      })))
  })

  it.effect("names are unique among siblings, on create and on rename", () =>
    withArbor(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const org = yield* organization("acme")
      const a = yield* folder(org.uid, "a")
      const b = yield* folder(org.uid, "b")
      yield* folder(a.uid, "b")
      const dup = yield* Refusal.of(folder(org.uid, "a"))
      assert.strictEqual(dup._tag, "AlreadyExists")
      const rename = yield* Refusal.of(groups.update(Principal.system, b.uid, { name: "a" }))
      assert.strictEqual(rename._tag, "AlreadyExists")
      assert.strictEqual((yield* groups.get(Principal.system, b.uid)).name, "b")
      const orgs = yield* Refusal.of(organization("acme"))
      assert.strictEqual(orgs._tag, "AlreadyExists")
    })))

  describe("update", () => {
    it.effect("without a mask changes only the fields present; updateTime advances", () =>
      withArbor(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const org = yield* organization("acme")
        const team = yield* groups.create(Principal.system, org.uid, { name: "team", description: "first" })
        yield* TestClock.adjust("1 second")
        const renamed = yield* groups.update(Principal.system, team.uid, { name: "team2" })
        assert.strictEqual(renamed.name, "team2")
        assert.strictEqual(renamed.description, "first")
        assert.isTrue(DateTime.Equivalence(renamed.createTime, team.createTime))
        assert.isTrue(DateTime.greaterThan(renamed.updateTime, team.updateTime))
        const again = yield* groups.update(Principal.system, team.uid, { description: "second" })
        assert.isTrue(DateTime.greaterThan(again.updateTime, renamed.updateTime), "advances within one clock tick")
        assert.deepStrictEqual(yield* groups.get(Principal.system, team.uid), again)
      })))

    it.effect("with a mask changes only the listed fields; * resets absent fields", () =>
      withArbor(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const org = yield* organization("acme")
        const team = yield* groups.create(Principal.system, org.uid, { name: "team", description: "first" })
        const masked = yield* groups.update(
          Principal.system,
          team.uid,
          { name: "ignored", description: "d" },
          "description"
        )
        assert.deepStrictEqual([masked.name, masked.description], ["team", "d"])
        const star = yield* groups.update(Principal.system, team.uid, { name: "renamed" }, "*")
        assert.deepStrictEqual([star.name, star.description], ["renamed", ""])
        const cleared = yield* groups.update(
          Principal.system,
          team.uid,
          { description: "x" },
          "update_time, description"
        )
        assert.strictEqual(cleared.description, "x")
        const emptyName = yield* Refusal.of(groups.update(Principal.system, team.uid, {}, "name"))
        assert.deepStrictEqual(violations(emptyName), [["name", nameRule]])
      })))

    it.effect("an unknown field in the mask is an invalid argument and changes nothing", () =>
      withArbor(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const org = yield* organization("acme")
        const team = yield* folder(org.uid, "team")
        const error = yield* Refusal.of(groups.update(Principal.system, team.uid, { name: "x" }, "name,colour"))
        assert.deepStrictEqual(violations(error), [["updateMask", "unknown field 'colour'"]])
        assert.deepStrictEqual(yield* groups.get(Principal.system, team.uid), team)
      })))
  })

  describe("delete", () => {
    it.effect("refuses while anything is below, naming the first kind in the decided order", () =>
      withArbor(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const org = yield* organization("acme")
        const team = yield* folder(org.uid, "team")
        const sub = yield* folder(team.uid, "sub")
        const identity = yield* (yield* Identities.Identities).create(Principal.system, team.uid, {
          name: "ci",
          claimMatch: claimMatch("ci")
        })
        const refusal = yield* Refusal.of(groups.delete(Principal.system, team.uid))
        assert.strictEqual(refusal._tag, "FailedPrecondition")
        assert.strictEqual(refusal.message, "Precondition failed: cannot delete group with child groups")
        assert.deepStrictEqual(refusal._tag === "FailedPrecondition" && refusal.violations.map((v) => v.type), [
          "RESOURCE_NOT_EMPTY"
        ])
        yield* groups.delete(Principal.system, sub.uid)
        const next = yield* Refusal.of(groups.delete(Principal.system, team.uid))
        assert.strictEqual(next.message, "Precondition failed: cannot delete group with child identities")
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, team.uid, {
          identityUid: identity.uid,
          roleUid: Role.builtInByName("viewer")!.uid
        })
        const role = yield* (yield* Roles.Roles).create(Principal.system, team.uid, {
          name: "r",
          capabilities: ["groups.list"]
        })
        yield* (yield* Identities.Identities).delete(Principal.system, identity.uid)
        assert.strictEqual(
          (yield* Refusal.of(groups.delete(Principal.system, team.uid))).message,
          "Precondition failed: cannot delete group with child roles"
        )
        yield* (yield* Roles.Roles).delete(Principal.system, role.uid)
        yield* groups.delete(Principal.system, team.uid)
        assert.strictEqual((yield* Refusal.of(groups.get(Principal.system, team.uid)))._tag, "NotFound")
        assert.strictEqual((yield* Refusal.of(groups.delete(Principal.system, team.uid)))._tag, "NotFound")
      })))

    it.effect("a role binding alone below a group blocks it", () =>
      withArbor(Effect.gen(function*() {
        const org = yield* organization("acme")
        const team = yield* folder(org.uid, "team")
        yield* principalWith(org.uid, "viewer", "viewer", [team.uid])
        const error = yield* Refusal.of((yield* Groups.Groups).delete(Principal.system, team.uid))
        assert.strictEqual(error.message, "Precondition failed: cannot delete group with child role bindings")
      })))
  })

  describe("organizations", () => {
    it.effect("only the system principal and configured platform admins create root groups", () =>
      Effect.gen(function*() {
        const store = Layer.succeed(Store.Store, yield* MemoryStore.make)
        const engine = (settings: Settings.SettingsService) =>
          Arbor.layer.pipe(
            Layer.provide(store),
            Layer.provide(Secrets.layerEphemeral),
            Layer.provide(Layer.succeed(Settings.Settings, settings))
          )
        const owner = yield* Effect.gen(function*() {
          const org = yield* organization("acme")
          return yield* principalWith(org.uid, "owner", "owner")
        }).pipe(Effect.provide(engine({ allowLoopbackHttpIssuers: false, platformAdmins: [] })))
        const createRoot = (settings: Settings.SettingsService) =>
          Effect.flatMap(Groups.Groups, (groups) => groups.createRoot(owner, { name: "other" })).pipe(
            Effect.provide(engine(settings))
          )
        const denied = yield* Refusal.of(createRoot({ allowLoopbackHttpIssuers: false, platformAdmins: [] }))
        assert.strictEqual(
          denied.message,
          "Permission 'groups.create' denied on resource 'root' (or it might not exist)"
        )
        const admitted = yield* createRoot({ allowLoopbackHttpIssuers: false, platformAdmins: [owner.identityUid] })
        assert.strictEqual(admitted.name, "other")
        // The platform admin who made it owns it, from the same write: nobody is left unable to see it.
        const owners = yield* Effect.flatMap(
          RoleBindings.RoleBindings,
          (bindings) => bindings.list(Principal.system, { childrenOf: admitted.uid })
        ).pipe(Effect.provide(engine({ allowLoopbackHttpIssuers: false, platformAdmins: [] })))
        assert.deepStrictEqual(
          owners.items.map((b) => [b.identity.uid, b.role.name]),
          [[owner.identityUid, "owner"]]
        )
      }))

    it.effect("an organization made with an owner that does not exist is not made at all", () =>
      withArbor(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const missing = Uid.makeRoot()
        const refused = yield* Refusal.of(
          groups.createRoot(Principal.system, { name: "ownerless" }, { owner: missing })
        )
        assert.strictEqual(refused._tag, "NotFound")
        const listed = yield* groups.list(Principal.system, { inRoot: true, name: "ownerless" })
        assert.lengthOf(listed.items, 0)
      })))
  })
})
