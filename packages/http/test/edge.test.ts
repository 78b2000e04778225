/**
 * The HTTP edge under hostile input: deeply nested bodies, long URLs, oversized chunked bodies, slow clients
 * holding connections, path tricks (`;`, case, duplicate slashes) and charsets. Raw sockets send what an HTTP
 * client library would refuse to; every answer must be the API's error body, and the server must keep serving.
 */
import { HttpServer } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { Agent, request as httpRequest } from "node:http"
import { connect, type Socket } from "node:net"
import { call, member, testConfig, testServer } from "./support.js"

/** Every request's log annotations. */
const logged: Array<Record<string, unknown>> = []
const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations }) => {
    logged.push(Object.fromEntries(annotations))
  })
)

/** The port the test server listens on. */
const port = Effect.map(HttpServer.HttpServer, (server) => (server.address as HttpServer.TcpAddress).port)

/** Sends raw bytes on a new connection and collects everything the server answers until it closes or goes quiet. */
const raw = (p: number, data: string | Buffer, quietMillis = 500) =>
  Effect.async<{ readonly text: string; readonly reset: boolean }>((resume) => {
    let text = ""
    let reset = false
    let timer: NodeJS.Timeout | undefined
    const socket = connect(p, "127.0.0.1", () => socket.write(data))
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed({ text, reset }))
    }
    const quiet = () => {
      clearTimeout(timer)
      timer = setTimeout(done, quietMillis)
    }
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8")
      quiet()
    })
    socket.on("error", (e: NodeJS.ErrnoException) => (reset = reset || e.code === "ECONNRESET"))
    socket.on("close", done)
    quiet()
  })

/** The JSON body of a raw HTTP response, and its status. */
const parsed = (text: string) => {
  const [head = "", body = ""] = text.split("\r\n\r\n")
  return { status: Number(head.split(" ")[1]), body: body === "" ? undefined : JSON.parse(body) }
}

const reasonOf = (body: any) => body?.details?.[0]?.reason

