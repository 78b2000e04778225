/**
 * ConnectRPC clients built from the project's generated code (`@arbor/api/proto`), as a TypeScript service or a
 * browser would use them: the Connect protocol (JSON and binary) and gRPC-Web over HTTP/1.1, gRPC over HTTP/2, all
 * on the server's one port; and both surfaces under load at once.
 */
import { GroupSchema, GroupsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { BadRequestSchema, ResourceInfoSchema } from "@arbor/api/proto/google/rpc/error_details_pb"
import { SecurityTokenService } from "@arbor/api/proto/platform/oidc/v1/oidc.platform_pb"
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect"
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node"
import { HttpServer } from "@effect/platform"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { readFileSync } from "node:fs"
import * as http2 from "node:http2"
import { folderNames } from "./examples/grpcClient.js"
import { freePort, startServer } from "./signInSupport.js"
import { member, testServer } from "./support.js"

/** Sends `token` as the bearer of every call. */
const bearer = (token: string): Interceptor => (next) => (request) => {
  request.header.set("authorization", `Bearer ${token}`)
  return next(request)
}

describe("ConnectRPC clients of the project's protos", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let owner: { org: string; identity: string; token: string }

  beforeAll(async () => {
    server = await startServer(await freePort(), {})
    owner = await server.runtime.runPromise(member("acme"))
  })
  afterAll(() => server?.close())

  const transports: Record<string, (interceptors: Array<Interceptor>) => Transport> = {
    "Connect, JSON, HTTP/1.1": (interceptors) =>
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: false, interceptors }),
    "Connect, binary, HTTP/1.1": (interceptors) =>
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: true, interceptors }),
    "gRPC-Web, HTTP/1.1": (interceptors) =>
      createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1", interceptors }),
    "gRPC, HTTP/2": (interceptors) => createGrpcTransport({ baseUrl: server.url, interceptors })
  }

  for (const [name, transport] of Object.entries(transports)) {
    it(`calls the server over ${name}`, async () => {
      const groups = createClient(GroupsService, transport([bearer(owner.token)]))
      const folder = name.toLowerCase().replace(/[^a-z0-9]+/g, "-")
      const created = await groups.createGroup({ parent: owner.org, group: { name: folder } })
      assert.strictEqual(created.$typeName, GroupSchema.typeName)
      assert.strictEqual((await groups.getGroup({ uid: created.uid })).name, folder)
      const listed = await groups.listGroups({ uidp: { childrenOf: owner.org }, name: folder })
      assert.deepStrictEqual(listed.groups.map((g) => g.uid), [created.uid])
      assert.strictEqual(listed.totalCount, 1n)

      const missing = await groups.getGroup({ uid: `${owner.org}/0123456789abcdef` }).catch((e) => e)
      assert.instanceOf(missing, ConnectError)
      assert.strictEqual(missing.code, Code.NotFound)
      assert.strictEqual(missing.rawMessage, `Not found: group ${owner.org}/0123456789abcdef`)
      assert.strictEqual(missing.findDetails(ResourceInfoSchema)[0]?.resourceName, `${owner.org}/0123456789abcdef`)
      const invalid = await groups.createGroup({ parent: owner.org, group: { name: "" } }).catch((e) => e)
      assert.strictEqual(invalid.code, Code.InvalidArgument)
      assert.strictEqual(invalid.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field, "name")

      const anonymous = createClient(GroupsService, transport([]))
      assert.strictEqual((await anonymous.listGroups({}).catch((e) => e)).code, Code.Unauthenticated)
      await groups.deleteGroup({ uid: created.uid })
    })
  }

  it("answers a message that is not protobuf with INVALID_ARGUMENT on every protocol, and counts each call's code", async () => {
    const method = "chainguard.platform.iam.v2beta1.GroupsService/GetGroup"
    const authorization = `Bearer ${owner.token}`
    // Field 1, 255 bytes long, and nothing after it.
    const garbage = Uint8Array.from([0x0a, 0xff, 0x01])
    const envelope = Buffer.concat([Buffer.from([0, 0, 0, 0, garbage.length]), garbage])
    const calls = async (code: number, rpc = method) => {
      const scrape = await (await fetch(`${server.url}/metrics`)).text()
      const line = scrape.split("\n").find((l) =>
        l.startsWith("arbor_grpc_calls_total{") && l.includes(`code="${code}"`) && l.includes(`rpc="${rpc}"`)
      )
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
    }
    const before = await calls(3)

    const connect = await fetch(`${server.url}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/proto", authorization },
      body: garbage
    })
    assert.strictEqual(connect.status, 400)
    const body = await connect.json() as { code: string; message: string }
    assert.strictEqual(body.code, "invalid_argument")
    assert.include(body.message, "body: is not a valid protobuf message")

    const web = await fetch(`${server.url}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", authorization },
      body: envelope
    })
    assert.match(Buffer.from(await web.arrayBuffer()).toString("latin1"), /grpc-status: ?3\r\n/)

    const session = http2.connect(server.url)
    const trailers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": `/${method}`,
        "content-type": "application/grpc",
        te: "trailers",
        authorization
      })
      stream.on("trailers", resolve).on("error", reject).on("response", () => stream.resume())
      stream.end(envelope)
    }).finally(() => session.close())
    assert.strictEqual(trailers["grpc-status"], "3")

    assert.strictEqual(await calls(3), before + 3)
    // A method no served service has: UNIMPLEMENTED, counted so.
    const unknownBefore = await calls(12, "unknown")
    const unknown = await fetch(`${server.url}/chainguard.platform.iam.v2beta1.GroupsService/NoSuchMethod`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization },
      body: "{}"
    })
    assert.strictEqual(unknown.status, 404)
    assert.strictEqual(await calls(12, "unknown"), unknownBefore + 1)
  })

  it("the README's gRPC example runs against the server", async () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const example = readFileSync(new URL("examples/grpcClient.ts", import.meta.url), "utf8")
    assert.include(readme, "```ts\n" + example + "```")
    const groups = createClient(GroupsService, transports["gRPC, HTTP/2"]!([bearer(owner.token)]))
    const folder = await groups.createGroup({ parent: owner.org, group: { name: "readme" } })
    assert.include(await folderNames(server.url, owner.token, owner.org), "readme")
    await groups.deleteGroup({ uid: folder.uid })
  })

  it("serves REST and gRPC at once under load on one port", async () => {
    const groups = createClient(GroupsService, transports["gRPC, HTTP/2"]!([bearer(owner.token)]))
    const calls = 400
    const concurrency = 25
    let next = 0
    const results: Array<string> = []
    const worker = async () => {
      while (next < calls) {
        const i = next++
        if (i % 2 === 0) {
          results.push((await groups.getGroup({ uid: owner.org })).name)
        } else {
          const response = await fetch(`${server.url}/iam/v2beta1/groups/${owner.org}`, {
            headers: { authorization: `Bearer ${owner.token}` }
          })
          results.push(((await response.json()) as { name: string }).name)
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    assert.strictEqual(results.length, calls)
    assert.deepStrictEqual(new Set(results), new Set(["acme"]))
  }, 60_000)
})

describe("the request log", () => {
  /** Every log line's annotations. */
  const logged: Array<Record<string, unknown>> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations }) => {
      logged.push(Object.fromEntries(annotations))
    })
  )

  it.scopedLive("has one line per gRPC call, with its gRPC code and why permission was denied", () =>
    Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      const baseUrl = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
      const owner = yield* member("acme")
      const outsider = yield* member("globex")
      const groups = (token: string) =>
        createClient(GroupsService, createGrpcTransport({ baseUrl, interceptors: [bearer(token)] }))
      yield* Effect.promise(() => groups(owner.token).getGroup({ uid: owner.org }))
      yield* Effect.promise(() => groups(outsider.token).getGroup({ uid: owner.org }).catch(() => undefined))
      const calls = logged.filter((line) => line.path === "/chainguard.platform.iam.v2beta1.GroupsService/GetGroup")
      assert.deepStrictEqual(calls.map((line) => [line.method, line.status, line.grpcStatus]), [
        ["POST", 200, 0],
        ["POST", 200, Code.PermissionDenied]
      ])
      // A refused token exchange (a token of an issuer the identity does not trust): the reason is logged, never told.
      const segment = (json: object) => Buffer.from(JSON.stringify(json)).toString("base64url")
      const foreign = [
        segment({ alg: "RS256", kid: "k" }),
        segment({ iss: "https://issuer.invalid", sub: "x", aud: "arbor", exp: Math.floor(Date.now() / 1000) + 600 }),
        "c2lnbmF0dXJl"
      ].join(".")
      const sts = createClient(SecurityTokenService, createGrpcTransport({ baseUrl, interceptors: [bearer(foreign)] }))
      const refused = yield* Effect.promise(() =>
        sts.exchange({ aud: ["http://localhost:8080"], identity: owner.identity }).catch((e: ConnectError) => e)
      )
      assert.strictEqual((refused as ConnectError).code, Code.PermissionDenied)
      const exchange = logged.find((line) => line.path === "/chainguard.platform.oidc.SecurityTokenService/Exchange")
      assert.strictEqual(exchange?.grpcStatus, Code.PermissionDenied)
      assert.match(String(exchange?.denied), /.+: .+/)
      assert.notInclude((refused as ConnectError).rawMessage, String(exchange?.denied))
      assert.match(String(calls[0]!.requestId), /.+-.+/)
    }).pipe(Effect.provide(testServer().pipe(Layer.provide(capture)))))
})
