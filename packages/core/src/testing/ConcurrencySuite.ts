/**
 * Concurrent writers through two engines on one database: names stay unique among siblings, no role binding
 * outlives its identity, every acknowledged write is there afterwards with its change-log entry (and no entry is
 * without its write), a follower of the log on each engine sees every entry once, in the log's order, and a binding
 * that expires denies on both engines at its end with no write between. Every store that several connections (or
 * processes) share runs it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import * as Arbor from "../engine/Arbor.js"
import * as Secrets from "../engine/Secrets.js"
import { Store } from "../engine/Store.js"
import type * as ChangeLog from "../events/ChangeLog.js"
import * as Events from "../events/Events.js"
import * as Access from "../iam/Access.js"
import * as Group from "../iam/Group.js"
import * as Groups from "../iam/Groups.js"
import * as Identities from "../iam/Identities.js"
import * as Identity from "../iam/Identity.js"
import * as Principal from "../iam/Principal.js"
import * as Role from "../iam/Role.js"
import * as RoleBinding from "../iam/RoleBinding.js"
import * as RoleBindings from "../iam/RoleBindings.js"

/**
 * Runs the concurrency checks on `database`: an effect that makes a new, empty database and gives the store
 * Layer that opens it (built once per engine, so each engine has connections of its own).
 */
