/**
 * The change log's consumers on one server (`node packages/http/dist/main.js`, SQLite): webhook deliveries to a
 * loopback sink (a backlog's rate beside plain sequential POSTs to the same sink, and the lag under a steady 100
 * writes a second), and what 100 open watch streams cost a write, at a steady rate and back to back (alternating
 * rounds with and without them).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { Agent, createServer, request as httpRequest, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Comparison, Figure } from "./Harness.js"
import { section } from "./Harness.js"
import { type Arbor, median, startArbor } from "./Servers.js"

/** A loopback sink: answers `status()` to each delivery and notes when each arrived, with its entry's time. */
const sinkServer = async () => {
  const arrivals: Array<{ readonly at: number; readonly entryTime: number }> = []
  let status = 200
  const server: Server = createServer((request, response) => {
    request.resume().on("end", () => {
      if (status === 200) arrivals.push({ at: Date.now(), entryTime: Date.parse(String(request.headers["ce-time"])) })
      response.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    arrivals,
    setStatus: (s: number) => (status = s),
    close: () => server.close()
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-events-"))
  const sink = await sinkServer()
  let arbor: Arbor | undefined
  const agent = new Agent({ keepAlive: true, maxSockets: 8 })
  try {
    arbor = await startArbor(join(dir, ".arbor"), { ARBOR_ALLOW_INSECURE_SINKS: "loopback" })
    const { base, org, token } = arbor
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }).then((r) => r.json() as Promise<{ uid: string }>)
    const folder = await call("POST", `/iam/v2beta1/groups/${org}`, { name: "bench" })
    let n = 0
    const write = () => call("POST", `/iam/v2beta1/groups/${folder.uid}`, { name: `g${n++}` })

    // 1. A backlog: deliveries held back by a failing sink, then let through.
    const backlog = Math.round(2000 * Math.min(scale, 1))
    sink.setStatus(503)
    await call("POST", `/events/v2beta1/subscriptions/${folder.uid}`, { sink: sink.url })
    for (let i = 0; i < backlog; i += 8) await Promise.all(Array.from({ length: 8 }, write))
    sink.setStatus(200)
    while (sink.arrivals.length < backlog) await sleep(50)
    const first = sink.arrivals[0]!.at
    const last = sink.arrivals[backlog - 1]!.at
    const rate = (backlog - 1) / ((last - first) / 1000)
    console.log(`deliveries: ${backlog} in ${last - first} ms, ${rate.toFixed(0)}/s`)

    // The floor: the same number of POSTs, one at a time, to the same sink, from this process.
    const post = () =>
      new Promise<void>((resolve, reject) => {
        const r = httpRequest(
          sink.url,
          { method: "POST", agent, headers: { "content-type": "application/json" } },
          (res) => res.resume().on("end", resolve)
        )
        r.on("error", reject)
        r.end(JSON.stringify({ actor: { subject: "system" }, body: { uid: org, name: "floor" } }))
      })
    const floorStart = performance.now()
    for (let i = 0; i < backlog; i++) await post()
    const floorRate = backlog / ((performance.now() - floorStart) / 1000)
    sink.arrivals.length = 0

    // 2. Lag at a steady 100 writes a second.
    const seconds = Math.max(3, Math.round(10 * Math.min(scale, 1)))
    const steady = 100 * seconds
    const start = performance.now()
    for (let i = 0; i < steady; i++) {
      const due = start + i * 10
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      void write()
    }
    while (sink.arrivals.length < steady) await sleep(50)
    const lags = sink.arrivals.slice(0, steady).map((a) => a.at - a.entryTime).sort((a, b) => a - b)
    const p99 = lags[Math.floor(lags.length * 0.99)]!
    console.log(`lag at 100 writes/s: p50 ${lags[Math.floor(lags.length / 2)]} ms, p99 ${p99} ms`)

    // 3. A write with 100 watch streams open, beside one with none.
    const openWatchers = async () => {
      const requests = Array.from({ length: 100 }, () =>
        new Promise<ReturnType<typeof httpRequest>>((resolve) => {
          const r = httpRequest(`${base}/events/v2beta1/events:watch`, {
            headers: { authorization: `Bearer ${token}` }
          }, (res) => {
            res.resume()
            resolve(r)
          })
          r.end()
        }))
      return Promise.all(requests)
    }
    /** Creates one at a time, back to back: the mean time of one. */
    const timeWrites = async (count: number) => {
      const t = performance.now()
      for (let i = 0; i < count; i++) await write()
      return (performance.now() - t) / count
    }
    /** Creates at a steady 25 a second: the median time of one, as its writer sees it. */
    const pacedWrites = async (count: number) => {
      const times: Array<number> = []
      for (let i = 0; i < count; i++) {
        const t = performance.now()
        await write()
        times.push(performance.now() - t)
        await sleep(Math.max(0, 40 - (performance.now() - t)))
      }
      return median(times)
    }
    const rounds = 5
    const paced = { with: [] as Array<number>, without: [] as Array<number> }
    const backToBack = { with: [] as Array<number>, without: [] as Array<number> }
    await timeWrites(50)
    for (let r = 0; r < rounds; r++) {
      paced.without.push(await pacedWrites(50))
      backToBack.without.push(await timeWrites(100))
      const watchers = await openWatchers()
      await sleep(200)
      paced.with.push(await pacedWrites(50))
      backToBack.with.push(await timeWrites(100))
      for (const w of watchers) w.destroy()
      await sleep(200)
    }
    const comparisons: Array<Comparison> = [
      {
        name: "a create at 25 a second with 100 watch streams open",
        ours: median(paced.with),
        baseline: median(paced.without),
        baselineName: "with none",
        target: 1.1
      },
      {
        name: "creates back to back with 100 watch streams open (mean)",
        ours: median(backToBack.with),
        baseline: median(backToBack.without),
        baselineName: "with none"
      },
      {
        name: "a webhook delivery, from a backlog (ms per delivery)",
        ours: 1000 / rate,
        baseline: 1000 / floorRate,
        baselineName: "sequential POSTs to the same sink"
      }
    ]
    const figures: Array<Figure> = [
      {
        name: "deliveries per second to a loopback sink, one subscription",
        value: `${rate.toFixed(0)}`,
        target: "≥ 1,000",
        met: rate >= 1000
      },
      { name: "delivery lag at 100 writes/s, p99", value: `${p99} ms`, target: "< 1,000 ms", met: p99 < 1000 }
    ]
    return section(
      "Events out: webhooks and watch streams",
      [
        "Our server (`node packages/http/dist/main.js`, SQLite) delivering to a sink on loopback. A backlog of",
        `${backlog} entries, held back by the sink answering 503, then let through: the rate of its deliveries`,
        "beside the same number of sequential POSTs to the sink from the bench process. Then the lag from each",
        `entry's commit to its delivery at a steady 100 creates a second for ${seconds} s. Then creates with 100`,
        `watch streams open, beside none, in ${rounds} alternating rounds: 50 at a steady 25 a second (the median`,
        "time of one, as its writer sees it: the streams' work falls between writes) and 100 back to back (the",
        "mean: the streams' work, a socket write each, competes with the next create for the two cores)."
      ],
      comparisons,
      figures
    )
  } finally {
    arbor?.child.kill("SIGTERM")
    sink.close()
    agent.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
}
