/**
 * gRPC under load: a unary GetGroup over HTTP/2 on our server (SQLite, bearer verified and authorization decided
 * per call), beside a bare `node:http2` server answering the same bytes from memory (the floor), each in its own
 * process, driven from this one by a small HTTP/2 client (50 calls in flight over 4 connections), in alternating
 * rounds of the same run.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as http2 from "node:http2"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Comparison, Figure } from "./Harness.js"
import { section } from "./Harness.js"
import { freePort, type Load, median, startArbor } from "./Servers.js"

/** A bare HTTP/2 server answering every call with the same gRPC message and an OK status. */
const bareServer = `
const http2 = require("node:http2")
const answer = Buffer.from(process.env.ANSWER, "base64")
http2.createServer().on("stream", (stream) => {
  stream.on("data", () => {})
  stream.on("end", () => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true })
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }))
    stream.end(answer)
  })
}).listen(Number(process.env.PORT), "127.0.0.1")
`

/** A length-prefixed gRPC frame of `message`. */
const frame = (message: Buffer) => {
  const out = Buffer.alloc(5 + message.length)
  out.writeUInt32BE(message.length, 1)
  message.copy(out, 5)
  return out
}

/** GetGroupRequest { uid = 1 }, by hand: field 1, length-delimited. */
const getGroupRequest = (uid: string) => {
  const bytes = Buffer.from(uid)
  return frame(Buffer.concat([Buffer.from([0x0a, bytes.length]), bytes]))
}

const path = "/chainguard.platform.iam.v2beta1.GroupsService/GetGroup"

/** One call: the answer's bytes, or a failure naming its status. */
const call = (session: http2.ClientHttp2Session, token: string, request: Buffer) =>
  new Promise<Buffer>((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${token}`
    })
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("trailers", (trailers) => {
      if (trailers["grpc-status"] !== "0") reject(new Error(`grpc-status ${trailers["grpc-status"]}`))
    })
    stream.on("error", reject)
    stream.on("end", () => resolve(Buffer.concat(chunks)))
    stream.end(request)
  })

/** `seconds` of calls to `base`, 50 in flight over 4 connections: calls per second and p99 latency. */
const loadGrpc = async (base: string, token: string, request: Buffer, seconds: number): Promise<Load> => {
  const sessions = Array.from({ length: 4 }, () => http2.connect(base))
  const latencies: Array<number> = []
  const until = performance.now() + seconds * 1000
  const worker = async (i: number) => {
    const session = sessions[i % sessions.length]!
    while (performance.now() < until) {
      const started = performance.now()
      await call(session, token, request)
      latencies.push(performance.now() - started)
    }
  }
  try {
    await Promise.all(Array.from({ length: 50 }, (_, i) => worker(i)))
  } finally {
    for (const session of sessions) session.close()
  }
  latencies.sort((a, b) => a - b)
  return { rps: latencies.length / seconds, p99: Math.round(latencies[Math.floor(latencies.length * 0.99)]!) }
}

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-grpc-"))
  const children: Array<ChildProcess> = []
  try {
    const { base, child, org, token } = await startArbor(join(dir, ".arbor"))
    children.push(child)
    const request = getGroupRequest(org)
    const warm = http2.connect(base)
    const answer = await call(warm, token, request)
    warm.close()

    const barePort = await freePort()
    const bare = `http://127.0.0.1:${barePort}`
    children.push(spawn(process.execPath, ["-e", bareServer], {
      env: { ...process.env, PORT: String(barePort), ANSWER: answer.toString("base64") },
      stdio: "ignore"
    }))
    for (let i = 0; i < 100; i++) {
      const session = http2.connect(bare)
      session.on("error", () => undefined)
      const ok = await call(session, token, request).then(() => true, () => false)
      session.close()
      if (ok) break
      await new Promise((r) => setTimeout(r, 100))
    }

    const seconds = Math.max(3, Math.round(10 * Math.min(scale, 1)))
    const rounds = 3
    const ours: Array<Load> = []
    const floor: Array<Load> = []
    await loadGrpc(base, token, request, 2)
    await loadGrpc(bare, token, request, 2)
    for (let r = 0; r < rounds; r++) {
      floor.push(await loadGrpc(bare, token, request, seconds))
      ours.push(await loadGrpc(base, token, request, seconds))
    }
    const get = {
      ours: median(ours.map((l) => l.rps)),
      bare: median(floor.map((l) => l.rps)),
      p99: median(ours.map((l) => l.p99)),
      bareP99: median(floor.map((l) => l.p99))
    }
    console.log(
      `gRPC GetGroup: ours ${get.ours.toFixed(0)} calls/s (p99 ${get.p99} ms), bare ${get.bare.toFixed(0)}; ratio ${
        (get.ours / get.bare).toFixed(3)
      }`
    )
    const comparisons: Array<Comparison> = [{
      name: "gRPC GetGroup over HTTP/2 (ms of server time per call)",
      ours: 1000 / get.ours,
      baseline: 1000 / get.bare,
      baselineName: "bare node:http2"
    }]
    const figures: Array<Figure> = [
      {
        name: "gRPC GetGroup: calls per second, ours / bare",
        value: `${get.ours.toFixed(0)} / ${get.bare.toFixed(0)} = ${(get.ours / get.bare).toFixed(3)}`,
        target: "≥ 0.08",
        met: get.ours / get.bare >= 0.08
      },
      { name: "gRPC GetGroup: p99 latency, ours / bare", value: `${get.p99} ms / ${get.bareP99} ms` }
    ]
    return section(
      "gRPC on SQLite",
      [
        "Our server (`node packages/http/dist/main.js`, SQLite) answering GetGroup over HTTP/2, and a bare `node:http2`",
        "server answering the same bytes from memory, each in its own process; a Node HTTP/2 client with 50 calls in",
        `flight over 4 connections, ${rounds} alternating rounds of ${seconds} s, medians.`
      ],
      comparisons,
      figures
    )
  } finally {
    for (const child of children) child.kill("SIGTERM")
    rmSync(dir, { recursive: true, force: true })
  }
}
