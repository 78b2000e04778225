/**
 * The standalone server, as `pnpm start` runs it, in a child process: it starts with nothing configured, and on
 * SIGTERM it stops accepting connections, lets in-flight requests (REST and gRPC) finish, and exits cleanly.
 */
import { CreateGroupRequestSchema, GroupSchema } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { create, fromBinary, toBinary } from "@bufbuild/protobuf"
import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync } from "node:fs"
import { request } from "node:http"
import { connect } from "node:http2"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
      const orgs = await (await fetch(`http://127.0.0.1:${port}/iam/v2beta1/groups?uidp.in_root=true`, {
        headers: { authorization: `Bearer ${token}` }
      })).json() as { groups: Array<{ uid: string; name: string }> }
      assert.strictEqual(orgs.groups[0]!.name, "default")

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
      assert.strictEqual(await exited, 0, logs())
      const afterwards = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => "answered", () => "refused")
      assert.strictEqual(afterwards, "refused")
    } finally {
      child.kill("SIGKILL")
    }
  }, 120_000)
})
