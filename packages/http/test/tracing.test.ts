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
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
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

/**
 * The finished spans once one satisfies `ready`: a server ends a request's span after the response is written, so
 * a little after the client has read it.
 */
const finishedWhen = (exporter: InMemorySpanExporter, ready: (span: ReadableSpan) => boolean) =>
  Effect.suspend(() => {
    const spans = exporter.getFinishedSpans()
    return spans.some(ready) ? Effect.succeed(spans) : Effect.fail("not yet")
  }).pipe(
    Effect.retry(Schedule.spaced("10 millis").pipe(Schedule.upTo("2 seconds"))),
    Effect.orElseSucceed(() => exporter.getFinishedSpans())
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
      const spans = yield* finishedWhen(exporter, (s) => String(s.attributes["url.path"]).endsWith("/GetGroup"))
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

  it.scopedLive("a REST and a gRPC call: the request's span, the engine operation's inside it, its store spans inside that, the request id on the request span", () =>
    Effect.gen(function*() {
      const exporter = new InMemorySpanExporter()
      yield* Effect.gen(function*() {
        const address = (yield* HttpServer.HttpServer).address
        const base = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
        const owner = yield* member("acme")
        const rest = yield* Effect.promise(() =>
          fetch(`${base}/iam/v2beta1/groups/${owner.org}`, { headers: { authorization: `Bearer ${owner.token}` } })
        )
        let grpcRequestId = ""
        const groups = createClient(
          GroupsService,
          createGrpcTransport({
            baseUrl: base,
            interceptors: [(next) => async (request) => {
              request.header.set("authorization", `Bearer ${owner.token}`)
              const response = await next(request)
              grpcRequestId = response.header.get("x-request-id") ?? ""
              return response
            }]
          })
        )
        yield* Effect.promise(() => groups.getGroup({ uid: owner.org }))
        const spans = yield* finishedWhen(exporter, (s) => s.attributes["arbor.request_id"] === grpcRequestId)
        const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
        /** The spans from `span` up to the root of its trace. */
        const ancestry = (span: (typeof spans)[number]) => {
          const chain = [span]
          for (let at = span; at.parentSpanContext !== undefined;) {
            const parent = byId.get(at.parentSpanContext.spanId)
            if (parent === undefined) break
            chain.push(parent)
            at = parent
          }
          return chain
        }
        for (
          const [path, requestId] of [
            [`/iam/v2beta1/groups/${owner.org}`, rest.headers.get("x-request-id")],
            ["/chainguard.platform.iam.v2beta1.GroupsService/GetGroup", grpcRequestId]
          ] as const
        ) {
          const request = spans.find((s) =>
            s.attributes["url.path"] === path && s.attributes["arbor.request_id"] === requestId
          )
          assert.isDefined(request, `${path}: ${spans.map((s) => `${s.name} ${s.attributes["url.path"]}`).join(", ")}`)
          const trace = request!.spanContext().traceId
          const operation = spans.find((s) =>
            s.name === "Groups.get" && s.spanContext().traceId === trace && ancestry(s).includes(request!)
          )
          assert.isDefined(operation, `${path}: no Groups.get span inside the request's span`)
          const store = spans.filter((s) => s.name === "Store.get" && ancestry(s).includes(operation!))
          assert.isTrue(
            store.some((s) => s.attributes["db.collection.name"] === "groups"),
            `${path}: no store span reading groups inside Groups.get`
          )
          // The bearer's verification and the caller's grants are spans of the same request.
          for (const name of ["TokenIssuer.verify", "Authorization.grants"]) {
            assert.isTrue(spans.some((s) => s.name === name && ancestry(s).includes(request!)), `${path}: no ${name}`)
          }
        }
      }).pipe(Effect.provide(tracedServer(exporter)))
    }))

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
