/**
 * Run by the HTTP suite in its own process: the framework's floor, an `HttpApi` server on `@effect/platform-node`
 * with one GET route at `ARBOR_FLOOR_PATH` answering `ARBOR_FLOOR_BODY` (the same bytes as our server) and nothing
 * else: what routing and answering through the framework cost before any work of ours.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { createServer } from "node:http"

const body = process.env["ARBOR_FLOOR_BODY"]!
const Api = HttpApi.make("floor").add(
  HttpApiGroup.make("floor").add(
    HttpApiEndpoint.get("get", process.env["ARBOR_FLOOR_PATH"] as `/${string}`).addSuccess(Schema.Unknown)
  )
)
const handlers = HttpApiBuilder.group(
  Api,
  "floor",
  (h) => h.handle("get", () => Effect.succeed(HttpServerResponse.text(body, { contentType: "application/json" })))
)
HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(handlers))),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env["PORT"]), host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
