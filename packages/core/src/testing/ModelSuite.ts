/**
 * The model-based suite: random sequences of writes by random callers, each checked against a simple reference
 * model of the rules, and after every step callers' lists (paged to the end with random page sizes and skips) and
 * every capability check compared with the model's answers. A canary identity is never bound and must never see or
 * do anything beyond the built-in roles. Every store adapter runs it against itself:
 *
 * ```ts
 * import { ModelSuite } from "@arbor/core/testing"
 * ModelSuite.suite("sqlite", SqliteStore.layer({ filename: ":memory:" }))
 * ```
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import {
  AccountAssociations,
  Arbor,
  Authorization,
  Capability,
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
import type { ListOptions } from "../Lists.js"
import * as Secrets from "../Secrets.js"
import { compareScalars, type Store } from "../Store.js"
import * as Uid from "../Uid.js"

const claimMatch = (subject: string) => ({ issuer: "https://issuer.example.com", subject })

type Cap = Capability.Capability
type Kind = "group" | "identity" | "role" | "binding" | "repo" | "tag" | "provider" | "invite" | "association"

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

/** The key of an entity: associations share their group's uid. */
const keyOf = (kind: Kind, uid: string) => kind === "association" ? `association:${uid}` : uid

const actors = ["system", "alice", "bob", "carol", "canary"] as const
type Actor = typeof actors[number]

const roleCaps: ReadonlyArray<Cap> = [
  "groups.list",
  "groups.create",
  "groups.update",
  "groups.delete",
  "identity.list",
  "identity.create",
  "identity.update",
  "identity.delete",
  "roles.list",
  "roles.create",
  "roles.update",
  "roles.delete",
  "role_bindings.list",
  "role_bindings.create",
  "role_bindings.delete",
  "repo.list",
  "repo.create",
  "repo.delete",
  "tag.list",
  "tag.create",
  "identity_providers.list",
  "identity_providers.create",
  "group_invites.list",
  "group_invites.create",
  "account_associations.list",
  "account_associations.create"
]

/** The reference model: plain maps and the rules, written as directly as possible. */
class Model {
  readonly entities = new Map<string, Entity>()
  /** Every group uid ever created, deleted ones included, so commands can aim at missing groups. */
  readonly knownGroups: Array<string> = []
  readonly actorUid = new Map<Actor, string>()
  /** Who can assume each identity: whoever last set its claim match (the system's identities are left out). */
  readonly controller = new Map<string, Actor>()
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

  private cache = new Map<Kind, Array<Entity>>()

  of(kind: Kind): Array<Entity> {
    let found = this.cache.get(kind)
    if (found === undefined) {
      found = [...this.entities.values()].filter((e) => e.kind === kind)
      this.cache.set(kind, found)
    }
    return found
  }