export const suite = <E, E2>(name: string, database: Effect.Effect<Layer.Layer<Store, E>, E2>): void => {
  describe(`concurrency: ${name}`, () => {
    it.live(
      "8 concurrent writers over two connections: names stay unique, no binding outlives its identity, nothing acknowledged is lost",
      () =>
        Effect.gen(function*() {
          const store = yield* database
          const engine = Arbor.layer.pipe(Layer.provideMerge(store), Layer.provide(Secrets.layerEphemeral))
          const viewer = Role.builtInByName("viewer")!.uid
          const setUp = yield* Effect.gen(function*() {
            const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "org" })
            const parent = yield* (yield* Groups.Groups).create(Principal.system, org.uid, { name: "parent" })
            return { parent: parent.uid, start: yield* (yield* Events.Events).latest }
          }).pipe(Effect.provide(engine))
          const setup = setUp.parent

          // A follower of the log on each engine, from the last entry before the writers start.
          const followed = [[], []] as [Array<ChangeLog.Entry>, Array<ChangeLog.Entry>]
          const followers = yield* Effect.forEach(followed, (seen) =>
            Effect.flatMap(Events.Events, (events) =>
              events.follow(setUp.start).pipe(Stream.runForEach((entry) =>
                Effect.sync(() =>
                  seen.push(entry)
                )
              ))).pipe(
                Effect.provide(engine),
                Effect.forkScoped
              ))

          // UNAVAILABLE too: a write that kept losing its race to the others past every retry (a loaded machine) is
          // told to retry, and acknowledged nothing; what was acknowledged is held to every check below.
          const expectedErrors = new Set(["AlreadyExists", "NotFound", "FailedPrecondition", "Unavailable"])
          const unexpected: Array<string> = []
          const acked = {
            created: new Map<string, number>(),
            renamed: new Map<string, string>(),
            deletedGroups: new Set<string>(),
            bindings: new Set<string>(),
            deletedIdentities: new Set<string>()
          }

          /** One writer: random creates, renames and deletes of siblings, identities and bindings. */
          const writer = (w: number) =>
            Effect.gen(function*() {
              const groups = yield* Groups.Groups
              const identities = yield* Identities.Identities
              const bindings = yield* RoleBindings.RoleBindings
              const mine: Array<string> = []
              const people: Array<string> = []
              const attempt = <A>(effect: Effect.Effect<A, { readonly _tag: string }>) =>
                Effect.catchAll(Effect.asSome(effect), (e) => {
                  if (!expectedErrors.has(e._tag)) {
                    unexpected.push(`${e._tag}: ${String((e as { message?: string }).message)}`)
                  }
                  return Effect.succeedNone
                })
              for (let i = 0; i < 60; i++) {
                const pick = Math.random()
                const name = `n${Math.floor(Math.random() * 12)}`
                if (pick < 0.35) {
                  const g = yield* attempt(groups.create(Principal.system, setup, { name }))
                  if (g._tag === "Some") {
                    mine.push(g.value.uid)
                    acked.created.set(g.value.uid, w)
                    acked.renamed.set(g.value.uid, g.value.name)
                  }
                } else if (pick < 0.55 && mine.length > 0) {
                  const uid = mine[Math.floor(Math.random() * mine.length)]!
                  const g = yield* attempt(groups.update(Principal.system, uid, { name }))
                  if (g._tag === "Some") acked.renamed.set(uid, g.value.name)
                } else if (pick < 0.7 && mine.length > 0) {
                  const uid = mine.splice(Math.floor(Math.random() * mine.length), 1)[0]!
                  const d = yield* attempt(groups.delete(Principal.system, uid))
                  if (d._tag === "Some") acked.deletedGroups.add(uid)
                } else if (pick < 0.8) {
                  const id = yield* attempt(
                    identities.create(Principal.system, setup, {
                      name: `w${w}-${i}`,
                      claimMatch: { issuer: "https://i.example", subject: `w${w}-${i}` }
                    })
                  )
                  if (id._tag === "Some") people.push(id.value.uid)
                } else if (pick < 0.92 && people.length > 0) {
                  const identityUid = people[Math.floor(Math.random() * people.length)]!
                  const b = yield* attempt(bindings.create(Principal.system, setup, { identityUid, roleUid: viewer }))
                  if (b._tag === "Some") acked.bindings.add(`${b.value.uid} ${identityUid}`)
                } else if (people.length > 0) {
                  const uid = people.splice(Math.floor(Math.random() * people.length), 1)[0]!
                  const d = yield* attempt(identities.delete(Principal.system, uid))
                  if (d._tag === "Some") acked.deletedIdentities.add(uid)
                }
              }
            })

          // Two engines, each with its own connections to the database, four writers on each.
          const half = (offset: number) =>
            Effect.forEach([0, 1, 2, 3], (w) => writer(offset + w), { concurrency: "unbounded", discard: true }).pipe(
              Effect.provide(engine)
            )
          yield* Effect.all([half(0), half(4)], { concurrency: "unbounded", discard: true })
          assert.deepStrictEqual(unexpected, [])
          assert.isAbove(acked.created.size, 0, "some writes acknowledged")

          yield* Effect.gen(function*() {
            const rows = yield* Store
            const siblings = new Set<string>()
            for (const g of yield* rows.find(Group.table, { order: [{ column: "uid", direction: "asc" }] })) {
              const key = `${g.parent} ${String(g.name)}`
              assert.isFalse(siblings.has(key), `one group named ${key}`)
              siblings.add(key)
            }
            const bound = yield* rows.find(RoleBinding.table, { order: [{ column: "uid", direction: "asc" }] })
            const holders = yield* rows.getMany(Identity.table, bound.map((b) => String(b.identityUid)))
            const living = new Set(holders.map((i) => i.uid))
            assert.deepStrictEqual(
              bound.filter((b) => !living.has(String(b.identityUid))),
              [],
              "no binding outlives its identity"
            )
            const groups = yield* Groups.Groups
            for (const [uid, name] of acked.renamed) {
              const found = yield* Effect.either(groups.get(Principal.system, uid))
              if (acked.deletedGroups.has(uid)) assert.strictEqual(found._tag, "Left", `${uid} deleted`)
              else {assert.strictEqual(
                  found._tag === "Right" && found.right.name,
                  name,
                  `${uid} keeps its last acknowledged name`
                )}
            }
            const bindings = yield* RoleBindings.RoleBindings
            for (const entry of acked.bindings) {
              const [uid, identityUid] = entry.split(" ") as [string, string]
              const found = yield* Effect.either(bindings.get(Principal.system, uid))
              assert.strictEqual(found._tag, acked.deletedIdentities.has(identityUid) ? "Left" : "Right", entry)
            }
            // More groups were created than the twelve names could hold at once: deletes made room for more.
            assert.isAbove(acked.created.size, 12)

            // Every acknowledged write has its entry, and every entry its write.
            const log = yield* (yield* Events.Events).after(setUp.start, 1_000_000)
            const subjects = (type: string) => log.filter((e) => e.type === type).map((e) => e.subject as string)
            assert.sameMembers(subjects(Group.table.events!.types.created), [...acked.created.keys()])
            assert.sameMembers([...new Set(subjects(Group.table.events!.types.deleted))], [...acked.deletedGroups])
            for (const [uid, name] of acked.renamed) {
              const last = log.filter((e) => e.subject === uid && e.kind === "group").at(-1)!
              assert.strictEqual(last.body.name, name, `${uid}'s last entry has its last acknowledged name`)
            }
            assert.sameMembers(
              subjects(RoleBinding.table.events!.types.created),
              [...acked.bindings].map((b) => b.split(" ")[0]!)
            )

            // Each follower saw the whole log, once, in its order.
            const ids = log.map((e) => e.id)
            for (const seen of followed) {
              yield* Effect.sleep("50 millis").pipe(
                Effect.repeat({ until: () => seen.length >= ids.length, times: 200 })
              )
              assert.deepStrictEqual(seen.map((e) => e.id), ids)
            }
            yield* Effect.forEach(followers, Fiber.interrupt, { discard: true })
          }).pipe(Effect.provide(engine))
        }).pipe(Effect.scoped),
      { timeout: 120_000 }
    )

    it.live(
      "a binding that expires denies on both engines at its end, their decisions warm, with no write",
      () =>
        Effect.gen(function*() {
          const store = yield* database
          const engine = Arbor.layer.pipe(Layer.provideMerge(store), Layer.provide(Secrets.layerEphemeral))
          const engines = [ManagedRuntime.make(engine), ManagedRuntime.make(engine)] as const
          yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(engines.map((e) => e.dispose()))))
          const ends = Date.now() + 3_000
          const { group, reader } = yield* Effect.promise(() =>
            engines[0].runPromise(Effect.gen(function*() {
              const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "ending" })
              const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
                name: "contractor",
                claimMatch: { issuer: "https://ci.example.com", subject: "contractor" }
              })
              yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
                identityUid: identity.uid,
                roleUid: Role.builtInByName("viewer")!.uid,
                expireTime: new Date(ends).toISOString()
              })
              return { group: org.uid, reader: Principal.identity(identity.uid) }
            }))
          )
          // Asked as an embedder asks, warm: the second answer of each engine comes from its cache.
          const can = (runtime: typeof engines[number]) =>
            Effect.promise(() =>
              runtime.runPromise(Effect.flatMap(Access.Access, (access) => access.can(reader, "groups.list", group)))
            )
          for (const runtime of engines) {
            assert.isTrue(yield* can(runtime))
            assert.isTrue(yield* can(runtime))
          }
          assert.isBelow(Date.now(), ends, "the decisions before the end were made before it")
          yield* Effect.sleep(Math.max(0, ends - Date.now()))
          // The first decision after the end denies: nothing waits for a sweep or a cache to expire.
          for (const runtime of engines) assert.isFalse(yield* can(runtime), "denied from its end, by every engine")
        }).pipe(Effect.scoped),
      { timeout: 60_000 }
    )
  })
}
