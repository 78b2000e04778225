/**
 * Deliveries and streams that hold (issue 40), on one server (`node packages/http/dist/main.js`, SQLite): a healthy
 * sink's lag beside 0, 16 and 100 sinks that accept and never answer; deliveries a second to 100 subscriptions at
 * once, and each one's worst lag; what 5,000 idle subscriptions cost the server (CPU and store operations a second,
 * beside none); and how long a watch stream outlives the deletion of the binding that authorized it, beside how long
 * an entry takes to reach it.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpServer, request as httpRequest } from "node:http"
import { createServer as createNetServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import type { Comparison, Figure } from "./Harness.js"
import { section } from "./Harness.js"
import { type Arbor, root, startArbor } from "./Servers.js"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

/** A loopback sink: notes each delivery's path, arrival and lag (from its entry's `ce-time`); answers `status`. */
const healthySink = async () => {
  const arrivals: Array<{ readonly path: string; readonly at: number; readonly lag: number }> = []
  let status = 200
  const server = createHttpServer((request, response) => {
    request.resume().on("end", () => {
      const at = Date.now()
      if (status === 200) {
        arrivals.push({ path: request.url ?? "", at, lag: at - Date.parse(String(request.headers["ce-time"])) })
      }
      response.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    arrivals,
    setStatus: (s: number) => (status = s),
    close: () => server.close()
  }
}

/** A sink that accepts every connection and never answers. */
const hangingSink = async () => {
  const sockets = new Set<Socket>()
  const server = createNetServer((socket) => {
    sockets.add(socket)
    socket.on("data", () => {}).on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hang`,
    close: () => {
      sockets.forEach((s) => s.destroy())
      server.close()
    }
  }
}

/** The CPU time (user + system, milliseconds) process `pid` has used. */
const cpuMillis = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-deliveries-"))
  const dataDir = join(dir, ".arbor")
  const healthy = await healthySink()
  const hanging = await hangingSink()
  let arbor: Arbor | undefined
  try {
    arbor = await startArbor(dataDir, { ARBOR_ALLOW_INSECURE_SINKS: "loopback" })
    const { base, org, token } = arbor
    const call = async (method: string, path: string, body?: unknown, as = token) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${as}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
      return (text === "" ? {} : JSON.parse(text)) as { uid: string }
    }
    const subscribe = (group: string, sink: string) => call("POST", `/events/v2beta1/subscriptions/${group}`, { sink })
    const unsubscribe = (uid: string) => call("DELETE", `/events/v2beta1/subscriptions/${uid}`)

    // 1. A healthy sink's lag over 50 writes in 10 s, beside 0, 16 and 100 sinks that never answer.
    const writes = Math.max(10, Math.round(50 * Math.min(scale, 1)))
    const lagBeside = async (hangingCount: number) => {
      const folder = await call("POST", `/iam/v2beta1/groups/${org}`, { name: `beside ${hangingCount}` })
      const stuck = []
      for (let i = 0; i < hangingCount; i++) stuck.push(await subscribe(folder.uid, hanging.url))
      const mine = await subscribe(folder.uid, `${healthy.url}/lag-${hangingCount}`)
      const from = healthy.arrivals.length
      for (let i = 0; i < writes; i++) {
        await call("POST", `/iam/v2beta1/groups/${folder.uid}`, { name: `w${i}` })
        await sleep(10_000 / writes)
      }
      const path = `/lag-${hangingCount}`
      for (let i = 0; i < 300 && healthy.arrivals.slice(from).filter((a) => a.path === path).length < writes; i++) {
        await sleep(100)
      }
      const lags = healthy.arrivals.slice(from).filter((a) => a.path === path).map((a) => a.lag)
      for (const s of [mine, ...stuck]) await unsubscribe(s.uid)
      return { p50: percentile(lags, 0.5), p99: percentile(lags, 0.99), got: lags.length }
    }
    const lag0 = await lagBeside(0)
    const lag16 = await lagBeside(16)
    const lag100 = await lagBeside(100)
    console.log(
      `healthy lag p50/p99: ${lag0.p50}/${lag0.p99} alone, ${lag16.p50}/${lag16.p99} beside 16 hanging, ` +
        `${lag100.p50}/${lag100.p99} beside 100 (${lag0.got}, ${lag16.got}, ${lag100.got} of ${writes})`
    )

    // 2. 100 subscriptions of one folder under a steady stream of writes: every one receives every entry.
    const fanOut = 100
    const rate = 10
    const fanSeconds = Math.max(3, Math.round(10 * Math.min(scale, 1)))
    const many = await call("POST", `/iam/v2beta1/groups/${org}`, { name: "fan out" })
    const subscriptions = []
    for (let i = 0; i < fanOut; i++) subscriptions.push(await subscribe(many.uid, `${healthy.url}/fan-${i}`))
    await sleep(1_000)
    const before = healthy.arrivals.length
    const began = performance.now()
    for (let i = 0; i < rate * fanSeconds; i++) {
      const wait = began + i * (1000 / rate) - performance.now()
      if (wait > 0) await sleep(wait)
      void call("POST", `/iam/v2beta1/groups/${many.uid}`, { name: `f${i}` })
    }
    const expected = fanOut * rate * fanSeconds
    for (let i = 0; i < 600 && healthy.arrivals.length - before < expected; i++) await sleep(100)
    const fanned = healthy.arrivals.slice(before).filter((a) => a.path.startsWith("/fan-"))
    const fanRate = fanned.length /
      ((Math.max(...fanned.map((a) => a.at)) - Math.min(...fanned.map((a) => a.at))) / 1000)
    const fanLags = fanned.map((a) => a.lag)
    const bySubscription = new Map<string, Array<number>>()
    for (const a of fanned) bySubscription.set(a.path, [...(bySubscription.get(a.path) ?? []), a.lag])
    const worstP99 = Math.max(...[...bySubscription.values()].map((lags) => percentile(lags, 0.99)))
    console.log(
      `${fanOut} subscriptions at ${rate} writes/s: ${fanned.length} of ${expected} delivered, ` +
        `${fanRate.toFixed(0)}/s; lag p50 ${percentile(fanLags, 0.5)} ms, p99 ${percentile(fanLags, 0.99)} ms; ` +
        `the worst subscription's p99 ${worstP99} ms`
    )
    for (const s of subscriptions) await unsubscribe(s.uid)

    // 3. Idle: the server's CPU and store operations a second with no subscription, then with 5,000.
    const storeOperations = async () => {
      const text = await (await fetch(`${base}/metrics`)).text()
      return text.split("\n").filter((l) => l.startsWith("arbor_store_statement_duration_seconds_count"))
        .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0)
    }
    const idle = async (seconds: number) => {
      await sleep(2_000)
      const cpu = cpuMillis(arbor!.child.pid!)
      const operations = await storeOperations()
      const started = Date.now()
      await sleep(seconds * 1000)
      const elapsed = Date.now() - started
      return {
        core: (cpuMillis(arbor!.child.pid!) - cpu) / elapsed,
        // The metrics read itself is one request, with no store operation.
        perSecond: (await storeOperations() - operations) / (elapsed / 1000)
      }
    }
    const idleSeconds = 10
    const idleNone = await idle(idleSeconds)
    const idleCount = Math.max(100, Math.round(5000 * Math.min(scale, 1)))
    // Each in a folder of its own (a subscription receives its group's entries, other subscriptions' creations
    // among them: 5,000 in one folder would deliver 12.5 million creations to each other).
    const quiet = await call("POST", `/iam/v2beta1/groups/${org}`, { name: "quiet" })
    const folders: Array<string> = []
    for (let i = 0; i < idleCount; i += 10) {
      const made = await Promise.all(
        Array.from({ length: 10 }, (_, j) => call("POST", `/iam/v2beta1/groups/${quiet.uid}`, { name: `q${i + j}` }))
      )
      folders.push(...made.map((f) => f.uid))
    }
    const createdAt = Date.now()
    for (let i = 0; i < idleCount; i += 10) {
      await Promise.all(folders.slice(i, i + 10).map((folder, j) => subscribe(folder, `${healthy.url}/idle-${i + j}`)))
    }
    const createRate = idleCount / ((Date.now() - createdAt) / 1000)
    const idleMany = await idle(idleSeconds)
    console.log(
      `idle: ${(idleNone.core * 100).toFixed(1)}% of a core, ${idleNone.perSecond.toFixed(1)} store ` +
        `operations/s with none; ${(idleMany.core * 100).toFixed(1)}%, ${idleMany.perSecond.toFixed(1)}/s with ` +
        `${idleCount} (created at ${createRate.toFixed(0)}/s)`
    )

    // 4. A watch stream's end after its binding's deletion, beside an entry's arrival on it.
    const watcher = await call("POST", `/iam/v2beta1/identities/${org}`, {
      name: "watcher",
      claimMatch: { issuer: "https://issuer.example.com", subject: "watcher" }
    })
    const viewer = "cbface5d58f52d0ef8b668e8a94f5da62ed3a21b"
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(root, "packages/http/dist/admin.js"), "token", "--identity", watcher.uid],
      { env: { ...process.env, ARBOR_DATA_DIR: dataDir }, encoding: "utf8" }
    )
    const watcherToken = stdout.trim()
    const arrivals: Array<number> = []
    const endings: Array<number> = []
    for (let round = 0; round < 10; round++) {
      const binding = await call("POST", `/iam/v2beta1/roleBindings/${org}`, {
        identityUid: watcher.uid,
        roleUid: viewer
      })
      let onMessage: (event: string) => void = () => {}
      const ended = new Promise<void>((resolve) => {
        const request = httpRequest(`${base}/events/v2beta1/events:watch`, {
          headers: { authorization: `Bearer ${watcherToken}` }
        }, (response) => {
          let buffer = ""
          response.setEncoding("utf8").on("data", (chunk: string) => {
            buffer += chunk
            let end: number
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              const event = /^event: (.*)$/m.exec(buffer.slice(0, end))?.[1]
              buffer = buffer.slice(end + 2)
              if (event !== undefined) onMessage(event)
            }
          }).on("close", () => resolve())
        })
        request.end()
      })
      await sleep(200)
      const written = performance.now()
      const arrived = new Promise<void>((resolve) => (onMessage = () => resolve()))
      await call("POST", `/iam/v2beta1/groups/${org}`, { name: `watched ${round}` })
      await arrived
      arrivals.push(performance.now() - written)
      const revoked = performance.now()
      const endEvent = new Promise<void>((resolve) => (onMessage = (e) => e === "end" && resolve()))
      await call("DELETE", `/iam/v2beta1/roleBindings/${binding.uid}`)
      await Promise.race([Promise.all([endEvent, ended]), sleep(10_000)])
      endings.push(performance.now() - revoked)
    }
    const endMedian = percentile(endings, 0.5)
    const arrivalMedian = percentile(arrivals, 0.5)
    console.log(
      `stream end after revocation: median ${endMedian.toFixed(1)} ms, worst ${Math.max(...endings).toFixed(0)} ms; ` +
        `an entry's arrival ${arrivalMedian.toFixed(1)} ms`
    )

    const comparisons: Array<Comparison> = [
      {
        name: "a healthy sink's lag p99 beside 16 sinks that never answer",
        ours: lag16.p99,
        baseline: lag0.p99,
        baselineName: "with none beside it",
        target: 1.2
      },
      {
        name: "a healthy sink's lag p99 beside 100 sinks that never answer",
        ours: lag100.p99,
        baseline: lag0.p99,
        baselineName: "with none beside it",
        target: 1.2
      },
      {
        name: "a watch stream's end after its binding's deletion (the request included)",
        ours: endMedian,
        baseline: arrivalMedian,
        baselineName: "a write's entry reaching the stream (the request included)"
      }
    ]
    const figures: Array<Figure> = [
      {
        name: "healthy sink's lag p50 / p99: alone, beside 16, beside 100 hanging sinks",
        value: `${lag0.p50}/${lag0.p99}, ${lag16.p50}/${lag16.p99}, ${lag100.p50}/${lag100.p99} ms`,
        target: "p99 < 1,000 ms",
        met: Math.max(lag0.p99, lag16.p99, lag100.p99) < 1000
      },
      {
        name: `${fanOut} subscriptions at ${rate} writes a second: deliveries a second, and the worst one's lag p99`,
        value: `${fanRate.toFixed(0)}/s (${fanned.length} of ${expected}); ${worstP99} ms`,
        target: "p99 < 2,000 ms",
        met: fanned.length === expected && worstP99 < 2000
      },
      {
        name: `the server idle with ${idleCount} subscriptions (beside none)`,
        value: `${(idleMany.core * 100).toFixed(1)}% of a core, ${idleMany.perSecond.toFixed(1)} store operations/s ` +
          `(${(idleNone.core * 100).toFixed(1)}%, ${idleNone.perSecond.toFixed(1)}/s)`,
        target: "< 2% of a core",
        met: idleMany.core < 0.02
      },
      {
        name: "a watch stream's end after its binding's deletion, worst of 10",
        value: `${Math.max(...endings).toFixed(0)} ms`,
        target: "< 1,000 ms",
        met: Math.max(...endings) < 1000
      }
    ]
    return section(
      "Deliveries and streams that hold",
      [
        "Our server (`node packages/http/dist/main.js`, SQLite), sinks on loopback. A healthy sink's lag (from an",
        `entry's commit to its arrival) over ${writes} writes in 10 s, with 0, 16 and 100 subscriptions of the same`,
        `folder whose sink accepts connections and never answers. 100 subscriptions of one folder while ${rate} writes`,
        `a second go on for ${fanSeconds} s: every entry to each of them. The server's CPU and`,
        `store operations over ${idleSeconds} s with nothing to deliver, with no subscription and with ${idleCount}.`,
        "A viewer's watch stream: a write's entry reaching it, then its binding deleted until the stream's `end`",
        "event, ten times."
      ],
      comparisons,
      figures
    )
  } finally {
    arbor?.child.kill("SIGTERM")
    healthy.close()
    hanging.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
