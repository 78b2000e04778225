/**
 * Webhook deliveries (docs/api.md §12) to a receiver on loopback: each delivery parsed by the official CloudEvents
 * SDK and its bearer JWT verified with jose against the server's JWKS, the body's digest checked; the log's order
 * kept; a failing sink retried with the same id, holding back only its own deliveries.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { HTTP } from "cloudevents"
import * as jose from "jose"
import { createHash } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/** A webhook receiver on 127.0.0.1: records every request, answers each with the next of `statuses` (then 200). */
const receiver = async () => {
  const received: Array<Received> = []
  const statuses: Array<number> = []
  const server: Server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => {
      received.push({ headers: request.headers, body, at: Date.now() })
      response.writeHead(statuses.shift() ?? 200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    received,
    statuses,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    /** Waits until `n` requests have arrived (at most 15 s). */
    until: async (n: number) => {
      for (let i = 0; i < 300 && received.length < n; i++) await new Promise((r) => setTimeout(r, 50))
      return received
    },
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

/** A sink on 127.0.0.1 that accepts every connection and request and never answers (until closed). */
const hangingSink = async () => {
  const sockets = new Set<Socket>()
  const server = createNetServer((socket) => {
    sockets.add(socket)
    socket.on("data", () => {}).on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => {
      sockets.forEach((socket) => socket.destroy())
      return new Promise((resolve) => server.close(resolve))
    }
  }
}

describe("webhook deliveries", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let owner: { org: string; identity: string; token: string }
  const rest = (method: string, path: string, body?: unknown) => fetchJson(server.url, method, path, owner.token, body)

  /** The pending deliveries gauge of `subscription` once `done` holds of it (within 5 s), or its last reading. */
  const pendingUntil = async (subscription: string, done: (n: number) => boolean) => {
    let count = Number.NaN
    for (let i = 0; i < 100; i++) {
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      const line = metrics.split("\n").find((l) =>
        l.startsWith("arbor_webhook_deliveries_pending{") && l.includes(`subscription="${subscription}"`)
      )
      count = line === undefined ? Number.NaN : Number(line.split(" ").at(-1))
      if (done(count)) break
      await new Promise((r) => setTimeout(r, 50))
    }
    return count
  }

  beforeAll(async () => {
    server = await startServer(await freePort(), {})
    owner = await server.runtime.runPromise(member("acme"))
  })
  afterAll(async () => {
    await server?.close()
  })

  // First, while no other subscription exists: what the store counts is theirs.
  it("subscriptions with nothing to deliver write nothing to the store", async () => {
    const writes = async () =>
      (await (await fetch(`${server.url}/metrics`)).text()).split("\n").filter((l) =>
        l.startsWith("arbor_store_statement_duration_seconds_count{") &&
        /operation="(insert|update)",table="subscription_deliveries"/.test(l)
      ).reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0)
    const quiet = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "quiet" })
    const folders = await Promise.all(
      Array.from({ length: 20 }, (_, i) => rest("POST", `/iam/v2beta1/groups/${quiet.body.uid}`, { name: `q${i}` }))
    )
    const before = await writes()
    const subscriptions = await Promise.all(
      folders.map((folder) =>
        rest("POST", `/events/v2beta1/subscriptions/${folder.body.uid}`, { sink: "http://127.0.0.1:9/idle" })
      )
    )
    // Each worker has looked (and would have held a lease for 2 s, then handed it back).
    await new Promise((r) => setTimeout(r, 3_000))
    assert.strictEqual(await writes() - before, 0)
    for (const subscription of subscriptions) {
      const health = (await rest("GET", `/events/v2beta1/subscriptions/${subscription.body.uid}`)).body.health
      assert.deepStrictEqual(health, { state: "ACTIVE", pending: 0 })
      await rest("DELETE", `/events/v2beta1/subscriptions/${subscription.body.uid}`)
    }
  }, 30_000)

  it("every entry of the group and below, in order, as CloudEvents whose JWT and digest verify", async () => {
    const sink = await receiver()
    try {
      const folder = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "before" })
      const subscription = await rest("POST", `/events/v2beta1/subscriptions/${folder.body.uid}`, { sink: sink.url })
      assert.strictEqual(subscription.status, 200, JSON.stringify(subscription.body))
      const team = await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "team" })
      await rest("PATCH", `/iam/v2beta1/groups/${team.body.uid}`, { description: "renamed" })
      await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "elsewhere" })
      await rest("POST", `/iam/v2beta1/groups/${team.body.uid}`, { name: "deeper" })
      const received = await sink.until(3)
      const trail = await rest("GET", `/events/v2beta1/events?uidp.descendants_of=${folder.body.uid}`)
      const expected = trail.body.events.filter((e: { subject: string }) => e.subject !== subscription.body.uid)
        .slice(-3)
      assert.lengthOf(received, 3)

      const jwks = jose.createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`))
      for (const [i, delivery] of received.entries()) {
        const event = HTTP.toEvent({ headers: delivery.headers, body: delivery.body })
        const single = Array.isArray(event) ? event[0]! : event
        assert.strictEqual(single.specversion, "1.0")
        assert.strictEqual(single.id, expected[i].id)
        assert.strictEqual(single.type, expected[i].type)
        assert.strictEqual(single.subject, expected[i].subject)
        assert.strictEqual(single.source, server.config.baseUrl)
        assert.strictEqual(single["group"], expected[i].group)
        assert.strictEqual(delivery.headers["content-type"], "application/json")
        assert.deepStrictEqual(single.data, { actor: expected[i].actor, body: expected[i].body })

        const token = /^Bearer (.+)$/.exec(delivery.headers.authorization ?? "")![1]!
        const { payload } = await jose.jwtVerify(token, jwks, { issuer: server.config.authUrl, audience: "customer" })
        // The subscription's group, not the entry's: a deeper entry is delivered as the subscription's.
        assert.strictEqual(payload.sub, `webhook:${folder.body.uid}`)
        assert.isAtMost(payload.exp! - payload.iat!, 300)
        const digest = `sha256:${createHash("sha256").update(delivery.body).digest("hex")}`
        assert.deepStrictEqual(payload.webhook, {
          subscription: subscription.body.uid,
          id: single.id,
          type: single.type,
          subject: single.subject,
          group: single["group"],
          time: delivery.headers["ce-time"],
          digest
        })
        // The delivery's token is not an API token.
        assert.strictEqual((await fetchJson(server.url, "GET", `/iam/v2beta1/groups/${owner.org}`, token)).status, 401)
      }
      assert.deepStrictEqual(received.map((r) => JSON.parse(r.body).body.name), ["team", "team", "deeper"])
      assert.strictEqual(JSON.parse(received[1]!.body).body.description, "renamed")
    } finally {
      await sink.close()
    }
  }, 30_000)

  it(
    "a failing sink is retried with the same id, then gets the rest in order; deleting it stops deliveries",
    async () => {
      const sink = await receiver()
      try {
        const folder = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "flaky" })
        const subscription = await rest("POST", `/events/v2beta1/subscriptions/${folder.body.uid}`, { sink: sink.url })
        sink.statuses.push(500, 503)
        await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "one" })
        await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "two" })
        // While the sink fails, the entries wait, and the gauge says how many.
        await sink.until(1)
        assert.isAtLeast(await pendingUntil(subscription.body.uid, (n) => n >= 1), 1)
        const received = await sink.until(4)
        const ids = received.map((r) => r.headers["ce-id"])
        assert.strictEqual(ids[0], ids[1])
        assert.strictEqual(ids[1], ids[2])
        assert.notStrictEqual(ids[3], ids[2])
        assert.deepStrictEqual(received.map((r) => JSON.parse(r.body).body.name), ["one", "one", "one", "two"])
        // The first retry came within 2 s.
        assert.isBelow(received[1]!.at - received[0]!.at, 2_500)
        assert.strictEqual(await pendingUntil(subscription.body.uid, (n) => n === 0), 0)

        await rest("DELETE", `/events/v2beta1/subscriptions/${subscription.body.uid}`)
        await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "three" })
        await new Promise((r) => setTimeout(r, 1_000))
        assert.lengthOf(sink.received, 4)
      } finally {
        await sink.close()
      }
    },
    30_000
  )

  it("sinks that never answer hold back no other subscription, of the same group or another", async () => {
    const healthy = await receiver()
    const hanging = await hangingSink()
    try {
      const folder = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "crowded" })
      const stuck = await Promise.all(
        Array.from(
          { length: 16 },
          () => rest("POST", `/events/v2beta1/subscriptions/${folder.body.uid}`, { sink: hanging.url })
        )
      )
      assert.deepStrictEqual(stuck.map((s) => s.status), stuck.map(() => 200))
      const subscription = await rest("POST", `/events/v2beta1/subscriptions/${folder.body.uid}`, {
        sink: healthy.url
      })
      // Writes a second apart: each reaches the healthy sink at once, while the others' first deliveries hang.
      const lags: Array<number> = []
      for (let i = 0; i < 5; i++) {
        const written = Date.now()
        await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: `write ${i}` })
        const arrived = await healthy.until(i + 1)
        lags.push(arrived[i]!.at - written)
        await new Promise((r) => setTimeout(r, 200))
      }
      assert.deepStrictEqual(
        healthy.received.map((r) => JSON.parse(r.body).body.name),
        [0, 1, 2, 3, 4].map((i) => `write ${i}`)
      )
      assert.isBelow(Math.max(...lags), 1_000, `lags: ${lags.join(", ")} ms`)
      await Promise.all(
        [subscription, ...stuck].map((s) => rest("DELETE", `/events/v2beta1/subscriptions/${s.body.uid}`))
      )
    } finally {
      await hanging.close()
      await healthy.close()
    }
  }, 30_000)

  it(
    "sinks on the same host and port as a healthy one, hanging or slow, hold back none of its deliveries",
    async () => {
      // One receiver for every subscription (a webhook gateway many tenants share): /hang never answers, /slow answers
      // after 5 s, /ok at once.
      const healthy: Array<string> = []
      const open = new Set<Socket>()
      let badRequests = 0
      const shared = createServer((request, response) => {
        let body = ""
        if (request.url !== "/ok") badRequests++
        request.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => {
          if (request.url === "/ok") {
            healthy.push(JSON.parse(body).body.name)
            response.writeHead(200).end()
          } else if (request.url === "/slow") setTimeout(() => response.writeHead(200).end(), 5_000)
        })
      })
      shared.on("connection", (socket) => {
        open.add(socket)
        socket.on("close", () => open.delete(socket))
      })
      await new Promise<void>((resolve) => shared.listen(0, "127.0.0.1", resolve))
      const base = `http://127.0.0.1:${(shared.address() as AddressInfo).port}`
      const subscriptions: Array<string> = []
      try {
        const folder = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "shared host" })
        const subscribe = async (path: string) => {
          const made = await rest("POST", `/events/v2beta1/subscriptions/${folder.body.uid}`, {
            sink: `${base}${path}`
          })
          assert.strictEqual(made.status, 200, JSON.stringify(made.body))
          subscriptions.push(made.body.uid)
        }
        for (let i = 0; i < 100; i++) await subscribe("/hang")
        for (let i = 0; i < 100; i++) await subscribe("/slow")
        // The bad neighbours' deliveries of a first write are under way before the healthy subscription exists.
        await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "first" })
        for (let wait = 0; wait < 200 && badRequests < 16; wait++) await new Promise((r) => setTimeout(r, 50))
        assert.isAtLeast(badRequests, 16)
        await subscribe("/ok")
        // Each write reaches the healthy sink while they hang, well before the 10 s after which a delivery without an
        // answer is given up and its connection freed (a per-host pool of connections, which they filled, failed here).
        for (let i = 0; i < 5; i++) {
          await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: `beside ${i}` })
          for (let wait = 0; wait < 160 && healthy.length <= i; wait++) await new Promise((r) => setTimeout(r, 50))
          assert.strictEqual(healthy.length, i + 1, `write ${i} did not reach the healthy sink within 8 s`)
        }
        assert.deepStrictEqual(healthy, [0, 1, 2, 3, 4].map((i) => `beside ${i}`))
      } finally {
        for (const uid of subscriptions) await rest("DELETE", `/events/v2beta1/subscriptions/${uid}`)
        open.forEach((socket) => socket.destroy())
        await new Promise((resolve) => shared.close(resolve))
      }
    },
    120_000
  )

  it("a subscription whose sink does not answer says since when its delivery has waited", async () => {
    const sink = await hangingSink()
    const subscription = await rest("POST", `/events/v2beta1/subscriptions/${owner.org}`, { sink: sink.url })
    try {
      assert.strictEqual(subscription.status, 200, JSON.stringify(subscription.body))
      const health = async () =>
        (await rest("GET", `/events/v2beta1/subscriptions/${subscription.body.uid}`)).body.health
      const before = Date.now()
      await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "unanswered" })
      let now = await health()
      for (let i = 0; i < 100 && now.sendingSince === undefined; i++) {
        await new Promise((r) => setTimeout(r, 50))
        now = await health()
      }
      // Not failing (no answer yet), one entry waiting, sent a moment after the write, and still unanswered.
      assert.deepInclude(now, { state: "ACTIVE", pending: 1 })
      assert.isAtLeast(Date.parse(now.sendingSince), before - 1_000)
      await new Promise((r) => setTimeout(r, 1_000))
      assert.strictEqual((await health()).sendingSince, now.sendingSince, "the same attempt, older")
    } finally {
      await rest("DELETE", `/events/v2beta1/subscriptions/${subscription.body.uid}`)
      await sink.close()
    }
  })

  it("a subscription shows its health, and stops while its creator no longer holds subscriptions.create", async () => {
    const sink = await receiver()
    try {
      const folder = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, { name: "answerable" })
      // The creator owns the folder only; the organization's owner reads the subscription.
      const creator = await server.runtime.runPromise(member("acme", "owner", () => folder.body.uid))
      const created = await fetchJson(
        server.url,
        "POST",
        `/events/v2beta1/subscriptions/${folder.body.uid}`,
        creator.token,
        { sink: sink.url }
      )
      assert.strictEqual(created.status, 200, JSON.stringify(created.body))
      assert.strictEqual(created.body.createdBy, creator.identity)
      const health = async () => (await rest("GET", `/events/v2beta1/subscriptions/${created.body.uid}`)).body.health
      assert.deepStrictEqual(await health(), { state: "ACTIVE", pending: 0 })

      await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "one" })
      await sink.until(1)
      let now = await health()
      for (let i = 0; i < 50 && now.lastDeliveredTime === undefined; i++) {
        await new Promise((r) => setTimeout(r, 50))
        now = await health()
      }
      assert.strictEqual(now.state, "ACTIVE")
      assert.strictEqual(now.pending, 0)
      assert.isAtMost(Math.abs(Date.parse(now.lastDeliveredTime) - sink.received[0]!.at), 1_000)

      // A failing sink: FAILING, since when, why, and how many wait.
      sink.statuses.push(500, 500, 500)
      await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "two" })
      await sink.until(2)
      for (let i = 0; i < 50 && now.state !== "FAILING"; i++) {
        await new Promise((r) => setTimeout(r, 50))
        now = await health()
      }
      assert.deepInclude(now, { state: "FAILING", lastError: "the sink answered 500", pending: 1 })
      assert.isString(now.failingSince)
      assert.isAbove(Date.parse(now.nextRetryTime), Date.parse(now.failingSince), "when it is tried again")
      await sink.until(5)
      for (let i = 0; i < 100 && now.state !== "ACTIVE"; i++) {
        await new Promise((r) => setTimeout(r, 50))
        now = await health()
      }
      assert.deepInclude(now, { state: "ACTIVE", pending: 0 })

      // The creator loses its binding: the next entry is not delivered, and the health says why.
      const [binding] = (await rest("GET", `/iam/v2beta1/roleBindings?identity=${creator.identity}`)).body.roleBindings
      await rest("DELETE", `/iam/v2beta1/roleBindings/${binding.uid}`)
      await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "three" })
      for (let i = 0; i < 100 && now.state !== "STOPPED"; i++) {
        await new Promise((r) => setTimeout(r, 50))
        now = await health()
      }
      assert.deepInclude(now, {
        state: "STOPPED",
        reason: "its creator no longer holds subscriptions.create at its group"
      })
      await new Promise((r) => setTimeout(r, 500))
      assert.lengthOf(sink.received, 5, "nothing more was delivered")
      // What waits: the binding's deletion itself, and the folder.
      assert.strictEqual((await health()).pending, 2)

      // Given back its authority, the creator's subscription delivers what waited.
      await rest("POST", `/iam/v2beta1/roleBindings/${folder.body.uid}`, {
        identityUid: creator.identity,
        roleUid: binding.role.uid
      })
      await rest("POST", `/iam/v2beta1/groups/${folder.body.uid}`, { name: "four" })
      const received = await sink.until(9)
      assert.deepStrictEqual(received.slice(5).map((r) => r.headers["ce-type"]), [
        "dev.chainguard.api.iam.rolebindings.deleted.v1",
        "dev.chainguard.api.iam.group.created.v1",
        "dev.chainguard.api.iam.rolebindings.created.v1",
        "dev.chainguard.api.iam.group.created.v1"
      ])
      assert.deepStrictEqual(
        received.slice(5).map((r) => JSON.parse(r.body).body.name).filter((name) => name !== undefined),
        ["three", "four"]
      )
      await rest("DELETE", `/events/v2beta1/subscriptions/${created.body.uid}`)
    } finally {
      await sink.close()
    }
  }, 30_000)
})
