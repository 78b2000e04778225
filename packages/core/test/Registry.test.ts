import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Arbor, Groups, Principal, Repos, Tags } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

describe("Repos and Tags", () => {
  it.effect("upsert by name: create, then update only what changed", () =>
    withArbor(Effect.gen(function*() {
      const repos = yield* Repos.Repos
      const org = yield* organization("acme")
      const nginx = yield* repos.upsert(Principal.system, org.uid, { name: "nginx", catalogTier: "APPLICATION" })
      assert.deepStrictEqual(
        [nginx.catalogTier, nginx.description, nginx.aliases, nginx.bundles, nginx.activeTags],
        ["APPLICATION", "", [], [], []]
      )
      yield* TestClock.adjust("1 minute")
      const same = yield* repos.upsert(Principal.system, org.uid, { name: "nginx", catalogTier: "APPLICATION" })
      assert.deepStrictEqual(same, nginx, "an upsert that changes nothing touches nothing")
      const changed = yield* repos.upsert(Principal.system, org.uid, { name: "nginx", description: "web server" })
      assert.strictEqual(changed.uid, nginx.uid)
      assert.deepStrictEqual([changed.description, changed.catalogTier], ["web server", "UNSPECIFIED"])
      assert.isTrue(changed.updateTime.epochMillis > nginx.updateTime.epochMillis)
      for (const name of ["Nginx", "-x", "a".repeat(129), "a b"]) {
        assert.deepStrictEqual(fieldsOf(yield* Refusal.of(repos.upsert(Principal.system, org.uid, { name }))), [
          "name"
        ], name)
      }
      yield* repos.upsert(Principal.system, org.uid, { name: "library/nginx-1.25_x.y" })
    })))

  it.effect("tags: upsert with explicit or synthetic digests; filters name, digest, updated_since", () =>
    withArbor(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-01-01T00:00:00Z"))
      const repos = yield* Repos.Repos
      const tags = yield* Tags.Tags
      const org = yield* organization("acme")
      const repo = yield* repos.upsert(Principal.system, org.uid, { name: "nginx" })
      const latest = yield* tags.upsert(Principal.system, repo.uid, { name: "latest" })
      assert.strictEqual(latest.digest, Tags.syntheticDigest("nginx", "latest"))
      assert.match(latest.digest, /^sha256:[0-9a-f]{64}$/)
      assert.notStrictEqual(Tags.syntheticDigest("nginx", "latest"), Tags.syntheticDigest("nginxl", "atest"))
      yield* TestClock.adjust("1 day")
      const digest = `sha256:${"ab".repeat(32)}`
      const pinned = yield* tags.upsert(Principal.system, repo.uid, { name: "1.25.3-r1", digest })
      yield* TestClock.adjust("1 day")
      yield* tags.upsert(Principal.system, repo.uid, { name: "latest", digest })
      const list = (options: Tags.TagListOptions) =>
        Effect.map(
          tags.list(Principal.system, { childrenOf: repo.uid, orderBy: "name", ...options }),
          (p) => p.items.map((t) => t.name)
        )
      assert.deepStrictEqual(yield* list({}), ["1.25.3-r1", "latest"])
      assert.deepStrictEqual(yield* list({ digest }), ["1.25.3-r1", "latest"])
      assert.deepStrictEqual(yield* list({ name: "latest" }), ["latest"])
      assert.deepStrictEqual(yield* list({ updatedSince: "2026-01-03T00:00:00Z" }), ["latest"])
      assert.deepStrictEqual(yield* list({ updatedSince: "2026-01-02T00:00:00.000Z" }), ["1.25.3-r1", "latest"])
      assert.deepStrictEqual(fieldsOf(yield* Refusal.of(list({ updatedSince: "yesterday" }))), ["updated_since"])
      assert.deepStrictEqual(
        fieldsOf(yield* Refusal.of(tags.upsert(Principal.system, repo.uid, { name: ".bad", digest: "md5:1" }))),
        [
          "name",
          "digest"
        ]
      )
      assert.strictEqual((yield* tags.get(Principal.system, pinned.uid)).digest, digest)
      const missingRepo = yield* Refusal.of(
        tags.upsert(Principal.system, `${org.uid}/0123456789abcdef`, { name: "x" })
      )
      assert.strictEqual(missingRepo._tag, "NotFound")
    })))

  it.effect("deleting a repo deletes its tags; a group with repos names them first", () =>
    withArbor(Effect.gen(function*() {
      const repos = yield* Repos.Repos
      const tags = yield* Tags.Tags
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      yield* folder(team.uid, "sub")
      const repo = yield* repos.upsert(Principal.system, team.uid, { name: "nginx" })
      for (const name of ["a", "b", "c"]) yield* tags.upsert(Principal.system, repo.uid, { name })
      const refusal = yield* Refusal.of((yield* Groups.Groups).delete(Principal.system, team.uid))
      assert.strictEqual(refusal.message, "Precondition failed: cannot delete group with child repos")
      yield* repos.delete(Principal.system, repo.uid)
      assert.strictEqual((yield* tags.list(Principal.system, { descendantsOf: org.uid })).totalCount, 0)
      assert.strictEqual(
        (yield* Refusal.of((yield* Groups.Groups).delete(Principal.system, team.uid))).message,
        "Precondition failed: cannot delete group with child groups"
      )
    })))

  it.effect("writes need repo.* and tag.*; readers need repo.list and tag.list", () =>
    withArbor(Effect.gen(function*() {
      const repos = yield* Repos.Repos
      const tags = yield* Tags.Tags
      const org = yield* organization("acme")
      const pusher = yield* principalWith(org.uid, "pusher", "registry.push")
      const puller = yield* principalWith(org.uid, "puller", "registry.pull")
      const viewer = yield* principalWith(org.uid, "viewer", "viewer")
      const repo = yield* repos.upsert(pusher, org.uid, { name: "app" })
      const tag = yield* tags.upsert(pusher, repo.uid, { name: "v1" })
      assert.strictEqual((yield* repos.list(puller)).totalCount, 1)
      assert.strictEqual((yield* tags.get(puller, tag.uid)).name, "v1")
      assert.strictEqual((yield* tags.get(viewer, tag.uid)).name, "v1")
      for (
        const denied of [
          repos.upsert(puller, org.uid, { name: "x" }),
          repos.upsert(viewer, org.uid, { name: "x" }),
          tags.upsert(puller, repo.uid, { name: "v2" }),
          tags.delete(viewer, tag.uid),
          repos.delete(puller, repo.uid)
        ] as ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>>
      ) {
        assert.strictEqual((yield* Refusal.of(denied))._tag, "PermissionDenied")
      }
      const outsider = yield* principalWith((yield* organization("other")).uid, "outsider", "owner")
      assert.strictEqual((yield* repos.list(outsider)).totalCount, 0)
      assert.strictEqual((yield* Refusal.of(tags.get(outsider, tag.uid)))._tag, "PermissionDenied")
    })))
})