describe("request limits", () => {
  it.scopedLive("malformed JSON is MALFORMED_BODY whatever its text says (errors are classified by class)", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      for (const raw of ["max size limit", "large", "{\"name\": limit}", "{"]) {
        const reply = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, raw })
        assert.strictEqual(reply.status, 400, raw)
        assert.strictEqual(reasonOf(reply.body), "MALFORMED_BODY", raw)
        assert.deepStrictEqual(reply.body.details[1].fieldViolations, [{
          field: "body",
          description: "is not valid JSON"
        }])
      }
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a megabyte of nested arrays is refused at once, before anything else, without a 500", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const half = 512 * 1024 - 8
      const nested = "[".repeat(half) + "]".repeat(half)
      const replies = yield* Effect.all(
        Array.from({ length: 20 }, () => call("POST", `/iam/v2beta1/groups/${org}`, { token, raw: nested })),
        { concurrency: "unbounded" }
      )
      for (const reply of replies) {
        assert.strictEqual(reply.status, 400)
        assert.strictEqual(reasonOf(reply.body), "MALFORMED_BODY")
        assert.deepStrictEqual(reply.body.details[1].fieldViolations, [{
          field: "body",
          description: "must not nest deeper than 64 levels"
        }])
      }
      // Unauthenticated, the answer is the same: the body is checked before anything reads it.
      const anonymous = yield* call("POST", `/iam/v2beta1/groups/${org}`, { raw: `{"a":${"[".repeat(65)}` })
      assert.strictEqual(reasonOf(anonymous.body), "MALFORMED_BODY")
      // 64 levels are read (and then refused only as the engine refuses a field it does not know, naming it).
      const deep = `{"name":"deep","x":${"[".repeat(63)}${"]".repeat(63)}}`
      const read = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, raw: deep })
      assert.deepStrictEqual(read.body.details[1].fieldViolations, [
        { field: "x", description: "is not a field of this request" }
      ])
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("nested bodies in flight are each refused, and /healthz answers meanwhile", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const nested = "[".repeat(500_000) + "]".repeat(500_000)
      const flood = yield* Effect.fork(Effect.all(
        Array.from({ length: 40 }, () => call("POST", `/iam/v2beta1/groups/${org}`, { token, raw: nested })),
        { concurrency: "unbounded" }
      ))
      // How fast is the benchmarks' business; here, that the server keeps answering and refuses each body whole.
      yield* Effect.sleep("150 millis")
      assert.strictEqual((yield* call("GET", "/healthz")).status, 200)
      const refused = yield* Fiber.join(flood)
      assert.deepStrictEqual(
        new Set(refused.map((r) => `${r.status} ${reasonOf(r.body)}`)),
        new Set(["400 MALFORMED_BODY"])
      )
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a client that goes away in the middle of its body leaves no request waiting", () =>
    Effect.gen(function*() {
      const p = yield* port
      const { org, token } = yield* member("acme")
      const socket = connect(p, "127.0.0.1")
      socket.on("error", () => {})
      socket.write(
        `POST /iam/v2beta1/groups/${org} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name": "`
      )
      yield* Effect.sleep("200 millis")
      socket.destroy()
      // The request is answered (to nobody) and logged, rather than left waiting for a body that never comes.
      yield* Effect.sleep("300 millis")
      assert.isTrue(logged.some((l) => l.method === "POST" && l.path === `/iam/v2beta1/groups/${org}`), "logged")
    }).pipe(Effect.provide(testServer().pipe(Layer.provide(capture)))))

  it.scopedLive("URLs over the limit get the error body: 8 KiB by the API, 16 KiB of headers by the listener", () =>
    Effect.gen(function*() {
      const p = yield* port
      const long = yield* call("GET", `/iam/v2beta1/groups?name=${"a".repeat(9000)}`)
      assert.strictEqual(long.status, 400)
      assert.strictEqual(reasonOf(long.body), "URL_TOO_LONG")
      const huge = yield* raw(p, `GET /iam/v2beta1/groups?name=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
      const answer = parsed(huge.text)
      assert.strictEqual(answer.status, 400)
      assert.strictEqual(reasonOf(answer.body), "HEADERS_TOO_LARGE")
      assert.strictEqual(answer.body.code, 3)
      const broken = parsed((yield* raw(p, "GET / HTTP/1.1\r\nHost x\r\n\r\n")).text)
      assert.strictEqual(reasonOf(broken.body), "MALFORMED_REQUEST")
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a chunked body over 1 MiB is answered with the error body, not a reset", () =>
    Effect.gen(function*() {
      const p = yield* port
      const { org, token } = yield* member("acme")
      const reply = yield* Effect.async<{ status: number; body: any; error?: string }>((resume) => {
        const req = httpRequest({
          host: "127.0.0.1",
          port: p,
          method: "POST",
          path: `/iam/v2beta1/groups/${org}`,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }
        }, (res) => {
          let text = ""
          res.on("data", (c) => (text += c))
          res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text) })))
        })
        req.on("error", (e) => resume(Effect.succeed({ status: 0, body: undefined, error: e.message })))
        const chunk = `"${"x".repeat(64 * 1024 - 2)}"`
        let sent = 0
        const pump = () => {
          while (sent < 40) {
            sent++
            if (!req.write(sent === 1 ? `[${chunk}` : `,${chunk}`)) return req.once("drain", pump)
          }
          req.end("]")
        }
        pump()
      })
      assert.isUndefined(reply.error)
      assert.strictEqual(reply.status, 413)
      assert.strictEqual(reply.body.code, 3)
      assert.strictEqual(reasonOf(reply.body), "REQUEST_TOO_LARGE")
      assert.strictEqual((yield* call("GET", "/healthz")).status, 200)
      // Declared over the limit (10 MB): 413 from the headers alone, nothing read; SCIM's endpoints alike.
      const declared = yield* call("POST", `/iam/v2beta1/groups/${org}`, {
        token,
        raw: JSON.stringify({ name: "big", description: "x".repeat(10 * 1024 * 1024) })
      })
      assert.deepStrictEqual([declared.status, declared.body.code, reasonOf(declared.body)], [
        413,
        3,
        "REQUEST_TOO_LARGE"
      ])
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("bodies over the limit, sent on a client's kept-alive connections, cost none of its other requests", () =>
    Effect.gen(function*() {
      const p = yield* port
      const { org, token } = yield* member("acme")
      const url = `http://127.0.0.1:${p}/iam/v2beta1/groups/${org}`
      const post = (body: string) =>
        fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body
        }).then(async (response) => ({ status: response.status, body: await response.json() }))
      const big = JSON.stringify({ name: "big", description: "x".repeat(10 * 1024 * 1024) })
      yield* Effect.promise(async () => {
        for (let i = 0; i < 10; i++) {
          // The large one is refused (413), or its upload cut once the refusal is sent: never the next request.
          const refused = await post(big).catch((error: Error) => ({ status: 0, body: String(error.cause ?? error) }))
          if (refused.status !== 0) assert.strictEqual(refused.status, 413)
          const created = await post(JSON.stringify({ name: `between-${i}` }))
          assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        }
      })
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a client closing after its answer gets all of it while still sending a body nobody reads", () =>
    Effect.gen(function*() {
      const p = yield* port
      const { org, token } = yield* member("acme")
      const agent = new Agent({ keepAlive: false })
      yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
      /** Sends `body` with `Connection: close` and reads the whole answer, or how the connection broke. */
      const send = (method: string, path: string, body: Buffer, contentType: string) =>
        Effect.async<{ status: number; text: string } | { error: string }>((resume) => {
          const req = httpRequest({
            host: "127.0.0.1",
            port: p,
            method,
            path,
            agent,
            headers: { authorization: `Bearer ${token}`, "content-type": contentType, "content-length": body.length }
          }, (res) => {
            let text = ""
            res.on("data", (c) => (text += c))
            res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, text })))
            res.on("error", (e) => resume(Effect.succeed({ error: `${e.message} after ${text.length} bytes` })))
          })
          req.on("error", (e) => resume(Effect.succeed({ error: e.message })))
          req.end(body)
        })
      // The answer (240 KB) is written before the body (1 MiB) has arrived: closing then would reset the connection
      // under it. An upload refused by its declared size is answered before it is sent, the same way.
      for (let i = 0; i < 10; i++) {
        const reply = yield* send("GET", "/openapi.json", Buffer.alloc(1024 * 1024 + 10, "x"), "text/plain")
        assert.notProperty(reply, "error", `attempt ${i}: ${JSON.stringify(reply)}`)
        if ("status" in reply) assert.property(JSON.parse(reply.text), "openapi")
      }
      for (let i = 0; i < 3; i++) {
        const reply = yield* send(
          "POST",
          `/iam/v2beta1/groups/${org}`,
          Buffer.alloc(2 * 1024 * 1024, "x"),
          "application/json"
        )
        assert.notProperty(reply, "error", `attempt ${i}: ${JSON.stringify(reply)}`)
        if ("status" in reply) assert.strictEqual(reasonOf(JSON.parse(reply.text)), "REQUEST_TOO_LARGE")
      }
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("slow clients: connections are capped, the slowest give way, /healthz answers, headers time out", () => {
    // Destroyed before the server stops, whatever the test's outcome: a test server stops only once they are gone.
    const slow: Array<{ socket: Socket; closed: boolean }> = []
    const headersTimeoutMillis = 5_000
    return Effect.gen(function*() {
      const p = yield* port
      for (let i = 0; i < 200; i++) {
        const entry = { socket: connect(p, "127.0.0.1"), closed: false }
        entry.socket.on("error", () => {})
        entry.socket.on("close", () => (entry.closed = true))
        entry.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n")
        slow.push(entry)
      }
      // The server turns 150 away as it accepts them (their headers could take 5 seconds more), before /healthz is
      // asked: a slow client still in the accept queue on a loaded machine would arrive after it and could take its
      // place as the newest. Closing is what the test waits for, the headers' time limit what it compares with.
      const started = Date.now()
      while (slow.filter((s) => s.closed).length < 150 && Date.now() - started < headersTimeoutMillis) {
        yield* Effect.sleep("20 millis")
      }
      assert.isAtLeast(slow.filter((s) => s.closed).length, 150, "at most 50 connections stay open")
      assert.isBelow(Date.now() - started, headersTimeoutMillis, "turned away, not timed out")
      assert.strictEqual((yield* call("GET", "/healthz")).status, 200)
      assert.isBelow(Date.now() - started, headersTimeoutMillis, "answered while 50 slow clients hold on")
      while (slow.some((s) => !s.closed)) yield* Effect.sleep("100 millis")
      assert.isAtLeast(Date.now() - started, headersTimeoutMillis, "headers that never end time out, on time")
    }).pipe(
      Effect.ensuring(Effect.sync(() => slow.forEach((s) => s.socket.destroy()))),
      Effect.provide(testServer(testConfig({ maxConnections: 50 }), { headersTimeoutMillis }))
    )
  })
})

