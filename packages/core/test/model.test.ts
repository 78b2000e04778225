/**
 * Model-based tests: random sequences of writes by random callers, each checked against a simple reference model
 * of the rules, and after every step every caller's lists (paged to the end with random page sizes and skips) and
 * capability checks compared with the model's answers. A canary identity is never bound and must never see or do
 * anything beyond the built-in roles.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as TestClock from "effect/TestClock"
import {
  Arbor,
  Authorization,
  Capability,
  Groups,
  Identities,
  Principal,
  Role,
  RoleBindings,
  Roles
} from "../src/index.js"
import type { ListOptions } from "../src/Lists.js"
import * as Uid from "../src/Uid.js"
import { claimMatch } from "./fixtures.js"

type Cap = Capability.Capability
type Kind = "group" | "identity" | "role" | "binding"

interface Entity {
  readonly kind: Kind
  readonly uid: string
  readonly parent: string | null
  name: string
  readonly createTime: number
  updateTime: number
  caps?: ReadonlyArray<Cap>
  identityUid?: string
  roleUid?: string
}

const actors = ["system", "alice", "bob", "carol", "canary"] as const
type Actor = typeof actors[number]

const roleCaps: ReadonlyArray<Cap> = [
  "groups.list",
  "groups.create",
  "groups.update",
  "groups.delete",
  "identity.list",
  "identity.create",
  "identity.delete",
  "roles.list",
  "roles.create",
  "roles.update",
  "roles.delete",
  "role_bindings.list",
  "role_bindings.create",
  "role_bindings.delete"
]

/** The reference model: plain maps and the rules, written as directly as possible. */
class Model {
  readonly entities = new Map<string, Entity>()
  /** Every group uid ever created, deleted ones included, so commands can aim at missing groups. */
  readonly knownGroups: Array<string> = []
  readonly actorUid = new Map<Actor, string>()
  now = 0

  constructor() {
    for (const r of Role.builtIns) {
      this.entities.set(r.uid, {
        kind: "role",
        uid: r.uid,
        parent: null,
        name: r.name,
        createTime: 0,
        updateTime: 0,
        caps: r.capabilities
      })
    }
  }

  of(kind: Kind): Array<Entity> {
    return [...this.entities.values()].filter((e) => e.kind === kind)
  }

  pick(kind: Kind | "known-group", n: number): string | undefined {
    const pool = kind === "known-group" ? this.knownGroups : this.of(kind).map((e) => e.uid)
    return pool.length === 0 ? undefined : pool[n % pool.length]
  }

  holds(actor: Actor, cap: Cap, group: string): boolean {
    if (actor === "system") return true
    const identity = this.actorUid.get(actor)
    return this.of("binding").some((b) =>
      b.identityUid === identity && Uid.isAncestorOrSelf(b.parent!, group) &&
      (this.entities.get(b.roleUid!)?.caps ?? []).includes(cap)
    )
  }

  visible(actor: Actor, e: Entity): boolean {
    switch (e.kind) {
      case "group":
        return this.holds(actor, "groups.list", e.uid)
      case "identity":
        return this.holds(actor, "identity.list", e.parent!)
      case "role":
        return e.parent === null || this.holds(actor, "roles.list", e.parent)
      case "binding":
        return this.holds(actor, "role_bindings.list", e.parent!)
    }
  }

  hasChildren(uid: string): boolean {
    return [...this.entities.values()].some((e) => Uid.isAncestor(uid, e.uid))
  }

  siblingNamed(kind: Kind, parent: string | null, name: string, except?: string): boolean {
    return this.of(kind).some((e) => e.parent === parent && e.name === name && e.uid !== except)
  }

  add(e: Entity) {
    this.entities.set(e.uid, e)
    if (e.kind === "group") this.knownGroups.push(e.uid)
  }

  nextUpdate(e: Entity) {
    e.updateTime = Math.max(this.now, e.updateTime + 1)
  }
}

