import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import {
  Arbor,
  AuditTrail,
  ChangeLog,
  Events,
  Group,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  Principal,
  Repository,
  Role,
  RoleBindings,
  Store,
  Uid
} from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { claimMatch, organization, principalWith } from "./fixtures.js"

const viewer = Role.builtInByName("viewer")!.uid

/** Every entry in the log after `position`. */
const entriesAfter = (position?: string) => Effect.flatMap(Events.Events, (events) => events.after(position, 10_000))

describe("the change log", () => {
  it.scoped("every committed write appends its entries, in order; a refused write appends none", () =>
    Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const identities = yield* Identities.Identities
      const start = yield* (yield* Events.Events).latest
      const org = yield* organization("acme")
      const team = yield* groups.create(Principal.system, org.uid, { name: "team" })
      yield* groups.update(Principal.system, team.uid, { description: "d" })
      yield* Refusal.of(groups.create(Principal.system, org.uid, { name: "team" }))
      yield* Refusal.of(groups.delete(Principal.system, org.uid))
      const identity = yield* identities.create(Principal.system, team.uid, {
        name: "ci",
        claimMatch: claimMatch("ci")
      })
      const binding = yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: identity.uid,
        roleUid: viewer
      })
      yield* identities.delete(Principal.system, identity.uid)
      const entries = yield* entriesAfter(start)
      assert.deepStrictEqual(entries.map((e) => [e.type, e.subject, e.group]), [
        ["dev.chainguard.api.iam.group.created.v1", org.uid, org.uid],
        ["dev.chainguard.api.iam.group.created.v1", team.uid, team.uid],
        ["dev.chainguard.api.iam.group.updated.v1", team.uid, team.uid],
        ["dev.chainguard.api.iam.identity.created.v1", identity.uid, team.uid],
        ["dev.chainguard.api.iam.rolebindings.created.v1", binding.uid, org.uid],
        ["dev.chainguard.api.iam.rolebindings.deleted.v1", binding.uid, org.uid],
        ["dev.chainguard.api.iam.identity.deleted.v1", identity.uid, team.uid]
      ])
      assert.deepStrictEqual(new Set(entries.map((e) => e.id)).size, entries.length, "ids are unique")
      assert.deepStrictEqual(entries.map((e) => e.position), entries.map((e) => e.position).sort())
      // The body is the resource after the write; for a delete, as it was. A binding's references as they were when
      // it was written (DECISIONS §20): the identity deleted since keeps its name, for readers who may read it.
      assert.strictEqual(entries[2]!.body.description, "d")
      assert.deepStrictEqual(entries[5]!.body.identity, {
        uid: identity.uid,
        name: "ci",
        description: "",
        subject: "ci",
        issuer: "https://issuer.example.com"
      })
      assert.deepStrictEqual(entries[5]!.body.role, {
        uid: viewer,
        name: "viewer",
        description: "Viewer Role (built-in)"
      })
      const read = (yield* (yield* AuditTrail.AuditTrail).list(Principal.system, { subject: binding.uid })).items
      assert.deepStrictEqual(read.map((e) => (e.body.identity as { name: string }).name), ["ci", "ci"])
      assert.deepStrictEqual(read.map((e) => (e.body.role as { name: string }).name), ["viewer", "viewer"])
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.scoped("names the actor, how it signed in, and the request", () =>
    Effect.gen(function*() {
      const org = yield* organization("acme")
      const owner = yield* principalWith(org.uid, "owner", "owner")
      const start = yield* (yield* Events.Events).latest
      const act = { iss: "https://token.actions.githubusercontent.com", sub: "repo:acme/app:ref:refs/heads/main" }
      const caller = Principal.identity(owner.identityUid, { act, email: "ops@acme.example" })
      yield* (yield* Groups.Groups).create(caller, org.uid, { name: "team" }).pipe(ChangeLog.withRequestId("r-1"))
      yield* (yield* Groups.Groups).create(Principal.system, org.uid, { name: "other" })
      const [byOwner, bySystem] = yield* entriesAfter(start)
      assert.deepStrictEqual(byOwner!.actor, { subject: owner.identityUid, act, email: "ops@acme.example" })
      assert.strictEqual(byOwner!.requestId, "r-1")
      assert.deepStrictEqual(bySystem!.actor, { subject: "system" })
      assert.isUndefined(bySystem!.requestId)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.scoped("keeps no secret: no client secret, no invite code or its hash", () =>
    Effect.gen(function*() {
      const org = yield* organization("acme")
      const start = yield* (yield* Events.Events).latest
      const provider = yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
        name: "sso",
        defaultRole: viewer,
        oidc: { issuer: "https://sso.acme.example", clientId: "arbor", clientSecret: "s3cr3t-client-secret" }
      })
      yield* (yield* IdentityProviders.IdentityProviders).update(Principal.system, provider.uid, {
        oidc: { issuer: "https://sso.acme.example", clientId: "arbor", clientSecret: "an0ther-secret" }
      })
      const invite = yield* (yield* GroupInvites.GroupInvites).create(Principal.system, org.uid, { roleUid: viewer })
      const entries = yield* entriesAfter(start)
      assert.lengthOf(entries, 3)
      const logged = JSON.stringify(entries.map((e) => e.body))
      for (const secret of ["s3cr3t-client-secret", "an0ther-secret", invite.code!, "clientSecret", "codeHash"]) {
        assert.notInclude(logged, secret)
      }
      assert.strictEqual((entries[0]!.body.oidc as { clientId: string }).clientId, "arbor")
      assert.strictEqual((entries[2]!.body.role as { name: string }).name, "viewer")
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.scoped("a transaction that fails leaves neither its writes nor their entries", () =>
    Effect.gen(function*() {
      const org = yield* organization("acme")
      const start = yield* (yield* Events.Events).latest
      const store = yield* Store.Store
      const groups = yield* Repository.make(Group.table, Group.Group)
      const now = yield* DateTime.now
      const folder = new Group.Group({
        uid: Uid.makeChild(org.uid),
        name: "doomed",
        description: "",
        verified: false,
        createTime: now,
        updateTime: now
      })
      const failed = yield* Refusal.of(store.transaction(Effect.zipRight(groups.insert(folder), Effect.fail("undo"))))
      assert.strictEqual(failed, "undo")
      assert.isTrue(Option.isNone(yield* groups.get(folder.uid)))
      assert.deepStrictEqual(yield* entriesAfter(start), [])
      yield* groups.insert(folder)
      assert.deepStrictEqual((yield* entriesAfter(start)).map((e) => e.subject), [folder.uid])
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.scoped("retention: old entries are removed; a cursor from before them is refused, not left with a gap", () =>
    Effect.gen(function*() {
      const events = yield* Events.Events
      const trail = yield* AuditTrail.AuditTrail
      const org = yield* organization("acme")
      yield* (yield* Groups.Groups).create(Principal.system, org.uid, { name: "old" })
      const [oldEntry] = yield* Effect.map(trail.list(Principal.system, { subject: org.uid }), (p) => p.items)
      yield* TestClock.adjust("91 days")
      const recent = yield* (yield* Groups.Groups).create(Principal.system, org.uid, { name: "recent" })
      const everything = (yield* trail.list(Principal.system)).totalCount
      const removed = yield* events.prune((yield* Clock.currentTimeMillis) - Duration.toMillis("90 days"))
      assert.strictEqual(removed, everything - 1, "all but the recent folder's entry")
      const left = yield* trail.list(Principal.system)
      assert.deepStrictEqual(left.items.map((e) => e.subject), [recent.uid])
      const refused = yield* Refusal.of(events.after(oldEntry!.position))
      assert.strictEqual(refused._tag, "FailedPrecondition")
      assert.strictEqual(refused._tag === "FailedPrecondition" && refused.reason, "CURSOR_PRUNED")
      const watched = yield* Refusal.of(trail.watch(Principal.system, { after: oldEntry!.position }))
      assert.strictEqual(watched._tag, "FailedPrecondition")
      // A cursor at the newest entry removed, or later, misses nothing: it goes on.
      const newestRemoved = (yield* Repository.orInternal(ChangeLog.prunedThrough(yield* Store.Store)))!
      assert.deepStrictEqual((yield* events.after(newestRemoved)).map((e) => e.subject), [recent.uid])
      assert.strictEqual(yield* events.prune((yield* Clock.currentTimeMillis) - Duration.toMillis("90 days")), 0)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.scoped("Events.follow streams what commits from then on, from any position", () =>
    Effect.gen(function*() {
      const events = yield* Events.Events
      const org = yield* organization("acme")
      const from = yield* events.latest
      const following = yield* events.follow(from).pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      yield* (yield* Groups.Groups).create(Principal.system, org.uid, { name: "a" })
      yield* (yield* Groups.Groups).create(Principal.system, org.uid, { name: "b" })
      const seen = Chunk.toArray(yield* Fiber.join(following))
      assert.deepStrictEqual(seen.map((e) => e.body.name), ["a", "b"])
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.live("Events.relay: a receiver that falls behind catches up from the store, missing and repeating nothing", () =>
    Effect.gen(function*() {
      const events = yield* Events.Events
      const groups = yield* Groups.Groups
      const org = yield* organization("acme")
      const from = yield* events.latest
      const received: Array<string> = []
      let offers = 0
      let caughtUp = 0
      const relaying = yield* events.relay(from, {
        // Declines the first batch the tail offers and every third after it, and catches up with those after a
        // pause: however the tail batches the writes (fewer, larger batches on a loaded machine), one is declined.
        offer: (batch) => {
          if (batch.length === 0) return true
          if (++offers === 1 || offers % 3 === 0) return false
          batch.forEach((entry) => received.push(entry.position))
          return true
        },
        take: (batch) =>
          Effect.zipRight(
            Effect.sleep("1 millis"),
            Effect.sync(() => {
              caughtUp++
              batch.forEach((e) => received.push(e.position))
            })
          )
      }).pipe(Effect.fork)
      yield* Effect.sleep("50 millis")
      // Writers, one at a time and eight at once, while it follows.
      for (let i = 0; i < 40; i++) {
        yield* groups.create(Principal.system, org.uid, { name: `one-${i}` })
        yield* Effect.sleep("2 millis")
      }
      yield* Effect.forEach(
        Array.from({ length: 80 }, (_, i) => i),
        (i) => groups.create(Principal.system, org.uid, { name: `many-${i}` }),
        { concurrency: 8, discard: true }
      )
      const written = (yield* events.after(from, 1000)).map((entry) => entry.position)
      assert.lengthOf(written, 120)
      while (received.length < written.length) yield* Effect.sleep("20 millis")
      yield* Effect.sleep("100 millis")
      yield* Fiber.interrupt(relaying)
      assert.isAbove(caughtUp, 0)
      assert.deepStrictEqual(received, written)
    }).pipe(Effect.provide(Arbor.layerMemory)))
})
