/**
 * `/metrics` after known traffic: the scrape is the Prometheus text format and counts exactly what was sent
 * (requests by route and code, gRPC calls by method and code, token exchanges by outcome, authorization cache
 * lookups, store statements, open connections). Scrapes come from this machine (the tests' only address), which is
 * admitted without a token; with `ARBOR_METRICS_TOKEN`, only its bearer is.
 */
import { GroupsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { createClient } from "@connectrpc/connect"
import { createGrpcTransport } from "@connectrpc/connect-node"
import { NodeHttpServer } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { mkdtempSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { createServer as createNetServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Listener from "../src/Listener.js"
import * as Server from "../src/Server.js"
import { freePort, startServer } from "./signInSupport.js"
import { member, quiet, testConfig } from "./support.js"

const config = testConfig()
const listener = Listener.make(config)

/** The samples of a scrape: `name{labels}` to value. */
const samples = (text: string) => {
  const out = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const at = line.lastIndexOf(" ")
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** The sum of the samples of `name` whose labels include every one of `labels`. */
const total = (scrape: Map<string, number>, name: string, labels: Record<string, string> = {}) => {
  let sum = 0
  for (const [key, value] of scrape) {
    const brace = key.indexOf("{")
    if ((brace < 0 ? key : key.slice(0, brace)) !== name) continue
    if (Object.entries(labels).every(([k, v]) => key.includes(`${k}="${v}"`))) sum += value
  }
  return sum
}

describe("/metrics", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  beforeAll(async () => {
    server = await startServer(await freePort(), {})
  })
  afterAll(() => server?.close())

  const scrape = async () => {
    const response = await fetch(`${server.url}/metrics`)
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
    return samples(await response.text())
  }

  it("counts the requests, calls, exchanges, cache lookups and statements of known traffic", async () => {
    const owner = await server.runtime.runPromise(member("acme"))
    const route = "/iam/v2beta1/groups/:uid"
    const before = await scrape()
    const get = (token: string) =>
      fetch(`${server.url}/iam/v2beta1/groups/${owner.org}`, { headers: { authorization: `Bearer ${token}` } })
    for (let i = 0; i < 3; i++) assert.strictEqual((await get(owner.token)).status, 200)
    assert.strictEqual((await get("not-a-token")).status, 401)
    assert.strictEqual((await fetch(`${server.url}/no/such/${"x".repeat(20)}`)).status, 404)
    const groups = createClient(
      GroupsService,
      createGrpcTransport({
        baseUrl: server.url,
        interceptors: [(next) => (request) => {
          request.header.set("authorization", `Bearer ${owner.token}`)
          return next(request)
        }]
      })
    )
    await groups.getGroup({ uid: owner.org })
    await groups.getGroup({ uid: `${owner.org}/0123456789abcdef` }).catch(() => undefined)
    const exchange = await fetch(
      `${server.url}/sts/exchange?aud=${encodeURIComponent(server.url)}&identity=${owner.identity}`,
      {
        method: "POST",
        headers: { authorization: "Bearer not-a-jwt" }
      }
    )
    assert.strictEqual(exchange.status, 401)

    const after = await scrape()
    const delta = (name: string, labels: Record<string, string> = {}) =>
      total(after, name, labels) - total(before, name, labels)
    assert.strictEqual(delta("arbor_http_requests_total", { route, method: "GET", code: "200" }), 3)
    assert.strictEqual(delta("arbor_http_requests_total", { route, method: "GET", code: "401" }), 1)
    assert.strictEqual(delta("arbor_http_requests_total", { route: "unmatched", code: "404" }), 1)
    assert.strictEqual(delta("arbor_http_request_duration_seconds_count", { route, method: "GET" }), 4)
    const rpc = "chainguard.platform.iam.v2beta1.GroupsService/GetGroup"
    assert.strictEqual(delta("arbor_grpc_calls_total", { rpc, code: "0" }), 1)
    assert.strictEqual(delta("arbor_grpc_calls_total", { rpc, code: "5" }), 1)
    assert.strictEqual(delta("arbor_token_exchanges_total", { outcome: "unauthenticated" }), 1)
    // Five checks by the owner: the first after its binding was written reads the store, the rest hit the cache.
    assert.isAtLeast(delta("arbor_authorization_cache_lookups_total", { result: "hit" }), 3)
    assert.isAtLeast(delta("arbor_authorization_cache_lookups_total", { result: "miss" }), 1)
    assert.isAbove(delta("arbor_store_statement_duration_seconds_count", { operation: "get", table: "groups" }), 0)
    assert.isAtLeast(total(after, "arbor_open_connections"), 1)
  })
})

describe("/metrics with ARBOR_METRICS_TOKEN", () => {
  it("answers only the bearer of that token, even on this machine", async () => {
    const server = await startServer(await freePort(), { metricsToken: Redacted.make("s3cret-metrics") })
    try {
      const scrape = (authorization?: string) =>
        fetch(`${server.url}/metrics`, { headers: authorization === undefined ? {} : { authorization } })
      const none = await scrape()
      assert.strictEqual(none.status, 401)
      assert.strictEqual(((await none.json()) as { code: number }).code, 16)
      assert.strictEqual((await scrape("Bearer wrong")).status, 401)
      assert.strictEqual((await scrape("Bearer s3cret-metrics-and-more")).status, 401)
      const admitted = await scrape("Bearer s3cret-metrics")
      assert.strictEqual(admitted.status, 200)
      assert.match(await admitted.text(), /# TYPE arbor_open_connections gauge/)
    } finally {
      await server.close()
    }
  })
})

describe("/metrics without a token", () => {
  it("behind a trusted proxy, answers only the clients it names as on this machine", async () => {
    const server = await startServer(await freePort(), { clientAddressHeader: "x-forwarded-for" })
    try {
      const scrape = (client: string) => fetch(`${server.url}/metrics`, { headers: { "x-forwarded-for": client } })
      assert.strictEqual((await scrape("203.0.113.5")).status, 403)
      assert.strictEqual((await scrape("203.0.113.5, 127.0.0.1")).status, 200)
    } finally {
      await server.close()
    }
  })

  it.scopedLive("refuses a client that is not on this machine", () =>
    Effect.gen(function*() {
      // A client without a loopback address: connections of a Unix socket handed to the server have none.
      const dir = mkdtempSync(join(tmpdir(), "arbor-metrics-"))
      const socketPath = join(dir, "remote.sock")
      const forward = createNetServer((socket) => listener.emit("connection", socket))
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void forward.listen(socketPath, () => resume(Effect.void))),
        () => Effect.sync(() => forward.close())
      )
      const get = (path: string) =>
        Effect.async<number>((resume) => {
          const request = httpRequest({ socketPath, path }, (response) => {
            response.resume()
            resume(Effect.succeed(response.statusCode ?? 0))
          })
          request.end()
        })
      assert.strictEqual(yield* get("/healthz"), 200)
      assert.strictEqual(yield* get("/metrics"), 403)
    }).pipe(Effect.provide(
      Server.http(config).pipe(
        Layer.provideMerge(Server.engine(config)),
        Layer.provide(quiet),
        Layer.provideMerge(NodeHttpServer.layer(() => listener, { port: 0, host: "127.0.0.1" }))
      )
    )))
})