  remove(uid: string) {
    this.entities.delete(uid)
    this.cache.clear()
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
      case "repo":
        return this.holds(actor, "repo.list", e.parent!)
      case "tag":
        return this.holds(actor, "tag.list", Uid.parentOrNull(e.parent! as Uid.Uid)!)
      case "provider":
        return this.holds(actor, "identity_providers.list", e.parent!)
      case "invite":
        return this.holds(actor, "group_invites.list", e.parent!)
      case "association":
        return this.holds(actor, "account_associations.list", e.uid)
    }
  }

  /** Anything below the group, or its account association. */
  hasChildren(uid: string): boolean {
    return [...this.entities.values()].some((e) =>
      Uid.isAncestor(uid, e.uid) || (e.kind === "association" && e.uid === uid)
    )
  }

  /** Bindings, invites or providers that grant the role. */
  roleInUse(uid: string): boolean {
    return [...this.entities.values()].some((e) =>
      (e.kind === "binding" || e.kind === "invite" || e.kind === "provider") && e.roleUid === uid
    )
  }

  siblingNamed(kind: Kind, parent: string | null, name: string, except?: string): boolean {
    return this.of(kind).some((e) => e.parent === parent && e.name === name && e.uid !== except)
  }

  add(e: Entity) {
    this.entities.set(keyOf(e.kind, e.uid), e)
    this.cache.clear()
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
  | {
    readonly op: "updateIdentity"
    readonly actor: Actor
    readonly target: number
    readonly change: "name" | "assumption"
    readonly name: string
  }
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
  | { readonly op: "upsertRepo"; readonly actor: Actor; readonly parent: number; readonly name: string }
  | { readonly op: "deleteRepo"; readonly actor: Actor; readonly target: number }
  | { readonly op: "upsertTag"; readonly actor: Actor; readonly parent: number; readonly name: string }
  | { readonly op: "createProvider"; readonly actor: Actor; readonly parent: number; readonly name: string }
  | { readonly op: "createInvite"; readonly actor: Actor; readonly parent: number }
  | { readonly op: "createAssociation"; readonly actor: Actor; readonly parent: number }

const viewerUid = Role.builtInByName("viewer")!.uid
const viewerCaps = Role.builtInByName("viewer")!.capabilities

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
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("updateIdentity" as const),
      actor: actorArb,
      target: FastCheck.nat(),
      change: FastCheck.constantFrom("name" as const, "assumption" as const),
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
  FastCheck.record({ op: FastCheck.constant("unbind" as const), actor: actorArb, target: FastCheck.nat() }),
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("upsertRepo" as const),
      actor: actorArb,
      parent: FastCheck.nat(),
      name: nameArb
    }),
    weight: 2
  },
  FastCheck.record({ op: FastCheck.constant("deleteRepo" as const), actor: actorArb, target: FastCheck.nat() }),
  {
    arbitrary: FastCheck.record({
      op: FastCheck.constant("upsertTag" as const),
      actor: actorArb,
      parent: FastCheck.nat(),
      name: nameArb
    }),
    weight: 2
  },
  FastCheck.record({
    op: FastCheck.constant("createProvider" as const),
    actor: actorArb,
    parent: FastCheck.nat(),
    name: nameArb
  }),
  FastCheck.record({ op: FastCheck.constant("createInvite" as const), actor: actorArb, parent: FastCheck.nat() }),
  FastCheck.record({ op: FastCheck.constant("createAssociation" as const), actor: actorArb, parent: FastCheck.nat() })
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
  binding: ["uid", "create_time desc, uid asc", "updated_at"],
  repo: ["name", "uid desc"],
  tag: ["name desc", "create_time"],
  provider: ["name", "uid"],
  invite: ["create_time desc", "uid"],
  association: ["uid", "name desc"]
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
      const order = compareScalars(a[k.column as keyof Entity], b[k.column as keyof Entity])
      if (order !== 0) return order * (k.desc ? -1 : 1)
    }
    return 0
  })
}