type Command =
  | {
    readonly op: "createGroup"
    readonly actor: Actor
    readonly parent: number
    readonly root: boolean
    readonly name: string
  }
  | { readonly op: "renameGroup"; readonly actor: Actor; readonly target: number; readonly name: string }
  | { readonly op: "deleteGroup"; readonly actor: Actor; readonly target: number }
  | { readonly op: "createIdentity"; readonly actor: Actor; readonly parent: number; readonly name: string }
  | { readonly op: "deleteIdentity"; readonly actor: Actor; readonly target: number }
  | {
    readonly op: "createRole"
    readonly actor: Actor
    readonly parent: number
    readonly name: string
    readonly caps: ReadonlyArray<Cap>
  }
  | { readonly op: "updateRole"; readonly actor: Actor; readonly target: number; readonly caps: ReadonlyArray<Cap> }
  | { readonly op: "deleteRole"; readonly actor: Actor; readonly target: number }
  | {
    readonly op: "bind"
    readonly actor: Actor
    readonly parent: number
    readonly identity: number
    readonly role: number
  }
  | { readonly op: "unbind"; readonly actor: Actor; readonly target: number }

const actorArb = FastCheck.constantFrom<Actor>("system", "system", "alice", "bob", "carol", "canary")
const nameArb = FastCheck.constantFrom("a", "b", "c", "d")
const capsArb = FastCheck.subarray([...roleCaps], { minLength: 1 })

const commandArb: FastCheck.Arbitrary<Command> = FastCheck.oneof(
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("createGroup" as const),
      actor: actorArb,
      parent: FastCheck.nat(),
      root: FastCheck.boolean(),
      name: nameArb
    }),
    weight: 4
  },
  FastCheck.record({
    op: FastCheck.constant("renameGroup" as const),
    actor: actorArb,
    target: FastCheck.nat(),
    name: nameArb
  }),
  FastCheck.record({ op: FastCheck.constant("deleteGroup" as const), actor: actorArb, target: FastCheck.nat() }),
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("createIdentity" as const),
      actor: actorArb,
      parent: FastCheck.nat(),
      name: nameArb
    }),
    weight: 2
  },
  FastCheck.record({ op: FastCheck.constant("deleteIdentity" as const), actor: actorArb, target: FastCheck.nat() }),
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("createRole" as const),
      actor: actorArb,
      parent: FastCheck.nat(),
      name: nameArb,
      caps: capsArb
    }),
    weight: 2
  },
  FastCheck.record({
    op: FastCheck.constant("updateRole" as const),
    actor: actorArb,
    target: FastCheck.nat(),
    caps: capsArb
  }),
  FastCheck.record({ op: FastCheck.constant("deleteRole" as const), actor: actorArb, target: FastCheck.nat() }),
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("bind" as const),
      actor: actorArb,
      parent: FastCheck.nat(),
      identity: FastCheck.nat(),
      role: FastCheck.nat()
    }),
    weight: 4
  },
  FastCheck.record({ op: FastCheck.constant("unbind" as const), actor: actorArb, target: FastCheck.nat() })
)

const stepArb = FastCheck.record({
  command: commandArb,
  advance: FastCheck.constantFrom(0, 0, 1, 1000),
  seed: FastCheck.nat()
})

/** Small deterministic generator for page sizes and skips. */
const lcg = (seed: number) => {
  let s = seed >>> 0
  return (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return (s >>> 8) % n
  }
}

const orders: Record<Kind, ReadonlyArray<string>> = {
  group: ["uid", "name", "name desc", "create_time desc", "update_time, name desc"],
  identity: ["uid desc", "name", "created_at"],
  role: ["name", "uid", "update_time desc"],
  binding: ["uid", "create_time desc, uid asc", "updated_at"]
}

const columnOf = (key: string) =>
  ({
    uid: "uid",
    name: "name",
    create_time: "createTime",
    created_at: "createTime",
    update_time: "updateTime",
    updated_at: "updateTime"
  })[key]!

/** The model's order: `order_by` keys, then uid in the direction of the last key. */
const sortModel = (entities: Array<Entity>, orderBy: string) => {
  const keys = orderBy.split(",").map((part) => {
    const [key, dir = "asc"] = part.trim().split(/\s+/) as [string, string?]
    return { column: columnOf(key), desc: dir === "desc" }
  })
  if (keys[keys.length - 1]!.column !== "uid") keys.push({ column: "uid", desc: keys[keys.length - 1]!.desc })
  return [...entities].sort((a, b) => {
    for (const k of keys) {
      const x = (a as any)[k.column]
      const y = (b as any)[k.column]
      if (x !== y) return (x < y ? -1 : 1) * (k.desc ? -1 : 1)
    }
    return 0
  })
}

