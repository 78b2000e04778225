/**
 * One tenant's `:apply` cannot stop the others (DECISIONS §20): on a server as `pnpm start` runs one (SQLite), other
 * clients' reads and `/readyz` are answered while a large document is applied; a second apply to the same
 * organization is refused at once, to be retried; a client that leaves cancels its apply; a document over the limit
 * is refused before any work.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fetchJson, startedLikePnpmStart } from "./support.js"

/**
 * A server as `pnpm start` runs one, its bootstrap token, its organization's uid, and `apply`: a `:apply` of a body to
 * that organization as its owner, the answer and its parsed body (`fetchJson`).
 */
const started = Effect.gen(function*() {
  const { cwd, url } = yield* startedLikePnpmStart
  const owner = readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8").trim()
  const org: string = (yield* Effect.promise(() =>
    fetchJson(url, "GET", "/iam/v2beta1/groups?uidp.in_root=true", owner)
  )).body.groups[0].uid
  const apply = (body: object) => fetchJson(url, "POST", `/iam/v2beta1/groups/${org}:apply`, owner, body)
  return { url, owner, org, apply }
})

/** A document of `count` folders side by side in the organization `default`. */
const flat = (count: number, prefix = "f") => ({
  organizations: {
    default: { folders: Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, {}])) }
  }
})

/**
 * `count` identities in the organization `default`, each described as `description`. Applied over the same
 * identities described otherwise, it is slow enough to be measured beside: each update is made by itself, where
 * creates of folders, identities and bindings are made a thousand at a time.
 */
const described = (count: number, description: string) => ({
  organizations: {
    default: {
      identities: Object.fromEntries(
        Array.from({ length: count }, (_, i) => [
          `i${i}`,
          { issuer: "https://issuer.example.invalid", subject: `i${i}`, description }
        ])
      )
    }
  }
})

/** The organization's 3,000 identities, made now, and a document that updates each of them. */
const slowApply = async (apply: (body: object) => Promise<{ status: number; body: any }>) => {
  const made = await apply({ document: described(3_000, "before") })
  assert.strictEqual(made.status, 200, JSON.stringify(made.body))
  return described(3_000, "after")
}

