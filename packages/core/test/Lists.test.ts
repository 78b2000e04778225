import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import type * as Lists from "../src/engine/Lists.js"
import type { ListOptions } from "../src/engine/Lists.js"
import type { Group } from "../src/iam/Group.js"
import { Arbor, Groups, Identities, Principal } from "../src/index.js"
import type { TagListOptions } from "../src/registry/Tags.js"
import * as Refusal from "../src/testing/Refusal.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

/** An organization with 14 folders named `f00` … `f13`, created one second apart. */
const fourteen = Effect.gen(function*() {
  const org = yield* organization("acme")
  const folders: Array<Group> = []
  for (let i = 0; i < 14; i++) {
    folders.push(yield* folder(org.uid, `f${String(i).padStart(2, "0")}`))
    yield* TestClock.adjust("1 second")
  }
  return { org, folders }
})

/** Every item of a list, following page tokens. */
const all = (options: ListOptions) =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const items: Array<Group> = []
    let pageToken = options.pageToken
    do {
      const page = yield* groups.list(Principal.system, { ...options, pageToken })
      items.push(...page.items)
      pageToken = page.nextPageToken
    } while (pageToken !== undefined)
    return items
  })

describe("Lists", () => {
  it.effect("the spec's example: 14 matches, page_size=5, skip=10 gives the last 4 and skipped 10", () =>
    withArbor(Effect.gen(function*() {
      const { folders, org } = yield* fourteen
      const page = yield* (yield* Groups.Groups).list(Principal.system, {
        descendantsOf: org.uid,
        pageSize: 5,
        skip: 10,
        orderBy: "name"
      })
      assert.deepStrictEqual(page.items.map((g) => g.name), folders.slice(10).map((g) => g.name))
      assert.strictEqual(page.skipped, 10)
      assert.strictEqual(page.totalCount, 14)
      assert.isUndefined(page.nextPageToken)
    })))

  it.effect("the order set by order_by is kept across pages, with no item twice", () =>
    withArbor(Effect.gen(function*() {
      const { folders, org } = yield* fourteen
      const names = folders.map((g) => g.name)
      for (
        const [orderBy, expected] of [
          ["name desc", [...names].reverse()],
          ["created_at desc", [...names].reverse()],
          ["createTime", names],
          ["update_time asc, name desc", names]
        ] as const
      ) {
        for (const pageSize of [1, 3, 5, 14, 50]) {
          const items = yield* all({ descendantsOf: org.uid, orderBy, pageSize })
          assert.deepStrictEqual(items.map((g) => g.name), expected, `${orderBy} / ${pageSize}`)
        }
      }
      const byUid = yield* all({ descendantsOf: org.uid, pageSize: 4 })
      assert.deepStrictEqual(byUid.map((g) => g.uid), folders.map((g) => g.uid).sort())
    })))

  it.effect("rows inserted or deleted between pages never repeat or skip the others", () =>
    withArbor(Effect.gen(function*() {
      const { folders, org } = yield* fourteen
      const groups = yield* Groups.Groups
      const first = yield* groups.list(Principal.system, { descendantsOf: org.uid, orderBy: "name", pageSize: 5 })
      yield* groups.delete(Principal.system, folders[2]!.uid)
      yield* groups.delete(Principal.system, folders[7]!.uid)
      yield* folder(org.uid, "f00a")
      yield* folder(org.uid, "f99")
      const rest = yield* all({ descendantsOf: org.uid, orderBy: "name", pageSize: 5, pageToken: first.nextPageToken })
      const seen = [...first.items, ...rest].map((g) => g.name)
      assert.deepStrictEqual(seen, [
        ...["f00", "f01", "f02", "f03", "f04"],
        ...["f05", "f06", "f08", "f09", "f10", "f11", "f12", "f13", "f99"]
      ])
    })))

  describe("skip", () => {
    it.effect("skips from the token's position; past the end is an empty last page", () =>
      withArbor(Effect.gen(function*() {
        const { org } = yield* fourteen
        const groups = yield* Groups.Groups
        const first = yield* groups.list(Principal.system, { descendantsOf: org.uid, orderBy: "name", pageSize: 3 })
        const jumped = yield* groups.list(Principal.system, {
          descendantsOf: org.uid,
          orderBy: "name",
          pageSize: 3,
          skip: 6,
          pageToken: first.nextPageToken
        })
        assert.deepStrictEqual(jumped.items.map((g) => g.name), ["f09", "f10", "f11"])
        assert.strictEqual(jumped.skipped, 6)
        const past = yield* groups.list(Principal.system, { descendantsOf: org.uid, pageSize: 3, skip: 20 })
        assert.deepStrictEqual(past.items, [])
        assert.strictEqual(past.skipped, 14)
        assert.strictEqual(past.totalCount, 14)
        assert.isUndefined(past.nextPageToken)
      })))
  })

  describe("page tokens", () => {
    it.effect("a tampered, forged or foreign token is an invalid argument", () =>
      withArbor(Effect.gen(function*() {
        const { org } = yield* fourteen
        const groups = yield* Groups.Groups
        const options = { descendantsOf: org.uid, orderBy: "name", pageSize: 5 }
        const token = (yield* groups.list(Principal.system, options)).nextPageToken!
        const [body, mac] = token.split(".") as [string, string]
        const payload = JSON.parse(Buffer.from(body, "base64url").toString())
        const forgedBody = Buffer.from(JSON.stringify({ ...payload, a: ["f10", payload.a[1]] })).toString("base64url")
        for (
          const bad of [`${forgedBody}.${mac}`, `${body}.${mac.slice(0, -2)}AA`, "garbage", `${body}`, `${token}.x`, ""]
        ) {
          const result = yield* Effect.either(groups.list(Principal.system, { ...options, pageToken: bad }))
          if (bad === "") {
            assert.strictEqual(result._tag, "Right", "an empty token is the first page")
            continue
          }
          assert.strictEqual(result._tag, "Left", bad)
          assert.deepStrictEqual(result._tag === "Left" && fieldsOf(result.left), ["page_token"])
        }
        // The same bytes spelled otherwise: padding, trailing garbage, other unused low bits in the last character.
        const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        const sameBytes = mac.slice(0, -1) + alphabet[alphabet.indexOf(mac.slice(-1)) ^ 1]
        assert.deepStrictEqual(Buffer.from(sameBytes, "base64url"), Buffer.from(mac, "base64url"))
        for (const variant of [`${token}=`, `${token}!`, `${token} `, `${body}=.${mac}`, `${body}.${sameBytes}`]) {
          const error = yield* Refusal.of(groups.list(Principal.system, { ...options, pageToken: variant }))
          assert.deepStrictEqual(fieldsOf(error), ["page_token"], variant)
        }
        for (
          const other of [{ ...options, orderBy: "name desc" }, { ...options, descendantsOf: undefined }, {
            ...options,
            name: "f01"
          }]
        ) {
          const error = yield* Refusal.of(groups.list(Principal.system, { ...other, pageToken: token }))
          assert.deepStrictEqual(fieldsOf(error), ["page_token"])
        }
        const identities = yield* Refusal.of(
          (yield* Identities.Identities).list(Principal.system, { ...options, pageToken: token })
        )
        assert.deepStrictEqual(fieldsOf(identities), ["page_token"], "a groups token does not page identities")
        const bigger = yield* groups.list(Principal.system, { ...options, pageSize: 50, pageToken: token })
        assert.strictEqual(bigger.items.length, 9, "a different page size is honoured")
      })))

    it.effect("a token older than three days restarts the query from the beginning", () =>
      withArbor(Effect.gen(function*() {
        const { org } = yield* fourteen
        const groups = yield* Groups.Groups
        const options = { descendantsOf: org.uid, orderBy: "name", pageSize: 5 }
        const token = (yield* groups.list(Principal.system, options)).nextPageToken!
        yield* TestClock.adjust("71 hours")
        const fresh = yield* groups.list(Principal.system, { ...options, pageToken: token })
        assert.strictEqual(fresh.items[0]!.name, "f05")
        yield* TestClock.adjust("2 hours")
        const restarted = yield* groups.list(Principal.system, { ...options, pageToken: token })
        assert.strictEqual(restarted.items[0]!.name, "f00")
      })))
  })

  describe("parameters", () => {
    it.effect("page_size: absent or 0 is 50, above 200 is 200, negative or fractional is invalid", () =>
      withArbor(Effect.gen(function*() {
        const org = yield* organization("acme")
        const identities = yield* Identities.Identities
        for (let i = 0; i < 210; i++) {
          yield* identities.create(Principal.system, org.uid, { name: `i${i}`, claimMatch: claimMatch(`s${i}`) })
        }
        const list = (pageSize?: number) => identities.list(Principal.system, { pageSize })
        assert.strictEqual((yield* list()).items.length, 50)
        assert.strictEqual((yield* list(0)).items.length, 50)
        assert.strictEqual((yield* list(500)).items.length, 200)
        assert.strictEqual((yield* list(500)).totalCount, 210)
        for (const bad of [-1, 1.5, Number.NaN]) {
          assert.deepStrictEqual(fieldsOf(yield* Refusal.of(list(bad))), ["page_size"])
        }
        assert.deepStrictEqual(fieldsOf(yield* Refusal.of(identities.list(Principal.system, { skip: -3 }))), ["skip"])
      })))

    it.effect("order_by: aliases, several keys, unknown keys and directions are invalid", () =>
      withArbor(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        for (const ok of ["uid", "name asc", "createTime desc", "updated_at,name desc", " name  DESC , uid "]) {
          yield* groups.list(Principal.system, { orderBy: ok })
        }
        for (const bad of ["color", "name sideways", "name desc extra", "name, name", "verified"]) {
          assert.deepStrictEqual(fieldsOf(yield* Refusal.of(groups.list(Principal.system, { orderBy: bad }))), [
            "order_by"
          ], bad)
        }
      })))

    it.effect("malformed uids in filters are invalid, never wildcards; several are reported together", () =>
      withArbor(Effect.gen(function*() {
        const { org } = yield* fourteen
        const groups = yield* Groups.Groups
        const error = yield* Refusal.of(groups.list(Principal.system, {
          descendantsOf: org.uid.slice(0, 20),
          childrenOf: "%",
          pageSize: -1
        }))
        assert.deepStrictEqual(fieldsOf(error), ["uidp.descendants_of", "uidp.children_of", "page_size"])
      })))
  })

  it.effect("filters: children_of, descendants_of (strict), ancestors_of, in_root, ids, name", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const other = yield* organization("other")
      const a = yield* folder(org.uid, "a")
      const b = yield* folder(a.uid, "b")
      const c = yield* folder(b.uid, "c")
      const d = yield* folder(org.uid, "d")
      const names = (options: ListOptions) =>
        Effect.map(all({ ...options, orderBy: "name" }), (items) => items.map((g) => g.name))
      assert.deepStrictEqual(yield* names({ childrenOf: org.uid }), ["a", "d"])
      assert.deepStrictEqual(yield* names({ descendantsOf: a.uid }), ["b", "c"])
      assert.deepStrictEqual(yield* names({ ancestorsOf: c.uid }), ["a", "acme", "b"])
      assert.deepStrictEqual(yield* names({ ancestorsOf: org.uid }), [])
      assert.deepStrictEqual(yield* names({ inRoot: true }), ["acme", "other"])
      assert.deepStrictEqual(yield* names({ ids: [d.uid, other.uid, d.uid] }), ["d", "other"])
      assert.deepStrictEqual(yield* names({ name: "c" }), ["c"])
      assert.deepStrictEqual(yield* names({ descendantsOf: org.uid, name: "a" }), ["a"])
      assert.deepStrictEqual(yield* names({ descendantsOf: other.uid, name: "a" }), [])
      assert.deepStrictEqual(yield* names({ childrenOf: a.uid, descendantsOf: org.uid }), ["b"])
    })))

  it.effect("only visible items are counted and paged: pages are full, totalCount is the visible count", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const groups = yield* Groups.Groups
      const hidden = yield* folder(org.uid, "hidden")
      const shown = yield* folder(org.uid, "shown")
      for (let i = 0; i < 12; i++) {
        yield* folder(hidden.uid, `h${i}`)
        yield* folder(shown.uid, `s${i}`)
      }
      const member = yield* principalWith(org.uid, "member", "viewer", [shown.uid])
      const first = yield* groups.list(member, { pageSize: 5, orderBy: "name" })
      assert.strictEqual(first.totalCount, 13)
      assert.deepStrictEqual(first.items.map((g) => g.name), ["s0", "s1", "s10", "s11", "s2"])
      const second = yield* groups.list(member, { pageSize: 5, orderBy: "name", pageToken: first.nextPageToken })
      assert.strictEqual(second.items.length, 5)
      const everything = yield* groups.list(member, { descendantsOf: org.uid, pageSize: 200 })
      assert.strictEqual(everything.items.length, 13)
      assert.isTrue(everything.items.every((g) => g.uid === shown.uid || g.uid.startsWith(`${shown.uid}/`)))
      assert.strictEqual((yield* groups.list(member, { descendantsOf: hidden.uid })).totalCount, 0)
    })))
})

describe("Lists.list's filters, as the compiler holds a service to them", () => {
  it("a list whose options go beyond the common ones must be given the filters that apply them", () => {
    // Checked by the type check (`pnpm lint`): each `@ts-expect-error` fails it once its line compiles.
    const list = (...args: Parameters<typeof Lists.list<unknown, never, TagListOptions>>) => args.length
    const ops = undefined as never
    const spec = undefined as never
    // @ts-expect-error: `digest` declared, and no filters to apply it
    list(ops, spec, Principal.system, { digest: "sha256:…" })
    assert.strictEqual(list(ops, spec, Principal.system, { digest: "sha256:…" }, { conditions: [], digest: null }), 5)
    // The common options alone need none.
    const common = (...args: Parameters<typeof Lists.list<unknown, never, ListOptions>>) => args.length
    assert.strictEqual(common(ops, spec, Principal.system, { name: "a" }), 4)
  })
})
