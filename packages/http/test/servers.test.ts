/**
 * Several servers on one PostgreSQL database, as behind a load balancer: two server processes with the same base URL
 * and separate data directories, started together on an empty database, agree on everything a client can see, the
 * change log's order included.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import { admin, freePort, startServer } from "./processes.js"
import { fetchJson, watch } from "./support.js"

/** Two server processes on a new database, each with a data directory of its own, starting together. */
const twoServers = async (more: Record<string, string> = {}) => {
  const url = await Effect.runPromise(freshDatabase)
  const env = {
    ARBOR_STORE: "postgres",
    ARBOR_DATABASE_URL: url,
    ARBOR_DATABASE_POOL: "4",
    ARBOR_SECRETS_KEY: "cd".repeat(32),
    ARBOR_BASE_URL: "http://localhost:8080",
    ...more
  }
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), "arbor-server-")))
  const ports = [await freePort(), await freePort()]
  const servers = dirs.map((dir, i) => startServer(dir, ports[i]!, { ...env, ARBOR_DATA_DIR: dir }))
  return { dirs, env, ports, servers }
}

describe("two servers on one PostgreSQL database", () => {
  it("agree on tokens, page tokens, writes, uniqueness, revocations and key rotations", async () => {
    const { dirs, env, ports, servers } = await twoServers()
    try {
      await Promise.all(servers.map((s) => s.ready))
      const call = (server: number, method: string, path: string, token: string, body?: unknown) =>
        fetchJson(`http://127.0.0.1:${ports[server]}`, method, path, token, body)

      // Exactly one of them bootstrapped; its token works on both.
      const tokens = dirs.map((d) => join(d, "bootstrap-token")).filter((f) => existsSync(f))
      assert.strictEqual(tokens.length, 1, "one server bootstraps")
      const owner = readFileSync(tokens[0]!, "utf8").trim()
      const orgs = await call(1, "GET", "/iam/v2beta1/groups?uidp.in_root=true", owner)
      assert.strictEqual(orgs.status, 200)
      assert.strictEqual(orgs.body.groups.length, 1, "one organization")
      const org: string = orgs.body.groups[0].uid
      assert.strictEqual((await call(0, "GET", `/iam/v2beta1/groups/${org}`, owner)).status, 200)

      // A write on one is read on the other at once; a page token of one continues on the other.
      const created = await call(0, "POST", `/iam/v2beta1/groups/${org}`, owner, { name: "a" })
      assert.strictEqual((await call(1, "GET", `/iam/v2beta1/groups/${created.body.uid}`, owner)).body.name, "a")
      for (const name of ["b", "c"]) await call(1, "POST", `/iam/v2beta1/groups/${org}`, owner, { name })
      const first = await call(0, "GET", `/iam/v2beta1/groups?uidp.children_of=${org}&page_size=1&order_by=name`, owner)
      const second = await call(
        1,
        "GET",
        `/iam/v2beta1/groups?uidp.children_of=${org}&page_size=1&order_by=name&page_token=${first.body.nextPageToken}`,
        owner
      )
      assert.deepStrictEqual([first.body.groups[0].name, second.body.groups[0].name], ["a", "b"])

      // Concurrent creates of one name, spread over both, leave exactly one.
      const racers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call(i % 2, "POST", `/iam/v2beta1/groups/${org}`, owner, { name: "same" }))
      )
      assert.deepStrictEqual(racers.map((r) => r.status).sort(), [200, ...Array(9).fill(409)])

      // A binding deleted on one denies on the other at the very next request.
      const viewer = (await call(1, "GET", "/iam/v2beta1/roles?name=viewer", owner)).body.roles[0].uid
      const identity = await call(0, "POST", `/iam/v2beta1/identities/${org}`, owner, {
        name: "reader",
        claimMatch: { issuer: "https://ci.example.com", subject: "reader" }
      })
      const binding = await call(0, "POST", `/iam/v2beta1/roleBindings/${org}`, owner, {
        identityUid: identity.body.uid,
        roleUid: viewer
      })
      const adminEnv = { ...env, ARBOR_DATA_DIR: dirs[0]! }
      const reader = (await admin(dirs[0]!, ["token", "--identity", identity.body.uid], adminEnv)).stdout.trim()
      assert.strictEqual((await call(1, "GET", `/iam/v2beta1/groups/${org}`, reader)).status, 200)
      assert.strictEqual((await call(0, "DELETE", `/iam/v2beta1/roleBindings/${binding.body.uid}`, owner)).status, 200)
      assert.strictEqual((await call(1, "GET", `/iam/v2beta1/groups/${org}`, reader)).status, 403)

      // A key rotation made beside one server is published by both at once, before anything signs with it (two
      // minutes later): tokens made meanwhile carry the key they knew, and verify everywhere.
      const kid = (await admin(dirs[0]!, ["rotate-keys"], adminEnv)).stdout.trim()
      for (const server of [0, 1]) {
        const published = await call(server, "GET", "/.well-known/jwks.json", owner)
        assert.include(published.body.keys.map((k: { kid: string }) => k.kid), kid)
      }
      const rotated =
        (await admin(dirs[1]!, ["token", "--identity", identity.body.uid], { ...env, ARBOR_DATA_DIR: dirs[1]! }))
          .stdout.trim()
      assert.notStrictEqual(JSON.parse(Buffer.from(rotated.split(".")[0]!, "base64url").toString()).kid, kid)
      await call(0, "POST", `/iam/v2beta1/roleBindings/${org}`, owner, {
        identityUid: identity.body.uid,
        roleUid: viewer
      })
      for (const server of [0, 1]) {
        assert.strictEqual((await call(server, "GET", `/iam/v2beta1/groups/${org}`, rotated)).status, 200)
      }
      const jwks = await Promise.all([0, 1].map((s) => call(s, "GET", "/.well-known/jwks.json", owner)))
      for (const keys of jwks) assert.include(keys.body.keys.map((k: { kid: string }) => k.kid), kid)

      // One apply to an organization at a time, whichever server each reaches: the other is ABORTED, to retry. (The
      // first updates 3,000 identities, each by itself: slow enough to be overlapped.)
      const name: string = orgs.body.groups[0].name
      const applied = (server: number, description: string, validateOnly = true) =>
        call(server, "POST", `/iam/v2beta1/groups/${org}:apply`, owner, {
          document: {
            organizations: {
              [name]: {
                identities: Object.fromEntries(
                  Array.from(
                    { length: 3_000 },
                    (_, i) => [`i${i}`, { issuer: "https://ci.example.com", subject: `i${i}`, description }]
                  )
                )
              }
            }
          },
          validateOnly
        })
      assert.strictEqual((await applied(0, "before", false)).status, 200)
      const running = applied(0, "after")
      await new Promise((resolve) => setTimeout(resolve, 300))
      const refused = await applied(1, "before")
      assert.strictEqual((await running).status, 200, JSON.stringify((await running).body))
      assert.deepStrictEqual([refused.status, refused.headers["retry-after"], refused.body.details?.[0]?.reason], [
        409,
        "1",
        "APPLY_IN_PROGRESS"
      ])
      assert.strictEqual((await applied(1, "before")).status, 200, "once the first is done")
    } finally {
      for (const server of servers) server.child.kill("SIGTERM")
      await Promise.all(servers.map((s) => s.exited))
    }
  }, 180_000)

  it(
    "with ARBOR_DECISION_STALENESS, a revocation denies on its own server at once and on the other once the bound has passed",
    async () => {
      const bound = 400
      const { dirs, env, ports, servers } = await twoServers({ ARBOR_DECISION_STALENESS: `${bound} millis` })
      try {
        await Promise.all(servers.map((s) => s.ready))
        const call = (server: number, method: string, path: string, token: string, body?: unknown) =>
          fetchJson(`http://127.0.0.1:${ports[server]}`, method, path, token, body)
        const owner = readFileSync(dirs.map((d) => join(d, "bootstrap-token")).find((f) => existsSync(f))!, "utf8")
          .trim()
        const org: string = (await call(1, "GET", "/iam/v2beta1/groups?uidp.in_root=true", owner)).body.groups[0].uid
        const viewer = (await call(1, "GET", "/iam/v2beta1/roles?name=viewer", owner)).body.roles[0].uid
        const identity = await call(0, "POST", `/iam/v2beta1/identities/${org}`, owner, {
          name: "reader",
          claimMatch: { issuer: "https://ci.example.com", subject: "reader" }
        })
        const reader = (await admin(dirs[0]!, ["token", "--identity", identity.body.uid], {
          ...env,
          ARBOR_DATA_DIR: dirs[0]!
        })).stdout.trim()
        const bind = () =>
          call(0, "POST", `/iam/v2beta1/roleBindings/${org}`, owner, {
            identityUid: identity.body.uid,
            roleUid: viewer
          })
        const canRead = async (server: number) =>
          (await call(server, "GET", `/iam/v2beta1/groups/${org}`, reader)).status === 200
        // Revoked on server 0: server 0 denies at the very next request.
        let binding = await bind()
        await new Promise((resolve) => setTimeout(resolve, bound))
        assert.deepStrictEqual([await canRead(0), await canRead(1)], [true, true])
        assert.strictEqual(
          (await call(0, "DELETE", `/iam/v2beta1/roleBindings/${binding.body.uid}`, owner)).status,
          200
        )
        assert.isFalse(await canRead(0), "the server that revoked")
        // Server 1 denies at the latest once the bound has passed since the revocation was acknowledged.
        binding = await bind()
        await new Promise((resolve) => setTimeout(resolve, bound))
        assert.isTrue(await canRead(1))
        assert.strictEqual(
          (await call(0, "DELETE", `/iam/v2beta1/roleBindings/${binding.body.uid}`, owner)).status,
          200
        )
        await new Promise((resolve) => setTimeout(resolve, bound))
        assert.isFalse(await canRead(1), "the other server, the bound passed")
      } finally {
        for (const server of servers) server.child.kill("SIGTERM")
        await Promise.all(servers.map((s) => s.exited))
      }
    },
    180_000
  )

  it("a watch on one, and a webhook, see every write of both, once each, in one order, as writers race", async () => {
    const { dirs, ports, servers } = await twoServers({ ARBOR_ALLOW_INSECURE_SINKS: "loopback" })
    try {
      await Promise.all(servers.map((s) => s.ready))
      const base = (server: number) => `http://127.0.0.1:${ports[server]}`
      const owner = readFileSync(dirs.map((d) => join(d, "bootstrap-token")).find((f) => existsSync(f))!, "utf8").trim()
      const org: string = (await fetchJson(base(1), "GET", "/iam/v2beta1/groups?uidp.in_root=true", owner)).body
        .groups[0].uid
      // A webhook of the organization: both servers deliver, each entry once.
      const received: Array<string> = []
      const sink = createServer((request, response) => {
        received.push(String(request.headers["ce-id"]))
        request.resume().on("end", () => response.writeHead(204).end())
      })
      await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve))
      const subscription = await fetchJson(base(1), "POST", `/events/v2beta1/subscriptions/${org}`, owner, {
        sink: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`
      })
      assert.strictEqual(subscription.status, 200, JSON.stringify(subscription.body))
      const newest = await fetchJson(base(0), "GET", "/events/v2beta1/events?order_by=time%20desc&page_size=1", owner)
      const from: string = newest.body.events[0].cursor
      const writes = 40
      const watching = watch(`${base(0)}/events/v2beta1/events:watch?after=${from}`, owner, writes)
      // Forty creates, twenty on each server, eight at a time.
      const created: Array<string> = []
      for (let batch = 0; batch < writes / 8; batch++) {
        const answers = await Promise.all(
          Array.from(
            { length: 8 },
            (_, i) => fetchJson(base(i % 2), "POST", `/iam/v2beta1/groups/${org}`, owner, { name: `g${batch}-${i}` })
          )
        )
        for (const answer of answers) created.push(answer.body.uid)
      }
      const { messages } = await watching
      const subjects = messages.map((m) => m.data.subject as string)
      assert.sameMembers(subjects, created, "each write once")
      const cursors = messages.map((m) => m.id)
      assert.deepStrictEqual([...cursors].sort(), cursors, "in the log's order")
      // Reading again from the same cursor, on the other server, gives the same entries in the same order.
      const again = await watch(`${base(1)}/events/v2beta1/events:watch?after=${from}`, owner, writes)
      assert.deepStrictEqual(again.messages.map((m) => m.id), cursors)

      // Every write reached the webhook once, in the log's order, from whichever server held its lease.
      for (let i = 0; i < 200 && received.length < writes; i++) await new Promise((r) => setTimeout(r, 50))
      await new Promise((r) => setTimeout(r, 500))
      sink.close()
      assert.deepStrictEqual(received, messages.map((m) => m.data.id))
    } finally {
      for (const server of servers) server.child.kill("SIGTERM")
      await Promise.all(servers.map((s) => s.exited))
    }
  }, 120_000)

  it(
    "a watch without a cursor starts at the log's end, and shows racing writers in the order a replay shows",
    async () => {
      const { dirs, ports, servers } = await twoServers()
      try {
        await Promise.all(servers.map((s) => s.ready))
        const base = (server: number) => `http://127.0.0.1:${ports[server]}`
        const owner = readFileSync(dirs.map((d) => join(d, "bootstrap-token")).find((f) => existsSync(f))!, "utf8")
          .trim()
        const org: string = (await fetchJson(base(1), "GET", "/iam/v2beta1/groups?uidp.in_root=true", owner)).body
          .groups[0].uid
        // A folder created on B, then a watch opened on A: the folder's creation happened before the watch.
        for (let round = 0; round < 5; round++) {
          const before = await fetchJson(base(1), "POST", `/iam/v2beta1/groups/${org}`, owner, {
            name: `before-${round}`
          })
          const watching = watch(`${base(0)}/events/v2beta1/events:watch`, owner, 1)
          await new Promise((r) => setTimeout(r, 300))
          const after = await fetchJson(base(0), "POST", `/iam/v2beta1/groups/${org}`, owner, {
            name: `after-${round}`
          })
          const { messages } = await watching
          assert.deepStrictEqual(messages.map((m) => m.data.subject), [after.body.uid], `not ${before.body.uid}`)
        }
        // Four writers, two on each server, writing until the watch has seen enough.
        let writing = true
        const writers = Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; writing; i++) {
            await fetchJson(base(w % 2), "POST", `/iam/v2beta1/groups/${org}`, owner, { name: `w${w}-${i}` })
          }
        })
        const count = 120
        const live = await watch(`${base(0)}/events/v2beta1/events:watch`, owner, count)
        writing = false
        await Promise.all(writers)
        const shown = live.messages.slice(0, count).map((m) => m.id)
        assert.strictEqual(shown.length, count)
        const replay = await watch(`${base(1)}/events/v2beta1/events:watch?after=${shown[0]}`, owner, count - 1)
        assert.deepStrictEqual(replay.messages.slice(0, count - 1).map((m) => m.id), shown.slice(1))
      } finally {
        for (const server of servers) server.child.kill("SIGTERM")
        await Promise.all(servers.map((s) => s.exited))
      }
    },
    120_000
  )
})