/** Each request's time, in order, of a reader sending one after another until `until` settles. */
const readWhile = async (url: string, token: string, org: string, until: Promise<unknown>) => {
  let done = false
  void until.finally(() => (done = true))
  const times: Array<number> = []
  for (let i = 0; !done; i++) {
    const started = performance.now()
    const response = await fetch(`${url}${i % 2 === 0 ? "/readyz" : `/iam/v2beta1/groups/${org}`}`, {
      headers: { authorization: `Bearer ${token}` }
    })
    await response.arrayBuffer()
    assert.strictEqual(response.status, 200)
    times.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return times
}

const p99 = (times: ReadonlyArray<number>) => [...times].sort((a, b) => a - b)[Math.floor(times.length * 0.99)]!

describe("an apply beside other clients", () => {
  it.scopedLive(
    "other clients' reads and /readyz are answered while a large document is applied",
    () =>
      Effect.gen(function*() {
        const { apply, org, owner, url } = yield* started
        yield* Effect.promise(async () => {
          const document = await slowApply(apply)
          const began = performance.now()
          const applying = apply({ document, validateOnly: true })
          const times = await readWhile(url, owner, org, applying)
          const took = performance.now() - began
          assert.strictEqual((await applying).status, 200)
          // Measured against the apply itself: a reader kept waiting would wait about as long as the apply takes.
          assert.isAtLeast(times.length, 10, `${times.length} reads in ${took.toFixed(0)} ms`)
          assert.isBelow(
            p99(times),
            took / 5,
            `p99 ${p99(times).toFixed(0)} ms beside an apply of ${took.toFixed(0)} ms`
          )
        })
      }),
    { timeout: 120_000 }
  )

  it.scopedLive(
    "a second apply to the organization while one runs is ABORTED, to retry after a second",
    () =>
      Effect.gen(function*() {
        const { apply, org, owner, url } = yield* started
        yield* Effect.promise(async () => {
          const document = await slowApply(apply)
          const ask = () =>
            fetch(`${url}/iam/v2beta1/groups/${org}:apply`, {
              method: "POST",
              headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
              body: JSON.stringify({ document: described(3_000, "before") })
            })
          // Whichever takes the organization first holds it: on a busy machine the first, reading its large document,
          // may take it after a second asked soon after. So each round asks a little later, until a second asked
          // while the first holds it is refused (the first then answered as usual).
          let round: { first: { status: number }; second: Response; body: any } | undefined
          for (let wait = 0; round === undefined || round.second.status !== 409; wait += 100) {
            assert.isBelow(wait, 5_000, "a second apply was never asked while the first ran")
            const first = apply({ document, validateOnly: true })
            await new Promise((resolve) => setTimeout(resolve, wait))
            const second = await ask()
            round = { second, body: await second.json(), first: await first }
          }
          const { body, second } = round
          assert.strictEqual(round.first.status, 200)
          assert.strictEqual(second.status, 409, JSON.stringify(body))
          assert.strictEqual(body.code, 10)
          assert.strictEqual(body.details[0]?.reason, "APPLY_IN_PROGRESS")
          assert.strictEqual(second.headers.get("retry-after"), "1")
          // Once the first is done, the same request goes through.
          const again = await apply({ document: described(3_000, "before") })
          assert.strictEqual(again.status, 200, JSON.stringify(again.body))
        })
      }),
    { timeout: 120_000 }
  )

  it.scopedLive("a client that leaves cancels its apply: nothing of it is applied", () =>
    Effect.gen(function*() {
      const { apply, org, owner, url } = yield* started
      yield* Effect.promise(async () => {
        const document = await slowApply(apply)
        const leaving = new AbortController()
        const abandoned = fetch(`${url}/iam/v2beta1/groups/${org}:apply`, {
          method: "POST",
          headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
          body: JSON.stringify({ document }),
          signal: leaving.signal
        }).catch(() => undefined)
        await new Promise((resolve) => setTimeout(resolve, 300))
        leaving.abort()
        await abandoned
        // The organization takes the next apply (the abandoned one let go of it), and none of the abandoned
        // updates were made, then or later.
        const kept = {
          organizations: {
            default: { ...described(3_000, "before").organizations.default, ...flat(1, "kept").organizations.default }
          }
        }
        let next = await apply({ document: kept })
        for (let i = 0; i < 50 && next.status === 409; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          next = await apply({ document: kept })
        }
        assert.strictEqual(next.status, 200, JSON.stringify(next.body))
        await new Promise((resolve) => setTimeout(resolve, 3_000))
        const folders = await fetchJson(url, "GET", `/iam/v2beta1/groups?uidp.children_of=${org}`, owner)
        assert.deepStrictEqual(folders.body.groups.map((g: { name: string }) => g.name), ["kept0"])
        const identities = await fetchJson(
          url,
          "GET",
          `/iam/v2beta1/identities?uidp.children_of=${org}&page_size=5000`,
          owner
        )
        const descriptions = new Set(
          identities.body.identities.filter((i: { name: string }) => i.name !== "bootstrap-admin").map((
            i: { description: string }
          ) => i.description)
        )
        assert.deepStrictEqual([...descriptions], ["before"])
      })
    }), { timeout: 120_000 })

  it.scopedLive("a document over the limit is refused before any work, naming the limit", () =>
    Effect.gen(function*() {
      const { apply, org, owner, url } = yield* started
      yield* Effect.promise(async () => {
        const refused = await apply({
          document: flat(10_001)
        })
        assert.strictEqual(refused.status, 400)
        assert.include(refused.body.message, "declares 10001 resources; a document declares at most 10000")
        const folders = await fetchJson(url, "GET", `/iam/v2beta1/groups?uidp.children_of=${org}`, owner)
        assert.deepStrictEqual(folders.body.groups, [])
      })
    }), { timeout: 120_000 })
})
