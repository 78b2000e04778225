/**
 * Watch streams that hold (docs/api.md §12): a stream ends with a final `end` event saying why as soon as a request
 * of its caller's would be refused, and streams are capped per identity and in all, answering 429 past the caps,
 * while health checks stay answerable however many streams are open.
 */
import { Principal, RoleBindings } from "@arbor/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { get, type IncomingMessage } from "node:http"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

interface Message {
  readonly event: string | undefined
  readonly data: string
  readonly at: number
}

/** An open watch: its status, the messages so far, and whether the server ended it. */
const open = (url: string, token: string) =>
  new Promise<{
    status: number
    messages: Array<Message>
    closed: Promise<number>
    leave: () => void
  }>((resolve, reject) => {
    const request = get(`${url}/events/v2beta1/events:watch`, { headers: { authorization: `Bearer ${token}` } }, (
      response: IncomingMessage
    ) => {
      const messages: Array<Message> = []
      const closed = new Promise<number>((done) => response.on("close", () => done(Date.now())))
      let buffer = ""
      response.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const lines = buffer.slice(0, end).split("\n").filter((line) => !line.startsWith(":"))
          buffer = buffer.slice(end + 2)
          const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2)
          const data = field("data")
          if (data !== undefined) messages.push({ event: field("event"), data, at: Date.now() })
        }
      })
      resolve({ status: response.statusCode!, messages, closed, leave: () => request.destroy() })
    })
    request.on("error", reject)
  })

describe("watch streams", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  beforeAll(async () => {
    server = await startServer(await freePort(), { maxConnections: 24 })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("a revoked binding ends the stream it authorized at once, with a final event saying why", async () => {
    const viewer = await server.runtime.runPromise(member("revoked", "viewer"))
    const owner = await server.runtime.runPromise(member("revoked"))
    const stream = await open(server.url, viewer.token)
    try {
      assert.strictEqual(stream.status, 200)
      const shown = await fetchJson(server.url, "POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, {
        name: "shown"
      })
      for (let i = 0; i < 100 && stream.messages.length === 0; i++) await new Promise((r) => setTimeout(r, 20))
      assert.strictEqual(JSON.parse(stream.messages[0]!.data).subject, shown.body.uid)

      const [binding] = await server.runtime.runPromise(
        Effect.map(
          Effect.flatMap(RoleBindings.RoleBindings, (b) => b.list(Principal.system, { identity: viewer.identity })),
          (page) => page.items
        )
      )
      const revoked = Date.now()
      assert.strictEqual(
        (await fetchJson(server.url, "DELETE", `/iam/v2beta1/roleBindings/${binding!.uid}`, owner.token)).status,
        200
      )
      const ended = await Promise.race([stream.closed, new Promise<number>((r) => setTimeout(() => r(-1), 5_000))])
      assert.isAbove(ended, 0, "the stream ended")
      assert.isBelow(ended - revoked, 1_000)
      const last = stream.messages.at(-1)!
      assert.strictEqual(last.event, "end")
      const body = JSON.parse(last.data)
      assert.strictEqual(body.code, 7)
      assert.match(body.message, /^Permission 'subscriptions.list' denied/)
      // As a request of the caller's is now refused.
      assert.strictEqual(
        (await fetchJson(server.url, "GET", `/events/v2beta1/events?uidp.descendants_of=${owner.org}`, viewer.token))
          .body.totalCount,
        "0"
      )
    } finally {
      stream.leave()
    }
  }, 20_000)

  it(
    "at most 8 streams per identity and half the connections in all, 429 past them; health checks answer",
    async () => {
      const first = await server.runtime.runPromise(member("crowded", "viewer"))
      const streams = await Promise.all(Array.from({ length: 9 }, () => open(server.url, first.token)))
      const others: Array<Awaited<ReturnType<typeof open>>> = []
      try {
        assert.deepStrictEqual(streams.map((s) => s.status), [...Array(8).fill(200), 429])
        const refused = await fetchJson(server.url, "GET", "/events/v2beta1/events:watch", first.token)
        assert.strictEqual(refused.status, 429)
        assert.strictEqual(refused.body.code, 8)
        assert.match(refused.body.message, /at most 8 watch streams may be open at once for one identity/)
        // The server takes 12 streams in all (24 connections): a second identity gets 4, then 429.
        const second = await server.runtime.runPromise(member("crowded", "viewer"))
        for (let i = 0; i < 5; i++) others.push(await open(server.url, second.token))
        assert.deepStrictEqual(others.map((s) => s.status), [200, 200, 200, 200, 429])
        for (const path of ["/healthz", "/readyz", "/metrics"]) {
          assert.strictEqual((await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(5_000) })).status, 200)
        }
        // A stream that ends gives its place back.
        streams[0]!.leave()
        await streams[0]!.closed
        let again = await open(server.url, first.token)
        for (let i = 0; i < 50 && again.status !== 200; i++) {
          again.leave()
          await new Promise((r) => setTimeout(r, 20))
          again = await open(server.url, first.token)
        }
        assert.strictEqual(again.status, 200)
        again.leave()
      } finally {
        for (const stream of [...streams, ...others]) stream.leave()
      }
    },
    30_000
  )
})
