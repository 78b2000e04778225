import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ChangeLog } from "../src/index.js"
import {
  Arbor,
  AuditTrail,
  Errors,
  Events,
  ExternalGroupRoleMappings,
  Groups,
  Identities,
  IdentityProviders,
  Principal,
  Role,
  RoleBinding,
  RoleBindings
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
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
      const refused = yield* Refusal.of(
        trail.list(Principal.system, { since: "yesterday", subject: "x", orderBy: "name" })
      )
      assert.strictEqual(refused._tag, "InvalidArgument")
      assert.sameMembers(refused._tag === "InvalidArgument" ? refused.violations.map((v) => v.field) : [], [
        "since",
        "subject",
        "order_by"
      ])
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("an update's entry keeps the resource before it beside it; a secret changed is in neither", () =>
    Effect.gen(function*() {
      const { a, org } = yield* setUp
      yield* (yield* Groups.Groups).update(Principal.system, a.uid, { description: "mine" }, "description")
      const trail = yield* AuditTrail.AuditTrail
      const [made, changed] = (yield* trail.list(Principal.system, { subject: a.uid })).items
      assert.isUndefined(made!.before, "a creation has nothing before it")
      assert.deepStrictEqual([changed!.before?.description, changed!.body.description], ["", "mine"])
      assert.strictEqual(changed!.before?.name, "a")
      // An identity provider's client secret, rotated: the update is logged, the secret in neither body.
      const providers = yield* IdentityProviders.IdentityProviders
      const provider = yield* providers.create(Principal.system, org.uid, {
        name: "sso",
        defaultRole: Role.builtInByName("viewer")!.uid,
        oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "first-s3cret" }
      })
      yield* providers.update(Principal.system, provider.uid, {
        oidc: { issuer: "https://login.example.com", clientId: "arbor2", clientSecret: "second-s3cret" }
      })
      const [, rotated] = (yield* trail.list(Principal.system, { subject: provider.uid })).items
      assert.deepStrictEqual(
        [
          (rotated!.before?.oidc as { clientId: string }).clientId,
          (rotated!.body.oidc as { clientId: string }).clientId
        ],
        ["arbor", "arbor2"]
      )
      assert.notMatch(JSON.stringify(rotated), /s3cret/)
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
      // By kind, as the list filters: the folders' entries between pass by.
      const bound = yield* (yield* RoleBindings.RoleBindings).create(Principal.system, second.uid, {
        identityUid: ownerOfA.identityUid,
        roleUid: Role.builtInByName("viewer")!.uid
      })
      const kinded = yield* Stream.unwrap(trail.watch(Principal.system, { after: cursor, kinds: ["role_binding"] }))
        .pipe(
          Stream.flattenIterables,
          Stream.take(1),
          Stream.runCollect
        )
      assert.deepStrictEqual(Chunk.toArray(kinded).map((e) => e.subject), [bound.uid])
      const bad = yield* Refusal.of(trail.watch(Principal.system, { after: "7" }))
      assert.strictEqual(bad._tag, "InvalidArgument")
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("watch: each filter holds entries to the very conditions a list of the same filters gives the store", () =>
    Effect.gen(function*() {
      const { a, ownerOfA } = yield* setUp
      const groups = yield* Groups.Groups
      const trail = yield* AuditTrail.AuditTrail
      const mark = yield* groups.create(Principal.system, a.uid, { name: "mark" })
      const cursor = (yield* trail.list(Principal.system, { subject: mark.uid })).items[0]!.position
      const folder = yield* groups.create(ownerOfA, a.uid, { name: "folder" })
      yield* groups.update(Principal.system, folder.uid, { description: "changed" })
      const bound = yield* (yield* RoleBindings.RoleBindings).create(Principal.system, folder.uid, {
        identityUid: ownerOfA.identityUid,
        roleUid: Role.builtInByName("viewer")!.uid
      })
      const [changed] = (yield* trail.list(Principal.system, { subject: folder.uid, types: [updated] })).items
      const filtersToTry: ReadonlyArray<AuditTrail.EntryFilters> = [
        { types: [updated] },
        { kinds: ["role_binding"] },
        { subject: folder.uid },
        { actor: ownerOfA.identityUid },
        { since: DateTime.formatIso(changed!.time) },
        { until: DateTime.formatIso(DateTime.add(changed!.time, { millis: 1 })), kinds: ["group"] }
      ]
      for (const filter of filtersToTry) {
        const listed = (yield* trail.list(Principal.system, filter)).items.filter((e) => e.position > cursor)
        assert.isAbove(listed.length, 0, JSON.stringify(filter))
        const watched = yield* Stream.unwrap(trail.watch(Principal.system, { after: cursor, ...filter })).pipe(
          Stream.flattenIterables,
          Stream.take(listed.length),
          Stream.runCollect
        )
        assert.deepStrictEqual(
          Chunk.toArray(watched).map((e) => [e.type, e.subject]),
          listed.map((e) => [e.type, e.subject]),
          JSON.stringify(filter)
        )
      }
      assert.include(
        (yield* trail.list(Principal.system, { kinds: ["role_binding"] })).items.map((e) => e.subject),
        bound.uid
      )
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
      // The caller may see nothing now, as a request of theirs would be told: the watch ends with that refusal.
      const ended = yield* Refusal.of(Fiber.join(watching).pipe(Effect.timeout("2 seconds")))
      assert.strictEqual(ended._tag, "PermissionDenied")
      assert.notInclude(seen, after.uid)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("watch: checks its caller's authority again after a write that may change it, and ends once refused", () =>
    Effect.gen(function*() {
      const { a, org, ownerOfA } = yield* setUp
      const groups = yield* Groups.Groups
      const trail = yield* AuditTrail.AuditTrail
      let checks = 0
      let refused = false
      const authority = {
        current: Effect.suspend(() => {
          checks++
          return refused
            ? Effect.fail(new Errors.Unauthenticated({ why: "deprovisioned", reason: "DEPROVISIONED" }))
            : Effect.succeed(ownerOfA)
        }),
        expiresAt: Date.now() + 60_000
      }
      const seen: Array<string> = []
      const after = yield* (yield* Events.Events).latest
      const watching = yield* Stream.unwrap(trail.watch(ownerOfA, { after }, authority)).pipe(
        Stream.flattenIterables,
        Stream.runForEach((entry) => Effect.sync(() => seen.push(entry.subject))),
        Effect.fork
      )
      while (checks < 1) yield* Effect.sleep("10 millis")
      assert.strictEqual(checks, 1, "checked once as the watch starts")
      // A folder changes nobody's authority: shown without a check.
      const shown = yield* groups.create(Principal.system, a.uid, { name: "shown" })
      while (!seen.includes(shown.uid)) yield* Effect.sleep("10 millis")
      assert.strictEqual(checks, 1)
      // An identity's write may (its deletion takes its bindings): checked, still admitted.
      yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "new hire",
        claimMatch: { issuer: "https://issuer.example.com", subject: "new-hire" }
      })
      while (checks < 2) yield* Effect.sleep("10 millis")
      const next = yield* groups.create(Principal.system, a.uid, { name: "next" })
      while (!seen.includes(next.uid)) yield* Effect.sleep("10 millis")
      // Once a request would be refused (here: the person deprovisioned), the next such write ends the watch.
      refused = true
      yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "another hire",
        claimMatch: { issuer: "https://issuer.example.com", subject: "another-hire" }
      })
      const last = yield* groups.create(Principal.system, a.uid, { name: "last" })
      const ended = yield* Refusal.of(Fiber.join(watching).pipe(Effect.timeout("2 seconds")))
      assert.deepStrictEqual([ended._tag, "reason" in ended ? ended.reason : undefined], [
        "Unauthenticated",
        "DEPROVISIONED"
      ])
      assert.notInclude(seen, last.uid)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("watch: a sign-in's group mapping that gave its visibility, deleted, ends it", () =>
    Effect.gen(function*() {
      const { a, org } = yield* setUp
      const provider = yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
        name: "okta",
        defaultRole: Role.builtInByName("viewer")!.uid,
        oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "s", groupsClaim: "groups" }
      })
      const mappings = yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings
      const mapping = yield* mappings.create(Principal.system, provider.uid, {
        externalGroupId: "auditors",
        roleUid: Role.builtInByName("viewer")!.uid
      })
      const person = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "person",
        claimMatch: { issuer: "https://login.example.com", subject: "person" }
      })
      // Visibility from the mapping alone: the person holds no binding.
      const caller = Principal.identity(person.uid, { mappings: [mapping.uid] })
      const trail = yield* AuditTrail.AuditTrail
      const groups = yield* Groups.Groups
      const seen: Array<string> = []
      const after = yield* (yield* Events.Events).latest
      const watching = yield* Stream.unwrap(trail.watch(caller, { after })).pipe(
        Stream.flattenIterables,
        Stream.runForEach((entry) => Effect.sync(() => seen.push(entry.subject))),
        Effect.fork
      )
      const shown = yield* groups.create(Principal.system, a.uid, { name: "shown" })
      while (!seen.includes(shown.uid)) yield* Effect.sleep("10 millis")
      yield* mappings.delete(Principal.system, mapping.uid)
      const hidden = yield* groups.create(Principal.system, a.uid, { name: "hidden" })
      const ended = yield* Refusal.of(Fiber.join(watching).pipe(Effect.timeout("2 seconds")))
      assert.strictEqual(ended._tag, "PermissionDenied")
      assert.notInclude(seen, hidden.uid)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("watch: never outlives its token: it ends at the token's expiry, saying so", () =>
    Effect.gen(function*() {
      const { ownerOfA } = yield* setUp
      const trail = yield* AuditTrail.AuditTrail
      const start = Date.now()
      const ended = yield* Refusal.of(
        Stream.unwrap(trail.watch(ownerOfA, {}, { current: Effect.succeed(ownerOfA), expiresAt: start + 300 })).pipe(
          Stream.runDrain,
          Effect.timeout("2 seconds")
        )
      )
      assert.deepStrictEqual([ended._tag, "reason" in ended ? ended.reason : undefined], [
        "Unauthenticated",
        "ERR_JWT_EXPIRED"
      ])
      assert.isAtLeast(Date.now() - start, 290)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("a role binding's entry shows each reader its identity, group and role as GET shows them to that reader", () =>
    Effect.gen(function*() {
      const { a, org, ownerOfA } = yield* setUp
      const trail = yield* AuditTrail.AuditTrail
      const bindings = yield* RoleBindings.RoleBindings
      // An identity of the organization, bound in folder a, whose owner may not list the organization's identities.
      const outsider = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "org robot",
        description: "kept at the organization",
        claimMatch: { issuer: "https://issuer.example.com", subject: "org-robot" }
      })
      const after = yield* (yield* Events.Events).latest
      const watched: Array<ChangeLog.Entry> = []
      const watching = yield* Stream.unwrap(trail.watch(ownerOfA, { after })).pipe(
        Stream.flattenIterables,
        Stream.runForEach((entry) => Effect.sync(() => watched.push(entry))),
        Effect.fork
      )
      const binding = yield* bindings.create(Principal.system, a.uid, {
        identityUid: outsider.uid,
        roleUid: Role.builtInByName("viewer")!.uid
      })
      const asGet = Schema.encodeSync(RoleBinding.RoleBinding)(yield* bindings.get(ownerOfA, binding.uid))
      assert.deepStrictEqual(asGet.identity, {
        uid: outsider.uid,
        name: "",
        description: "",
        subject: "",
        issuer: ""
      })
      assert.strictEqual(asGet.group.name, "a")
      const listed = (yield* trail.list(ownerOfA, { subject: binding.uid })).items
      assert.deepStrictEqual(listed.map((e) => e.body), [asGet])
      while (!watched.some((e) => e.subject === binding.uid)) yield* Effect.sleep("10 millis")
      assert.deepStrictEqual(watched.filter((e) => e.subject === binding.uid).map((e) => e.body), [asGet])
      yield* Fiber.interrupt(watching)
      // Whoever may list the identity sees it whole, as GET shows it to them.
      const whole = (yield* trail.list(Principal.system, { subject: binding.uid })).items[0]!.body
      assert.deepInclude(whole.identity as object, { name: "org robot", subject: "org-robot" })
      // Deliveries of folder a's subscriptions show what a reader holding everything at a may see.
      const [delivered] = yield* trail.seenFrom(
        a.uid,
        (yield* trail.list(Principal.system, { subject: binding.uid }))
          .items
      )
      assert.deepStrictEqual(delivered!.body, asGet)
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