describe("request targets", () => {
  it.scopedLive("the query is passed on as sent: an unencoded URL in a parameter keeps its double slash", () =>
    Effect.gen(function*() {
      const { org } = yield* member("acme")
      const reply = yield* call("GET", `/sts/exchange?aud=http://localhost:8080&identity=${org}`, {
        headers: { authorization: "Bearer not-a-jwt" }
      })
      assert.strictEqual(reply.status, 401, reply.text)
      assert.strictEqual(reasonOf(reply.body), "MALFORMED_TOKEN")
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("paths are matched exactly: no ';' separator, no other case; duplicate slashes are folded", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const other = (yield* member("other")).org
      // Sent raw: a client library would resolve the dot segments itself.
      const get = (path: string) =>
        Effect.map(
          Effect.flatMap(port, (p) =>
            raw(p, `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`)),
          (r) =>
            parsed(r.text)
        )
      const smuggled = yield* get(`/iam/v2beta1/groups/${org};/../../${other}`)
      assert.strictEqual(smuggled.status, 400)
      assert.strictEqual(reasonOf(smuggled.body), "INVALID_PATH")
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${org};x=1`, { token })).status, 400)
      assert.strictEqual((yield* call("GET", "/IAM/v2beta1/groups", { token })).status, 404)
      assert.strictEqual((yield* call("GET", "/iam/V2BETA1/groups", { token })).status, 404)
      const folded = yield* call("GET", `//iam//v2beta1/groups/${org}`, { token })
      assert.strictEqual(folded.status, 200)
      assert.strictEqual(folded.body.uid, org)
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("page_size and skip are decimal digits only", () =>
    Effect.gen(function*() {
      const { token } = yield* member("acme")
      for (const param of ["page_size", "skip"]) {
        for (const value of ["0x10", "1e3", "%205%20", "+5", "5.0", "-1", "", "0b1"]) {
          const reply = yield* call("GET", `/iam/v2beta1/groups?${param}=${value}`, { token })
          assert.strictEqual(reply.status, 400, `${param}=${value}`)
          assert.deepStrictEqual(reply.body.details[1].fieldViolations.map((v: any) => v.field), [param])
        }
        assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups?${param}=007`, { token })).status, 200)
      }
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a list refuses a parameter it does not know, naming it, rather than answer unfiltered", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      for (
        const path of [
          `/iam/v2beta1/groups?name_prefix=a`,
          `/iam/v2beta1/groups?uidp.children_of=${org}&page_sise=5`,
          `/iam/v2beta1/roleBindings?identity_uid=${org}`,
          `/events/v2beta1/events?subjects=${org}`,
          `/registry/v1/repos?nmae=x`
        ]
      ) {
        const reply = yield* call("GET", path, { token })
        assert.strictEqual(reply.status, 400, path)
        const unknown = [...new URLSearchParams(path.split("?")[1]).keys()].at(-1)
        assert.deepStrictEqual(reply.body.details[1].fieldViolations.map((v: any) => v.field), [unknown], path)
      }
      // The camelCase spellings of known parameters are still taken.
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups?pageSize=5`, { token })).status, 200)
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("bodies must be UTF-8 JSON: other charsets and invalid bytes are refused", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const body = JSON.stringify({ name: "team" })
      for (const contentType of ["application/json; charset=utf-16", "application/json; charset=latin1"]) {
        const reply = yield* call("POST", `/iam/v2beta1/groups/${org}`, { token, raw: body, contentType })
        assert.strictEqual(reply.status, 400, contentType)
        assert.strictEqual(reasonOf(reply.body), "UNSUPPORTED_MEDIA_TYPE")
      }
      for (
        const [name, contentType] of [
          ["a", "application/json; charset=utf-8"],
          ["b", "application/json;charset=\"UTF-8\""]
        ] as const
      ) {
        const reply = yield* call("POST", `/iam/v2beta1/groups/${org}`, {
          token,
          raw: JSON.stringify({ name }),
          contentType
        })
        assert.strictEqual(reply.status, 200, contentType)
      }
      const p = yield* port
      const invalid = Buffer.concat([Buffer.from("{\"name\":\""), Buffer.from([0xc3, 0x28]), Buffer.from("\"}")])
      const reply = parsed(
        (yield* raw(
          p,
          Buffer.concat([
            Buffer.from(
              `POST /iam/v2beta1/groups/${org} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
                `Content-Type: application/json\r\nContent-Length: ${invalid.length}\r\nConnection: close\r\n\r\n`
            ),
            invalid
          ])
        )).text
      )
      assert.strictEqual(reply.status, 400)
      assert.strictEqual(reasonOf(reply.body), "MALFORMED_BODY")
    }).pipe(Effect.provide(testServer())))
})
