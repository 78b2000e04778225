/**
 * In-process decisions beside the libraries an embedder would otherwise pick (issue 44): the same question, "may
 * `asker` list groups at acme/prod/svc?", answered by a binding of the viewer role at acme/prod, warm.
 * - Ours: `Access.can` on the in-memory Layer, on SQLite and on PostgreSQL (each as every decision seeing every
 *   commit, and as decisions at most a second stale about other processes' writes), many decisions in one Effect
 *   program (a loop of `yield*`, as an embedder's program makes them), divided by their number.
 * - node-casbin: `enforceSync` on RBAC with domains, the domain matched as the group or one below it.
 * - CASL: `ability.can` on a precomputed ability, the resource carrying its ancestors.
 */
import { Access, Arbor, Groups, Identities, Principal, Role, RoleBindings, Secrets, Store } from "@arbor/core"
import { PostgresStore } from "@arbor/store-postgres"
import { SqliteStore } from "@arbor/store-sqlite"
import { createMongoAbility, subject } from "@casl/ability"
import { newEnforcer, newModelFromString, StringAdapter } from "casbin"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** The same question of each engine, `batch` times per call of the returned function. */
export const batch = 1000

const casbinModel = `
[request_definition]
r = sub, dom, act
[policy_definition]
p = sub, dom, act
[role_definition]
g = _, _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub, p.dom) && (r.dom == p.dom || keyMatch(r.dom, p.dom + "/*")) && r.act == p.act
`

/** node-casbin's enforcer, asked `batch` times. */
export const casbin = async () => {
  const enforcer = await newEnforcer(
    newModelFromString(casbinModel),
    new StringAdapter("p, viewer, acme/prod, groups.list\ng, asker, viewer, acme/prod")
  )
  if (!enforcer.enforceSync("asker", "acme/prod/svc", "groups.list")) throw new Error("casbin refused")
  if (enforcer.enforceSync("asker", "acme/staging", "groups.list")) throw new Error("casbin allowed")
  return () => {
    for (let i = 0; i < batch; i++) enforcer.enforceSync("asker", "acme/prod/svc", "groups.list")
  }
}

/** CASL's precomputed ability, asked `batch` times. */
export const casl = () => {
  const ability = createMongoAbility([{
    action: "groups.list",
    subject: "Group",
    conditions: { ancestors: "acme/prod" }
  }])
  const resource = subject("Group", { path: "acme/prod/svc", ancestors: ["acme", "acme/prod", "acme/prod/svc"] })
  if (!ability.can("groups.list", resource)) throw new Error("CASL refused")
  return () => {
    for (let i = 0; i < batch; i++) ability.can("groups.list", resource)
  }
}

/** Where an engine keeps its data: a kind of store, and whether its decisions may be a second stale. */
export type Storage =
  | { readonly store: "memory" }
  | { readonly store: "sqlite"; readonly boundedStaleness?: boolean }
  | { readonly store: "postgres"; readonly url: string; readonly boundedStaleness?: boolean }

/**
 * `Access.can` on an engine over `storage`, asked `batch` times in one run (`ask`), its grant one that ends when
 * `expiring`, or one with `condition`; the same question as an AuthZEN evaluation (`evaluate`); the database file
 * (SQLite), the group asked about and the group of the binding; and a way to close it.
 */
export const arbor = async (
  storage: Storage,
  options: { readonly expiring?: boolean; readonly condition?: string } = {}
) => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-peers-"))
  const filename = join(dir, "peers.db")
  const over = (store: Layer.Layer<Store.Store, unknown>, boundedStaleness: boolean | undefined) =>
    Arbor.layer.pipe(
      Layer.provide(boundedStaleness === true ? Store.layerBoundedStaleness("1 second") : Layer.empty),
      Layer.provideMerge(store),
      Layer.provide(Secrets.layerEphemeral)
    )
  const layer: Layer.Layer<Arbor.Services, unknown> = storage.store === "memory"
    ? Arbor.layerMemory
    : storage.store === "sqlite"
    ? over(SqliteStore.layer({ filename }), storage.boundedStaleness)
    : over(PostgresStore.layer({ url: Redacted.make(storage.url), maxConnections: 2 }), storage.boundedStaleness)
  const runtime = ManagedRuntime.make(layer)
  const { asker, principal, prod, svc } = await runtime.runPromise(Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const acme = yield* groups.createRoot(Principal.system, { name: "acme" })
    const prod = yield* groups.create(Principal.system, acme.uid, { name: "prod" })
    const svc = yield* groups.create(Principal.system, prod.uid, { name: "svc" })
    const asker = yield* (yield* Identities.Identities).create(Principal.system, acme.uid, {
      name: "asker",
      claimMatch: { issuer: "https://issuer.example.com", subject: "asker" }
    })
    yield* (yield* RoleBindings.RoleBindings).create(Principal.system, prod.uid, {
      identityUid: asker.uid,
      roleUid: Role.builtInByName("viewer")!.uid,
      // A grant that ends (in a year): the warm check then reads the clock against its end.
      ...(options.expiring === true ? { expireTime: new Date(Date.now() + 365 * 86_400_000).toISOString() } : {}),
      ...(options.condition === undefined ? {} : { condition: { expression: options.condition } })
    })
    return { principal: Principal.identity(asker.uid), asker: asker.uid, prod: prod.uid, svc: svc.uid }
  }))
  const access = await runtime.runPromise(Access.Access)
  if (!(await runtime.runPromise(access.can(principal, "groups.list", svc)))) throw new Error("Arbor refused")
  const can = access.can(principal, "groups.list", svc)
  const decisions = Effect.gen(function*() {
    for (let i = 0; i < batch; i++) yield* can
  })
  const request = {
    subject: { type: "identity", id: asker },
    action: { name: "groups.list" },
    resource: { type: "group", id: svc }
  }
  if (!(await runtime.runPromise(access.evaluate(principal, request))).decision) throw new Error("Arbor refused")
  const evaluations = Effect.gen(function*() {
    for (let i = 0; i < batch; i++) yield* access.evaluate(principal, request)
  })
  const empty = Effect.gen(function*() {
    for (let i = 0; i < batch; i++) yield* Effect.void
  })
  return {
    ask: () => runtime.runPromise(decisions),
    evaluate: () => runtime.runPromise(evaluations),
    /** The same loop with nothing in it: what the Effect program itself costs per step. */
    loop: () => runtime.runPromise(empty),
    filename,
    group: svc,
    bound: prod,
    close: async () => {
      await runtime.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
