import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Arbor, AuditTrail, Events, Groups, Principal, RoleBindings } from "../src/index.js"
import { folder, organization, principalWith } from "./fixtures.js"

const created = "dev.chainguard.api.iam.group.created.v1"
const updated = "dev.chainguard.api.iam.group.updated.v1"

/** An organization with folders a and b, and an owner of folder a only. */
const setUp = Effect.gen(function*() {
  const org = yield* organization("acme")
  const a = yield* folder(org.uid, "a")
  const b = yield* folder(org.uid, "b")
  const ownerOfA = yield* principalWith(org.uid, "owner-a", "owner", [a.uid])
  return { org, a, b, ownerOfA }
})

describe("AuditTrail", () => {
  it.effect("lists the entries of the groups where the caller holds subscriptions.list, oldest first", () =>
    Effect.gen(function*() {
      const { a, b, org, ownerOfA } = yield* setUp
      const groups = yield* Groups.Groups
      const inA = yield* groups.create(ownerOfA, a.uid, { name: "inside" })
      yield* groups.update(Principal.system, b.uid, { description: "elsewhere" })
      const trail = yield* AuditTrail.AuditTrail
      const seen = yield* trail.list(ownerOfA)
      assert.deepStrictEqual(seen.items.map((e) => [e.type, e.subject]), [
        [created, a.uid],
        ["dev.chainguard.api.iam.rolebindings.created.v1", seen.items[1]!.subject],
        [created, inA.uid]
      ])
      assert.strictEqual(seen.items[1]!.body.group && (seen.items[1]!.body.group as { uid: string }).uid, a.uid)
      assert.strictEqual(seen.totalCount, 3)
      const everything = yield* trail.list(Principal.system, { childrenOf: b.uid })
      assert.deepStrictEqual(everything.items.map((e) => e.type), [created, updated])
      const newest = yield* trail.list(Principal.system, { orderBy: "time desc", pageSize: 1 })
      assert.strictEqual(newest.items[0]!.type, updated)
      assert.isDefined(newest.nextPageToken)
      const viewerOfNothing = yield* principalWith(org.uid, "nobody", "registry.pull")
      assert.strictEqual((yield* trail.list(viewerOfNothing)).totalCount, 0)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("filters by type, subject, actor and time; refuses bad values, naming each", () =>
    Effect.gen(function*() {
      const { a, ownerOfA } = yield* setUp
      const groups = yield* Groups.Groups
      yield* groups.update(ownerOfA, a.uid, { description: "mine" })
      const trail = yield* AuditTrail.AuditTrail
      const ids = (options: AuditTrail.EntryListOptions) =>
        Effect.map(trail.list(Principal.system, options), (page) => page.items.map((e) => [e.type, e.subject]))
      assert.deepStrictEqual(yield* ids({ types: [updated] }), [[updated, a.uid]])
      assert.deepStrictEqual(yield* ids({ subject: a.uid }), [[created, a.uid], [updated, a.uid]])
      assert.deepStrictEqual(yield* ids({ actor: ownerOfA.identityUid }), [[updated, a.uid]])
      assert.deepStrictEqual(yield* ids({ since: "2999-01-01T00:00:00Z" }), [])
      assert.lengthOf(yield* ids({ until: "2999-01-01T00:00:00Z" }), (yield* trail.list(Principal.system)).totalCount)
      const refused = yield* Effect.flip(
        trail.list(Principal.system, { since: "yesterday", subject: "x", orderBy: "name" })
      )
      assert.strictEqual(refused._tag, "InvalidArgument")
      assert.sameMembers(refused._tag === "InvalidArgument" ? refused.violations.map((v) => v.field) : [], [
        "since",
        "subject",
        "order_by"
      ])
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("watch: what the caller may see and the filters pass, from a cursor, then as it commits", () =>
    Effect.gen(function*() {
      const { a, b, ownerOfA } = yield* setUp
      const groups = yield* Groups.Groups
      const trail = yield* AuditTrail.AuditTrail
      const first = yield* groups.create(Principal.system, a.uid, { name: "first" })
      const cursor = (yield* trail.list(Principal.system, { subject: first.uid })).items[0]!.position
      const watching = yield* Stream.unwrap(trail.watch(ownerOfA, { after: cursor })).pipe(
        Stream.flattenIterables,
        Stream.take(2),
        Stream.runCollect,
        Effect.fork
      )
      yield* groups.create(Principal.system, b.uid, { name: "hidden" })
      const second = yield* groups.create(Principal.system, a.uid, { name: "second" })
      yield* groups.update(Principal.system, second.uid, { description: "changed" })
      const seen = Chunk.toArray(yield* Fiber.join(watching))
      assert.deepStrictEqual(seen.map((e) => [e.type, e.subject]), [[created, second.uid], [updated, second.uid]])

      const typed = yield* Stream.unwrap(trail.watch(Principal.system, { after: cursor, types: [updated] })).pipe(
        Stream.flattenIterables,
        Stream.take(1),
        Stream.runCollect
      )
      assert.deepStrictEqual(Chunk.toArray(typed).map((e) => e.subject), [second.uid])
      const bad = yield* Effect.flip(trail.watch(Principal.system, { after: "7" }))
      assert.strictEqual(bad._tag, "InvalidArgument")
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("watch: a revoked binding stops the entries it showed, from the next batch on", () =>
    Effect.gen(function*() {
      const { a, ownerOfA } = yield* setUp
      const groups = yield* Groups.Groups
      const trail = yield* AuditTrail.AuditTrail
      const bindings = yield* RoleBindings.RoleBindings
      const first = yield* groups.create(Principal.system, a.uid, { name: "first" })
      const cursor = (yield* trail.list(Principal.system, { subject: first.uid })).items[0]!.position
      const seen: Array<string> = []
      const watching = yield* Stream.unwrap(trail.watch(ownerOfA, { after: cursor })).pipe(
        Stream.flattenIterables,
        Stream.runForEach((entry) => Effect.sync(() => seen.push(entry.subject))),
        Effect.fork
      )
      const before = yield* groups.create(Principal.system, a.uid, { name: "before" })
      while (!seen.includes(before.uid)) yield* Effect.sleep("10 millis")
      const [binding] = (yield* bindings.list(Principal.system, { descendantsOf: a.uid })).items
      yield* bindings.delete(Principal.system, binding!.uid)
      const after = yield* groups.create(Principal.system, a.uid, { name: "after" })
      const marker = yield* trail.list(Principal.system, { subject: after.uid })
      assert.lengthOf(marker.items, 1)
      yield* Effect.sleep("500 millis")
      yield* Fiber.interrupt(watching)
      assert.notInclude(seen, after.uid)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("watch: a quiet log still sends a heartbeat, an empty batch, every Events.Heartbeat", () =>
    Effect.gen(function*() {
      yield* setUp
      const trail = yield* AuditTrail.AuditTrail
      const start = Date.now()
      const heard = yield* Stream.unwrap(trail.watch(Principal.system)).pipe(Stream.take(2), Stream.runCollect)
      assert.deepStrictEqual(Chunk.toArray(heard), [[], []])
      assert.isAtLeast(Date.now() - start, 300)
    }).pipe(
      Effect.provide(Arbor.layerMemory),
      Effect.provide(Layer.succeed(Events.Heartbeat, Duration.millis(200)))
    ))
})
