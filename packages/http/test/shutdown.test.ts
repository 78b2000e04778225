/**
 * The standalone server, as `pnpm start` runs it, in a child process: it starts with nothing configured, and on
 * SIGTERM it stops accepting connections, lets in-flight requests (REST and gRPC) finish, and exits cleanly; a start
 * that fails says why in one line.
 */
import { CreateGroupRequestSchema, GroupSchema } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { create, fromBinary, toBinary } from "@bufbuild/protobuf"
import { assert, describe, it } from "@effect/vitest"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { createServer, request } from "node:http"
import { connect } from "node:http2"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { drainMillis } from "../src/Server.js"
import { freePort, startServer } from "./processes.js"

/**
 * A CreateGroup call over gRPC (HTTP/2, prior knowledge) that sends half its message now and the rest 900 ms later,
 * after the server has been told to stop: its status, message and answer.
 */
const grpcCallInFlight = (port: number, token: string, parent: string) =>
  new Promise<{ status?: string | undefined; message?: string | undefined; group?: { name: string } }>(
    (resolve, reject) => {
      const session = connect(`http://127.0.0.1:${port}`)
      session.on("error", reject)
      const stream = session.request({
        ":method": "POST",
        ":path": "/chainguard.platform.iam.v2beta1.GroupsService/CreateGroup",
        "content-type": "application/grpc",
        te: "trailers",
        authorization: `Bearer ${token}`
      })
      const message = toBinary(
        CreateGroupRequestSchema,
        create(CreateGroupRequestSchema, {
          parent,
          group: { name: "grpc in flight" }
        })
      )
      const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message])
      frame.writeUInt32BE(message.length, 1)
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("trailers", (trailers) => {
        const body = Buffer.concat(chunks)
        resolve({
          status: trailers["grpc-status"] as string | undefined,
          message: trailers["grpc-message"] as string | undefined,
          ...(body.length > 5 ? { group: fromBinary(GroupSchema, body.subarray(5)) } : {})
        })
        session.close()
      })
      stream.on("error", reject)
      stream.write(frame.subarray(0, 8))
      setTimeout(() => stream.end(frame.subarray(8)), 900)
    }
  )