describe("model-based", () => {
  it.effect.prop(
    "every write's outcome, every caller's lists and every capability check match the model",
    [FastCheck.array(stepArb, { minLength: 5, maxLength: 35 })],
    ([steps]) =>
      Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const identities = yield* Identities.Identities
        const roles = yield* Roles.Roles
        const bindings = yield* RoleBindings.RoleBindings
        const authorization = yield* Authorization.Authorization
        const model = new Model()

        // Two organizations; alice owns the first; bob, carol and the canary live there with no bindings.
        const org = yield* groups.createRoot(Principal.system, { name: "org" })
        const other = yield* groups.createRoot(Principal.system, { name: "other" })
        for (const g of [org, other]) {
          model.add({ kind: "group", uid: g.uid, parent: null, name: g.name, createTime: 0, updateTime: 0 })
        }
        for (const actor of actors.filter((a) => a !== "system")) {
          const identity = yield* identities.create(Principal.system, org.uid, {
            name: actor,
            claimMatch: claimMatch(actor)
          })
          model.add({ kind: "identity", uid: identity.uid, parent: org.uid, name: actor, createTime: 0, updateTime: 0 })
          model.actorUid.set(actor, identity.uid)
        }
        const owner = Role.builtInByName("owner")!.uid
        const aliceBinding = yield* bindings.create(Principal.system, org.uid, {
          identityUid: model.actorUid.get("alice")!,
          roleUid: owner
        })
        model.add({
          kind: "binding",
          uid: aliceBinding.uid,
          parent: org.uid,
          name: "",
          createTime: 0,
          updateTime: 0,
          identityUid: model.actorUid.get("alice")!,
          roleUid: owner
        })
        // Bob may bind and see a little; carol may make roles: both meet escalation refusals often.
        for (
          const [actor, name, capabilities] of [
            ["bob", "binder", [
              "role_bindings.create",
              "role_bindings.delete",
              "identity.list",
              "groups.list",
              "roles.list"
            ]],
            ["carol", "role maker", [
              "roles.create",
              "roles.update",
              "roles.delete",
              "roles.list",
              "groups.list",
              "groups.create"
            ]]
          ] as const
        ) {
          const role = yield* roles.create(Principal.system, org.uid, { name, capabilities })
          model.add({
            kind: "role",
            uid: role.uid,
            parent: org.uid,
            name,
            createTime: 0,
            updateTime: 0,
            caps: Capability.normalize(capabilities)
          })
          const binding = yield* bindings.create(Principal.system, org.uid, {
            identityUid: model.actorUid.get(actor)!,
            roleUid: role.uid
          })
          model.add({
            kind: "binding",
            uid: binding.uid,
            parent: org.uid,
            name: "",
            createTime: 0,
            updateTime: 0,
            identityUid: model.actorUid.get(actor)!,
            roleUid: role.uid
          })
        }
        const canary = model.actorUid.get("canary")!
        const principalOf = (actor: Actor) =>
          actor === "system" ? Principal.system : Principal.identity(model.actorUid.get(actor) as Uid.Uid)
        const missing = `${org.uid}/ffffffffffffffff`
        model.knownGroups.push(missing)

        for (const [index, { advance, command, seed }] of steps.entries()) {
          yield* TestClock.adjust(advance)
          model.now += advance
          const principal = principalOf(command.actor)
          const label = `step ${index}: ${JSON.stringify(command)}`

          /** Runs the real operation and compares its outcome with the model's prediction. */
          const expect = <A>(
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

          switch (command.op) {
            case "createGroup": {
              if (command.root) {
                const predicted = command.actor !== "system"
                  ? "PermissionDenied"
                  : model.siblingNamed("group", null, command.name)
                  ? "AlreadyExists"
                  : "ok"
                yield* expect(predicted, groups.createRoot(principal, { name: command.name }), (g) =>
                  model.add({
                    kind: "group",
                    uid: g.uid,
                    parent: null,
                    name: g.name,
                    createTime: model.now,
                    updateTime: model.now
                  }))
                break
              }
              const parent = model.pick("known-group", command.parent) ?? missing
              const predicted = !model.holds(command.actor, "groups.create", parent)
                ? "PermissionDenied"
                : !model.entities.has(parent)
                ? "NotFound"
                : model.siblingNamed("group", parent, command.name)
                ? "AlreadyExists"
                : "ok"
              yield* expect(predicted, groups.create(principal, parent, { name: command.name }), (g) =>
                model.add({
                  kind: "group",
                  uid: g.uid,
                  parent,
                  name: g.name,
                  createTime: model.now,
                  updateTime: model.now
                }))
              break
            }
            case "renameGroup": {
              const uid = model.pick("known-group", command.target) ?? missing
              const e = model.entities.get(uid)
              const predicted = !model.holds(command.actor, "groups.update", uid)
                ? "PermissionDenied"
                : e === undefined
                ? "NotFound"
                : model.siblingNamed("group", e.parent, command.name, uid)
                ? "AlreadyExists"
                : "ok"
              yield* expect(predicted, groups.update(principal, uid, { name: command.name }), () => {
                e!.name = command.name
                model.nextUpdate(e!)
              })
              break
            }
            case "deleteGroup": {
              const uid = model.pick("known-group", command.target) ?? missing
              const predicted = !model.holds(command.actor, "groups.delete", uid)
                ? "PermissionDenied"
                : !model.entities.has(uid)
                ? "NotFound"
                : model.hasChildren(uid)
                ? "FailedPrecondition"
                : "ok"
              yield* expect(predicted, groups.delete(principal, uid), () => model.entities.delete(uid))
              break
            }
            case "createIdentity": {
              const parent = model.pick("known-group", command.parent) ?? missing
              const predicted = !model.holds(command.actor, "identity.create", parent)
                ? "PermissionDenied"
                : !model.entities.has(parent)
                ? "NotFound"
                : model.siblingNamed("identity", parent, command.name)
                ? "AlreadyExists"
                : "ok"
              yield* expect(
                predicted,
                identities.create(principal, parent, { name: command.name, claimMatch: claimMatch(command.name) }),
                (i) =>
                  model.add({
                    kind: "identity",
                    uid: i.uid,
                    parent,
                    name: i.name,
                    createTime: model.now,
                    updateTime: model.now
                  })
              )
              break
            }
            case "deleteIdentity": {
              const uid = model.pick("identity", command.target)
              if (uid === undefined || uid === canary) {
                break
              }
              const predicted = model.holds(command.actor, "identity.delete", Uid.parentOrNull(uid as Uid.Uid)!)
                ? "ok"
                : "PermissionDenied"
              yield* expect(predicted, identities.delete(principal, uid), () => {
                model.entities.delete(uid)
                for (const b of model.of("binding")) {
                  if (b.identityUid === uid) {
                    model.entities.delete(b.uid)
                  }
                }
              })
              break
            }
            case "createRole": {
              const parent = model.pick("known-group", command.parent) ?? missing
              const predicted = !model.holds(command.actor, "roles.create", parent)
                ? "PermissionDenied"
                : !command.caps.every((c) => model.holds(command.actor, c, parent))
                ? "PermissionDenied"
                : !model.entities.has(parent)
                ? "NotFound"
                : model.siblingNamed("role", parent, command.name)
                ? "AlreadyExists"
                : "ok"
              yield* expect(
                predicted,
                roles.create(principal, parent, { name: command.name, capabilities: command.caps }),
                (r) =>
                  model.add({
                    kind: "role",
                    uid: r.uid,
                    parent,
                    name: r.name,
                    createTime: model.now,
                    updateTime: model.now,
                    caps: Capability.normalize(command.caps)
                  })
              )
              break
            }
            case "updateRole": {
              const uid = model.pick("role", command.target)!
              const e = model.entities.get(uid)!
              const group = e.parent ?? uid
              const predicted = e.parent === null
                ? "FailedPrecondition"
                : !model.holds(command.actor, "roles.update", group)
                ? "PermissionDenied"
                : !command.caps.every((c) => model.holds(command.actor, c, group))
                ? "PermissionDenied"
                : "ok"
              yield* expect(predicted, roles.update(principal, uid, { capabilities: command.caps }), () => {
                e.caps = Capability.normalize(command.caps)
                model.nextUpdate(e)
              })
              break
            }
            case "deleteRole": {
              const uid = model.pick("role", command.target)!
              const e = model.entities.get(uid)!
              const predicted = e.parent === null
                ? "FailedPrecondition"
                : !model.holds(command.actor, "roles.delete", e.parent)
                ? "PermissionDenied"
                : model.of("binding").some((b) => b.roleUid === uid)
                ? "FailedPrecondition"
                : "ok"
              yield* expect(predicted, roles.delete(principal, uid), () => model.entities.delete(uid))
              break
            }
            case "bind": {
              const parent = model.pick("known-group", command.parent) ?? missing
              const identityUid = model.pick("identity", command.identity)!
              if (identityUid === canary) break
              const roleUid = model.pick("role", command.role)!
              const role = model.entities.get(roleUid)!
              const identityGroup = Uid.parentOrNull(identityUid as Uid.Uid)!
              const predicted = !model.holds(command.actor, "role_bindings.create", parent)
                ? "PermissionDenied"
                : !model.entities.has(parent)
                ? "NotFound"
                : !model.holds(command.actor, "identity.list", identityGroup)
                ? "NotFound"
                : role.parent !== null && !Uid.isAncestorOrSelf(role.parent, parent)
                ? "NotFound"
                : !(role.caps ?? []).every((c) => model.holds(command.actor, c, parent))
                ? "PermissionDenied"
                : model.of("binding").some((b) =>
                    b.parent === parent && b.identityUid === identityUid && b.roleUid === roleUid
                  )
                ? "AlreadyExists"
                : "ok"
              yield* expect(predicted, bindings.create(principal, parent, { identityUid, roleUid }), (b) =>
                model.add({
                  kind: "binding",
                  uid: b.uid,
                  parent,
                  name: "",
                  createTime: model.now,
                  updateTime: model.now,
                  identityUid,
                  roleUid
                }))
              break
            }
            case "unbind": {
              const uid = model.pick("binding", command.target)
              if (uid === undefined) break
              const predicted = model.holds(command.actor, "role_bindings.delete", Uid.parentOrNull(uid as Uid.Uid)!)
                ? "ok"
                : "PermissionDenied"
              yield* expect(predicted, bindings.delete(principal, uid), () => model.entities.delete(uid))
              break
            }
          }

          // (a) every caller's lists, paged to the end with random page sizes and skips.
          const random = lcg(seed)
          const groupsNow = model.of("group").map((g) => g.uid)
          for (const actor of actors) {
            for (const kind of ["group", "identity", "role", "binding"] as const) {
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
              const list = (o: ListOptions) => {
                const p = principalOf(actor)
                switch (kind) {
                  case "group":
                    return groups.list(p, o)
                  case "identity":
                    return identities.list(p, o)
                  case "role":
                    return roles.list(p, o)
                  case "binding":
                    return bindings.list(p, o)
                }
              }
              let position = 0
              let pageToken: string | undefined
              const seen: Array<string> = []
              for (let pages = 0; pages < 50; pages++) {
                const pageSize = 1 + random(6)
                const skip = random(4) === 0 ? random(3) : 0
                const page: {
                  items: ReadonlyArray<{ uid: string }>
                  nextPageToken: string | undefined
                  totalCount: number
                  skipped: number
                } = yield* list({ ...options, pageSize, skip, pageToken })
                const skipped = Math.min(skip, expected.length - position)
                position += skipped
                const items = expected.slice(position, position + pageSize)
                position += items.length
                const where = `${label} / ${actor} lists ${kind} ${JSON.stringify(options)}`
                assert.deepStrictEqual(page.items.map((i) => i.uid), items, where)
                assert.strictEqual(page.skipped, skipped, where)
                assert.strictEqual(page.totalCount, expected.length, where)
                assert.strictEqual(page.nextPageToken !== undefined, position < expected.length, where)
                seen.push(...page.items.map((i) => i.uid))
                pageToken = page.nextPageToken
                if (pageToken === undefined) break
              }
              assert.strictEqual(new Set(seen).size, seen.length, "no item twice")
            }
          }

          // (b) every capability check, at every group and at a group that does not exist.
          for (const actor of actors) {
            const grants = yield* authorization.grants(principalOf(actor))
            for (const group of [...groupsNow, missing]) {
              for (const cap of roleCaps) {
                assert.strictEqual(
                  grants.holds(cap, group),
                  model.holds(actor, cap, group),
                  `${label} / ${actor} ${cap} at ${group}`
                )
              }
            }
          }

          // The canary: nothing beyond the built-in roles, ever.
          const canaryGrants = yield* authorization.grants(Principal.identity(canary as Uid.Uid))
          assert.strictEqual(canaryGrants.grants.length, 0)
          assert.strictEqual((yield* groups.list(Principal.identity(canary as Uid.Uid))).totalCount, 0)
          assert.strictEqual(
            (yield* roles.list(Principal.identity(canary as Uid.Uid))).totalCount,
            Role.builtIns.length
          )
        }
      }).pipe(Effect.provide(Arbor.layerMemory)),
    { fastCheck: { numRuns: 40 }, timeout: 120_000 }
  )
})
