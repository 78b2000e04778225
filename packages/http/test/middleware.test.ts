/**
 * The pieces of the server's middleware, each alone, around an app that stands for the API: the request log gives an
 * id that the app and its logs see and the response carries; the limits refuse or normalize a request before the app
 * sees it; error rendering turns whatever the app fails with into a google.rpc.Status body.
 */
import { Errors } from "@arbor/core"
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import * as Logs from "../src/Logs.js"
import * as CurrentRequest from "../src/middleware/CurrentRequest.js"
import * as ErrorRendering from "../src/middleware/ErrorRendering.js"
import { middleware as requestLog } from "../src/middleware/RequestLog.js"
import * as RequestLimits from "../src/RequestLimits.js"

const quietLogs = Logger.minimumLogLevel(LogLevel.None)

/** A GET of `url`. */
const get = (url: string) => HttpServerRequest.fromWeb(new Request(`http://127.0.0.1${url}`))

/** `app` as it runs for a GET of `url`, noted as being answered. */
const run = <E>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest>,
  url = "/iam/v2beta1/groups"
) => {
  const request = get(url)
  const current = CurrentRequest.begin(request, "test-1")
  return app.pipe(
    Effect.provideService(HttpServerRequest.HttpServerRequest, request),
    Effect.map((response) => ({ response, current }))
  )
}

/** The JSON body of a rendered response. */
const body = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(response.body.body)) : undefined

describe("the middleware's pieces", () => {
  it.effect("ErrorRendering: engine errors, undecodable input and defects become google.rpc.Status bodies", () =>
    Effect.gen(function*() {
      const render = ErrorRendering.middleware("test.arbor.dev")
      const denied = yield* run(
        render(Effect.fail(new Errors.PermissionDenied({ capability: "groups.list", resource: "x", logDetail: "why" })))
      )
      assert.strictEqual(denied.response.status, 403)
      assert.strictEqual(body(denied.response).code, 7)
      assert.strictEqual(denied.current.denied, "why")

      const undecodable = yield* run(
        render(Effect.as(Schema.decodeUnknown(Schema.Struct({ name: Schema.String }))({}), HttpServerResponse.empty()))
      )
      assert.strictEqual(undecodable.response.status, 400)
      assert.deepStrictEqual(body(undecodable.response).details[1].fieldViolations, [{
        field: "name",
        description: "is required"
      }])

      const defect = yield* run(render(Effect.die(new Error("bug"))).pipe(Effect.provide(quietLogs)))
      assert.strictEqual(defect.response.status, 500)
      assert.strictEqual(body(defect.response).code, 13)
      assert.strictEqual(body(defect.response).details[0].domain, "test.arbor.dev")
    }))

  it.effect("RequestLimits: a refused target never reaches the app; aliases reach it as their documented names", () =>
    Effect.gen(function*() {
      let seen = ""
      const app = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
        seen = request.url
        return HttpServerResponse.empty()
      })
      const refused = yield* Effect.either(run(RequestLimits.middleware(app), "/iam/v2beta1/groups;x=1"))
      assert.isTrue(refused._tag === "Left" && refused.left._tag === "InvalidArgument")
      assert.strictEqual(seen, "")
      yield* run(RequestLimits.middleware(app), "/iam//v2beta1/groups?pageSize=5&uidp.inRoot=true&name=pageSize")
      assert.strictEqual(seen, "/iam/v2beta1/groups?page_size=5&uidp.in_root=true&name=pageSize")
    }))

  it.live("RequestLog: the pieces inside and every line logged meanwhile see the request's id; the response carries it", () =>
    Effect.gen(function*() {
      const request = get("/healthz")
      let seen: CurrentRequest.Request | undefined
      const app = Effect.gen(function*() {
        seen = CurrentRequest.of(request)
        yield* Effect.logWarning("inside")
        return HttpServerResponse.empty()
      })
      const lines: Array<Record<string, unknown>> = []
      const write = process.stdout.write
      process.stdout.write = ((chunk: string) => {
        lines.push(...chunk.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>))
        return true
      }) as typeof process.stdout.write
      const response = yield* requestLog(app).pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, request),
        Effect.provide(Logs.layer),
        Effect.zipLeft(Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))),
        Effect.ensuring(Effect.sync(() => (process.stdout.write = write)))
      )
      assert.isDefined(seen)
      assert.strictEqual(response.headers["x-request-id"], seen!.id)
      const inside = lines.find((l) => l.message === "inside")
      assert.strictEqual(inside?.requestId, seen!.id)
      const line = lines.find((l) => l.message === "request")
      assert.strictEqual((line?.annotations as Record<string, unknown>).requestId, seen!.id)
    }))
})