/** Runs the model-based tests against the engine over `store`, built afresh for each run. */
export const suite = <E>(
  name: string,
  store: Layer.Layer<Store, E>,
  options: { readonly numRuns?: number } = {}
): void => {
  describe(`model-based: ${name}`, () => {
    it.effect.prop(
      "every write's outcome, every caller's lists and every capability check match the model",
      [FastCheck.array(stepArb, { minLength: 10, maxLength: 40, size: "max" })],
      ([steps]) =>
        Effect.gen(function*() {
          const groups = yield* Groups.Groups
          const identities = yield* Identities.Identities
          const roles = yield* Roles.Roles
          const bindings = yield* RoleBindings.RoleBindings
          const repos = yield* Repos.Repos
          const tags = yield* Tags.Tags
          const providers = yield* IdentityProviders.IdentityProviders
          const invites = yield* GroupInvites.GroupInvites
          const associations = yield* AccountAssociations.AccountAssociations
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
            model.add({
              kind: "identity",
              uid: identity.uid,
              parent: org.uid,
              name: actor,
              createTime: 0,
              updateTime: 0
            })
            model.actorUid.set(actor, identity.uid)
            model.controller.set(identity.uid, actor)
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
          // A team folder with a repo and two tags, and a folder whose only content is its account association.
          const team = yield* groups.create(Principal.system, org.uid, { name: "team" })
          const cloud = yield* groups.create(Principal.system, org.uid, { name: "cloud" })
          for (const g of [team, cloud]) {
            model.add({ kind: "group", uid: g.uid, parent: org.uid, name: g.name, createTime: 0, updateTime: 0 })
          }
          const app = yield* repos.upsert(Principal.system, team.uid, { name: "app" })
          model.add({ kind: "repo", uid: app.uid, parent: team.uid, name: "app", createTime: 0, updateTime: 0 })
          for (const name of ["v1", "latest"]) {
            const tag = yield* tags.upsert(Principal.system, app.uid, { name })
            model.add({ kind: "tag", uid: tag.uid, parent: app.uid, name, createTime: 0, updateTime: 0 })
          }
          yield* associations.create(Principal.system, cloud.uid, { name: "aws" })
          model.add({ kind: "association", uid: cloud.uid, parent: org.uid, name: "aws", createTime: 0, updateTime: 0 })
          const canary = model.actorUid.get("canary")!
          const principalOf = (actor: Actor) =>
            actor === "system" ? Principal.system : Principal.identity(model.actorUid.get(actor) as Uid.Uid)
          const missing = `${org.uid}/ffffffffffffffff`
          model.knownGroups.push(missing)

          /** What each actor can do through every identity it can assume. */
          const reach = Effect.gen(function*() {
            const byActor = new Map<Actor, Array<Authorization.Grants>>()
            for (const [uid, actor] of model.controller) {
              if (actor === "system" || !model.entities.has(uid)) continue
              const grants = yield* authorization.grants(Principal.identity(uid as Uid.Uid))
              byActor.set(actor, [...(byActor.get(actor) ?? []), grants])
            }
            return byActor
          })
          const reaches = (r: Map<Actor, Array<Authorization.Grants>>, actor: Actor, cap: Cap, group: string) =>
            (r.get(actor) ?? []).some((g) => g.holds(cap, group))

          for (const [index, { advance, command, seed }] of steps.entries()) {
            yield* TestClock.adjust(advance)
            model.now += advance
            const principal = principalOf(command.actor)
            const reachBefore = yield* reach
            const actingGrants = yield* authorization.grants(principal)
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
                yield* expect(predicted, groups.delete(principal, uid), () => model.remove(uid))
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
                  (i) => {
                    model.add({
                      kind: "identity",
                      uid: i.uid,
                      parent,
                      name: i.name,
                      createTime: model.now,
                      updateTime: model.now
                    })
                    model.controller.set(i.uid, command.actor)
                  }
                )
                break
              }
              case "updateIdentity": {
                const uid = model.pick("identity", command.target)
                if (uid === undefined) break
                const e = model.entities.get(uid)!
                const repoint = command.change === "assumption"
                // Repointing an identity needs every capability it holds, at each group where it holds it.
                const takesOver = model.of("binding").every((b) =>
                  b.identityUid !== uid ||
                  (model.entities.get(b.roleUid!)?.caps ?? []).every((c) => model.holds(command.actor, c, b.parent!))
                )
                const predicted = !model.holds(command.actor, "identity.update", e.parent!)
                  ? "PermissionDenied"
                  : repoint && !takesOver
                  ? "PermissionDenied"
                  : !repoint && model.siblingNamed("identity", e.parent, command.name, uid)
                  ? "AlreadyExists"
                  : "ok"
                const patch = repoint
                  ? { claimMatch: claimMatch(`${command.actor} at step ${index}`) }
                  : { name: command.name }
                yield* expect(predicted, identities.update(principal, uid, patch), () => {
                  if (repoint) model.controller.set(uid, command.actor)
                  else e.name = command.name
                  model.nextUpdate(e)
                })
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
                  model.remove(uid)
                  for (const b of model.of("binding")) {
                    if (b.identityUid === uid) {
                      model.remove(b.uid)
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
                  : model.roleInUse(uid)
                  ? "FailedPrecondition"
                  : "ok"
                yield* expect(predicted, roles.delete(principal, uid), () => model.remove(uid))
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
                  ? "PermissionDenied"
                  : role.parent !== null && !model.holds(command.actor, "roles.list", role.parent)
                  ? "PermissionDenied"
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
                yield* expect(predicted, bindings.delete(principal, uid), () => model.remove(uid))
                break
              }
              case "upsertRepo": {
                const parent = model.pick("known-group", command.parent) ?? missing
                const existing = model.of("repo").some((r) => r.parent === parent && r.name === command.name)
                const predicted = !model.holds(command.actor, "repo.create", parent)
                  ? "PermissionDenied"
                  : !model.entities.has(parent)
                  ? "NotFound"
                  : "ok"
                yield* expect(predicted, repos.upsert(principal, parent, { name: command.name }), (r) => {
                  if (!existing) {
                    model.add({
                      kind: "repo",
                      uid: r.uid,
                      parent,
                      name: r.name,
                      createTime: model.now,
                      updateTime: model.now
                    })
                  }
                })
                break
              }
              case "deleteRepo": {
                const uid = model.pick("repo", command.target)
                if (uid === undefined) break
                const predicted = model.holds(command.actor, "repo.delete", Uid.parentOrNull(uid as Uid.Uid)!)
                  ? "ok"
                  : "PermissionDenied"
                yield* expect(predicted, repos.delete(principal, uid), () => {
                  model.remove(uid)
                  for (const t of model.of("tag")) if (t.parent === uid) model.remove(t.uid)
                })
                break
              }
              case "upsertTag": {
                const repo = model.pick("repo", command.parent)
                if (repo === undefined) break
                const existing = model.of("tag").some((t) => t.parent === repo && t.name === command.name)
                const predicted = model.holds(command.actor, "tag.create", Uid.parentOrNull(repo as Uid.Uid)!)
                  ? "ok"
                  : "PermissionDenied"
                yield* expect(predicted, tags.upsert(principal, repo, { name: command.name }), (t) => {
                  if (!existing) {
                    model.add({
                      kind: "tag",
                      uid: t.uid,
                      parent: repo,
                      name: t.name,
                      createTime: model.now,
                      updateTime: model.now
                    })
                  }
                })
                break
              }
              case "createProvider": {
                const parent = model.pick("known-group", command.parent) ?? missing
                const predicted = !model.holds(command.actor, "identity_providers.create", parent)
                  ? "PermissionDenied"
                  : !model.entities.has(parent)
                  ? "NotFound"
                  : !viewerCaps.every((c) => model.holds(command.actor, c, parent))
                  ? "PermissionDenied"
                  : model.siblingNamed("provider", parent, command.name)
                  ? "AlreadyExists"
                  : "ok"
                const body = {
                  name: command.name,
                  defaultRole: viewerUid,
                  oidc: { issuer: "https://login.example.com", clientId: "arbor" }
                }
                yield* expect(predicted, providers.create(principal, parent, body), (p) =>
                  model.add({
                    kind: "provider",
                    uid: p.uid,
                    parent,
                    name: p.name,
                    createTime: model.now,
                    updateTime: model.now,
                    roleUid: viewerUid
                  }))
                break
              }
              case "createInvite": {
                const parent = model.pick("known-group", command.parent) ?? missing
                const predicted = !model.holds(command.actor, "group_invites.create", parent)
                  ? "PermissionDenied"
                  : !model.entities.has(parent)
                  ? "NotFound"
                  : !viewerCaps.every((c) => model.holds(command.actor, c, parent))
                  ? "PermissionDenied"
                  : "ok"
                yield* expect(predicted, invites.create(principal, parent, { roleUid: viewerUid }), (i) =>
                  model.add({
                    kind: "invite",
                    uid: i.uid,
                    parent,
                    name: "",
                    createTime: model.now,
                    updateTime: model.now,
                    roleUid: viewerUid
                  }))
                break
              }
              case "createAssociation": {
                const group = model.pick("known-group", command.parent) ?? missing
                const predicted = !model.holds(command.actor, "account_associations.create", group)
                  ? "PermissionDenied"
                  : !model.entities.has(group)
                  ? "NotFound"
                  : model.entities.has(keyOf("association", group))
                  ? "AlreadyExists"
                  : "ok"
                yield* expect(predicted, associations.create(principal, group, { name: "cloud" }), (a) =>
                  model.add({
                    kind: "association",
                    uid: a.uid,
                    parent: Uid.parentOrNull(group as Uid.Uid),
                    name: a.name,
                    createTime: model.now,
                    updateTime: model.now
                  }))
                break
              }
            }

            // (a) callers' lists, paged to the end with random page sizes and skips: a random third of the
            // (caller, kind) pairs after each step, so that runs stay cheap and many.
            const random = lcg(seed)
            const groupsNow = model.of("group").map((g) => g.uid)
            for (const actor of actors) {
              for (
                const kind of [
                  "group",
                  "identity",
                  "role",
                  "binding",
                  "repo",
                  "tag",
                  "provider",
                  "invite",
                  "association"
                ] as const
              ) {
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
                    case "repo":
                      return repos.list(p, o)
                    case "tag":
                      return tags.list(p, o)
                    case "provider":
                      return providers.list(p, o)
                    case "invite":
                      return invites.list(p, o)
                    case "association":
                      return associations.list(p, o)
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

            // No actor ever gains a capability, through any identity it can assume, that the step's caller did not
            // hold itself.
            for (const [actor, grantsNow] of yield* reach) {
              for (const grant of grantsNow.flatMap((g) => g.grants)) {
                for (const cap of grant.capabilities) {
                  if (reaches(reachBefore, actor, cap, grant.group)) continue
                  assert.isTrue(
                    actingGrants.holds(cap, grant.group),
                    `${label} / ${actor} gained ${cap} at ${grant.group}`
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
        }).pipe(Effect.provide(Arbor.layer.pipe(Layer.provideMerge(store), Layer.provide(Secrets.layerEphemeral)))),
      { fastCheck: { numRuns: options.numRuns ?? 100 }, timeout: 600_000 }
    )
  })
}
