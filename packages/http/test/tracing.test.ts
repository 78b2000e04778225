/**
 * Traces: with a span processor, each request (REST or gRPC) is a span that an in-memory exporter sees, named by
 * its method and carrying its status; without one (no `OTEL_EXPORTER_OTLP_ENDPOINT`) the tracer is off.
 */
import { GroupsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { createClient } from "@connectrpc/connect"
import { createGrpcTransport } from "@connectrpc/connect-node"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Listener from "../src/Listener.js"
import * as Server from "../src/Server.js"
import * as Tracing from "../src/Tracing.js"
import { member, quiet, testConfig } from "./support.js"

const config = testConfig()

/** A server on loopback whose spans go to `exporter`. */
const tracedServer = (exporter: InMemorySpanExporter) =>
  Server.http(config, Tracing.layer(new SimpleSpanProcessor(exporter))).pipe(
    Layer.provideMerge(Server.engine(config)),
    Layer.provide(quiet),
    Layer.provideMerge(NodeHttpServer.layer(() => Listener.make(config), { port: 0, host: "127.0.0.1" }))
  )

describe("traces", () => {
  const exporter = new InMemorySpanExporter()

  it.scopedLive("each request and gRPC call is a span, with its route and status", () =>
    Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      const base = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
      const owner = yield* member("acme")
      yield* Effect.promise(() =>
        fetch(`${base}/iam/v2beta1/groups/${owner.org}`, { headers: { authorization: `Bearer ${owner.token}` } })
      )
      const groups = createClient(
        GroupsService,
        createGrpcTransport({
          baseUrl: base,
          interceptors: [(next) => (request) => {
            request.header.set("authorization", `Bearer ${owner.token}`)
            return next(request)
          }]
        })
      )
      yield* Effect.promise(() => groups.getGroup({ uid: owner.org }))
      const spans = exporter.getFinishedSpans()
      const rest = spans.find((s) => s.attributes["url.path"] === `/iam/v2beta1/groups/${owner.org}`)
      assert.isDefined(rest, spans.map((s) => s.name).join(", "))
      assert.strictEqual(rest!.name, "http.server GET")
      assert.strictEqual(rest!.attributes["http.response.status_code"], 200)
      const grpc = spans.find((s) =>
        s.attributes["url.path"] === "/chainguard.platform.iam.v2beta1.GroupsService/GetGroup"
      )
      assert.isDefined(grpc)
      assert.strictEqual(grpc!.resource.attributes["service.name"], "arbor")
    }).pipe(Effect.provide(tracedServer(exporter))))

  it.live("with OTEL_EXPORTER_OTLP_ENDPOINT, the standalone server's spans reach that endpoint over OTLP/HTTP", () =>
    Effect.gen(function*() {
      const received: Array<{ path: string; bytes: number }> = []
      const collector = createServer((request, response) => {
        let bytes = 0
        request.on("data", (chunk: Buffer) => (bytes += chunk.length))
        request.on("end", () => {
          received.push({ path: request.url ?? "", bytes })
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      yield* Effect.async<void>((resume) => void collector.listen(0, "127.0.0.1", () => resume(Effect.void)))
      const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint
      try {
        const standalone = testConfig({ otlpEndpoint: endpoint })
        // The server runs in its own scope: closing it flushes the batch of spans.
        yield* Effect.scoped(
          Effect.gen(function*() {
            const address = (yield* HttpServer.HttpServer).address
            const base = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
            yield* Effect.promise(() => fetch(`${base}/healthz`))
          }).pipe(Effect.provide(
            Server.http(standalone).pipe(
              Layer.provideMerge(Server.engine(standalone)),
              Layer.provide(quiet),
              Layer.provideMerge(NodeHttpServer.layer(() => Listener.make(standalone), { port: 0, host: "127.0.0.1" }))
            )
          ))
        )
        assert.deepStrictEqual(received.map((r) => r.path), ["/v1/traces"])
        assert.isAbove(received[0]!.bytes, 0)
      } finally {
        delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT
        collector.close()
      }
    }))
})