describe("standalone server", () => {
  it("starts with defaults, bootstraps once, and on SIGTERM finishes in-flight calls before exiting", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-start-"))
    const port = await freePort()
    const { child, exited, logs, ready } = startServer(cwd, port)
    try {
      await ready
      const token = readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8").trim()
      assert.match(logs(), /bootstrapped a new organization/)
      assert.include(
        logs(),
        `"message":"listening on http://127.0.0.1:${port}: the console at http://localhost:${port}/console/, ` +
          `the API reference at http://localhost:${port}/docs"`
      )
      const orgs = await (await fetch(`http://127.0.0.1:${port}/iam/v2beta1/groups?uidp.in_root=true`, {
        headers: { authorization: `Bearer ${token}` }
      })).json() as { groups: Array<{ uid: string; name: string }> }
      assert.strictEqual(orgs.groups[0]!.name, "default")

      // A watch stream, open when SIGTERM comes: it is ended at once rather than held until the drain gives up.
      const watchEnded = new Promise<void>((resolve, reject) => {
        request({
          host: "127.0.0.1",
          port,
          path: "/events/v2beta1/events:watch",
          headers: { authorization: `Bearer ${token}` }
        }, (res) => res.resume().on("end", resolve).on("error", reject)).on("error", reject).end()
      })
      let stopping = 0
      // A request whose body is still arriving when SIGTERM comes.
      const reply = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({
          host: "127.0.0.1",
          port,
          method: "POST",
          path: `/iam/v2beta1/groups/${orgs.groups[0]!.uid}`,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "transfer-encoding": "chunked"
          }
        }, (res) => {
          let body = ""
          res.on("data", (c) => (body += c))
          res.on("end", () => resolve({ status: res.statusCode!, body }))
        })
        req.on("error", reject)
        req.write("{\"name\": ")
        setTimeout(() => {
          stopping = Date.now()
          child.kill("SIGTERM")
          setTimeout(() => req.end("\"in flight\"}"), 300)
        }, 300)
      })
      // And a gRPC call on HTTP/2 whose message is still arriving.
      const call = grpcCallInFlight(port, token, orgs.groups[0]!.uid)
      const finished = await reply
      assert.strictEqual(finished.status, 200, finished.body)
      assert.strictEqual(JSON.parse(finished.body).name, "in flight")
      const answered = await call
      assert.strictEqual(answered.status, "0", answered.message)
      assert.strictEqual(answered.group?.name, "grpc in flight")
      await watchEnded
      assert.strictEqual(await exited, 0, logs())
      assert.isBelow(Date.now() - stopping, drainMillis / 2, "the watch stream held shutdown")
      const last = JSON.parse(logs().trim().split("\n").at(-1)!)
      assert.deepInclude(last, { message: "stopped", logLevel: "INFO" })
      const afterwards = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => "answered", () => "refused")
      assert.strictEqual(afterwards, "refused")
    } finally {
      child.kill("SIGKILL")
    }
  }, 120_000)

  /** Starts the server with `env` and expects it to stop at once: its exit code, stderr and JSON log lines. */
  const failedStart = async (env: Record<string, string>, port?: number) => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-start-"))
    const server = startServer(cwd, port ?? await freePort(), env)
    server.ready.catch(() => {}) // it never becomes ready
    try {
      const code = await server.exited
      const lines = server.logs().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
      return { code, stderr: server.stderr(), errors: lines.filter((line) => line.logLevel === "ERROR"), cwd }
    } finally {
      server.child.kill("SIGKILL")
    }
  }

  it(
    "a start that fails says why in one plain line on stderr, naming the setting and the fix, and logs it as JSON",
    async () => {
      const insecure = await failedStart({ ARBOR_LOGIN_ISSUER: "http://127.0.0.1:9", ARBOR_LOGIN_CLIENT_ID: "arbor" })
      const reason =
        "ARBOR_LOGIN_ISSUER must be an https:// URL (for a provider on this machine, in development, set ARBOR_ALLOW_INSECURE_ISSUERS=loopback)"
      assert.strictEqual(insecure.code, 1)
      assert.strictEqual(insecure.stderr, `arbor: cannot start: ${reason}\n`)
      assert.deepStrictEqual(insecure.errors.map((line) => [line.message, line.annotations]), [["cannot start", {
        reason
      }]])

      const badPort = await failedStart({ PORT: "eighty" })
      assert.strictEqual(badPort.code, 1)
      assert.strictEqual(
        badPort.stderr,
        "arbor: cannot start: PORT must be a port number, 0 to 65535\n"
      )
      const retention = await failedStart({ ARBOR_EVENTS_RETENTION_DAYS: "0" })
      assert.strictEqual(retention.code, 1)
      assert.strictEqual(retention.stderr, "arbor: cannot start: ARBOR_EVENTS_RETENTION_DAYS must be at least 1\n")

      // The port is taken by another server.
      const taken = createServer()
      const port = await new Promise<number>((resolve) =>
        taken.listen(0, "127.0.0.1", () => resolve((taken.address() as AddressInfo).port))
      )
      try {
        const inUse = await failedStart({}, port)
        assert.strictEqual(inUse.code, 1)
        assert.strictEqual(
          inUse.stderr,
          `arbor: cannot start: port ${port} on 127.0.0.1 is in use: stop what listens there, or set PORT\n`
        )
        assert.strictEqual(inUse.errors.length, 1)
        // It failed before it opened a store or bootstrapped anything: no organization, no token left behind.
        assert.isFalse(existsSync(join(inUse.cwd, ".arbor")), "no data directory written")
      } finally {
        taken.close()
      }
    },
    120_000
  )
})
