/**
 * What the deliveries suite measures with (`deliveries`): sinks, the CPU of a process and of PostgreSQL, a server's
 * deployment and its calls, fan-out and drain, the store's operations, the heap, and the cost of idle subscriptions.
 */
import { type ChildProcess } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

/**
 * A loopback sink: notes each delivery's path, id, arrival and lag (from its entry's `ce-time`), but for
 * subscriptions' own entries (their creations reach the subscriptions of the same folder); answers 503 on the paths
 * in `failing`. Bad neighbours on the same host and port: it never answers on paths below `/hang`, and answers after
 * 5 s on paths below `/slow`.
 */
export const healthySink = async () => {
  const arrivals: Array<{ readonly path: string; readonly id: string; readonly at: number; readonly lag: number }> = []
  const failing = new Set<string>()
  const last = { at: 0 }
  const server = createHttpServer((request, response) => {
    request.resume().on("end", () => {
      const path = request.url ?? ""
      if (path.startsWith("/hang")) return
      if (path.startsWith("/slow")) return void setTimeout(() => response.writeHead(200).end(), 5_000)
      const at = Date.now()
      last.at = at
      const fails = failing.has(path)
      if (!fails && !String(request.headers["ce-type"]).includes("subscription")) {
        const id = String(request.headers["ce-id"])
        arrivals.push({ path, id, at, lag: at - Date.parse(String(request.headers["ce-time"])) })
      }
      response.writeHead(fails ? 503 : 200).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    arrivals,
    failing,
    /** Waits until nothing has arrived for a second (30 s at most). */
    quiet: async () => {
      for (let i = 0; i < 300 && Date.now() - last.at < 1_000; i++) await sleep(100)
    },
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}

export type Sink = Awaited<ReturnType<typeof healthySink>>

/** The CPU time (user + system, milliseconds) process `pid` has used; with `children`, its waited-for children's too. */
export const cpuMillis = (pid: number, children = false) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  const own = Number(fields[11]) + Number(fields[12])
  return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) * 10
}

/**
 * The CPU time of a PostgreSQL server (milliseconds): its postmaster's, that of its processes now running and that of
 * those that have ended.
 */
export const postgresCpuMillis = (port: number) => {
  const processes = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      return [{ pid: Number(pid), parent: Number(stat.split(") ")[1]!.split(" ")[1]), command }]
    } catch {
      return []
    }
  })
  const postmaster = processes.find((p) => p.command.includes("-p") && p.command.includes(String(port)))
  if (postmaster === undefined) throw new Error(`no PostgreSQL server on port ${port}`)
  return processes.filter((p) => p.parent === postmaster.pid).reduce(
    (sum, p) => sum + cpuMillis(p.pid),
    cpuMillis(postmaster.pid, true)
  )
}

/** Servers sharing one store, their bootstrap organization and owner's token, and the CPU of the store's own processes. */
export interface Deployment {
  readonly name: string
  /** The name in lower case, for folders' names and sinks' paths. */
  readonly key: string
  readonly servers: ReadonlyArray<{ readonly base: string; readonly child: ChildProcess }>
  readonly token: string
  readonly org: string
  readonly storeCpuMillis?: () => number
}

/** Calls the API of `base` as `token`; fails on any answer but 2xx. */
export const caller = (token: string) => async (base: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return (text === "" ? {} : JSON.parse(text)) as { uid: string }
}

/**
 * `count` subscriptions of one folder (created on the first server) while `rate` writes a second (spread over the
 * servers) go on for `seconds`: deliveries a second, lags, and the worst subscription's lag p99.
 */
export const fanOut = async (
  at: Deployment,
  sink: Sink,
  count: number,
  rate: number,
  seconds: number,
  label: string
) => {
  const call = caller(at.token)
  const first = at.servers[0]!.base
  const folder = await call(first, "POST", `/iam/v2beta1/groups/${at.org}`, { name: `fan out ${label}` })
  const subscriptions = []
  for (let i = 0; i < count; i++) {
    subscriptions.push(
      await call(first, "POST", `/events/v2beta1/subscriptions/${folder.uid}`, { sink: `${sink.url}/${label}-${i}` })
    )
  }
  // The subscriptions' creations, which reach those of the folder made before them, are delivered first.
  await sleep(1_000)
  await sink.quiet()
  const before = sink.arrivals.length
  const began = performance.now()
  const writes: Array<Promise<unknown>> = []
  for (let i = 0; i < rate * seconds; i++) {
    const wait = began + i * (1000 / rate) - performance.now()
    if (wait > 0) await sleep(wait)
    const server = at.servers[i % at.servers.length]!.base
    writes.push(call(server, "POST", `/iam/v2beta1/groups/${folder.uid}`, { name: `f${i}` }))
  }
  await Promise.all(writes)
  const expected = count * rate * seconds
  const mine = () => sink.arrivals.slice(before).filter((a) => a.path.startsWith(`/${label}-`))
  for (let i = 0; i < 600 && mine().length < expected; i++) await sleep(100)
  const got = mine()
  const perSecond = got.length / ((Math.max(...got.map((a) => a.at)) - Math.min(...got.map((a) => a.at))) / 1000)
  const bySubscription = new Map<string, Array<number>>()
  for (const a of got) bySubscription.set(a.path, [...(bySubscription.get(a.path) ?? []), a.lag])
  const lags = got.map((a) => a.lag)
  for (const s of subscriptions) await call(first, "DELETE", `/events/v2beta1/subscriptions/${s.uid}`)
  return {
    got: got.length,
    expected,
    perSecond,
    p50: percentile(lags, 0.5),
    p99: percentile(lags, 0.99),
    worstP99: Math.max(...[...bySubscription.values()].map((l) => percentile(l, 0.99)))
  }
}

/**
 * One subscription's backlog: `total` entries written while its sink answers 503, then the sink answers: deliveries a
 * second from the first to the last.
 */
export const drain = async (at: Deployment, sink: Sink, total: number, label: string) => {
  const call = caller(at.token)
  const first = at.servers[0]!.base
  const folder = await call(first, "POST", `/iam/v2beta1/groups/${at.org}`, { name: `backlog ${label}` })
  const path = `/${label}`
  sink.failing.add(path)
  const subscription = await call(first, "POST", `/events/v2beta1/subscriptions/${folder.uid}`, {
    sink: `${sink.url}${path}`
  })
  let next = 0
  await Promise.all(at.servers.flatMap(({ base }) =>
    Array.from({ length: 4 }, async () => {
      while (next < total) {
        next++
        await call(base, "POST", `/iam/v2beta1/groups/${folder.uid}`, { name: `b${next}` })
      }
    })
  ))
  sink.failing.delete(path)
  const mine = () => sink.arrivals.filter((a) => a.path === path)
  // The retry after the writes comes within minutes (its backoff doubles from 1 s while the writes go on).
  for (let i = 0; i < 6000 && mine().length < total; i++) await sleep(100)
  const got = mine()
  await call(first, "DELETE", `/events/v2beta1/subscriptions/${subscription.uid}`)
  return { got: got.length, total, perSecond: got.length / ((got.at(-1)!.at - got[0]!.at) / 1000) }
}

/** The servers' store operations so far, all servers together. */
export const storeOperations = async (at: Deployment) => {
  let sum = 0
  for (const { base } of at.servers) {
    const text = await (await fetch(`${base}/metrics`)).text()
    sum += text.split("\n").filter((l) => l.startsWith("arbor_store_statement_duration_seconds_count"))
      .reduce((total, l) => total + Number(l.split(" ").at(-1)), 0)
  }
  return sum
}

/**
 * The servers' V8 heap in use, in megabytes: the least of three scrapes a second apart, so that garbage not yet
 * collected weighs little beside what stays live.
 */
export const heapMegabytes = async (at: Deployment) => {
  const samples: Array<number> = []
  for (let i = 0; i < 3; i++) {
    if (i > 0) await sleep(1_000)
    let sum = 0
    for (const { base } of at.servers) {
      const line = (await (await fetch(`${base}/metrics`)).text()).split("\n")
        .find((l) => l.startsWith("arbor_process_heap_used_bytes"))
      sum += Number(line?.split(" ").at(-1) ?? Number.NaN) / 1024 / 1024
    }
    samples.push(sum)
  }
  return Math.min(...samples)
}

/**
 * Waits until the servers' store operations a second, over 2 s, are no more than `perSecond` (plus 5): the workers of
 * subscriptions just created have had their first look. How long it took, in seconds (at most `limit`).
 */
export const settle = async (at: Deployment, perSecond: number, limit: number) => {
  const started = Date.now()
  for (;;) {
    const before = await storeOperations(at)
    await sleep(2_000)
    const elapsed = (Date.now() - started) / 1000
    if ((await storeOperations(at) - before) / 2 <= perSecond + 5 || elapsed >= limit) return elapsed
  }
}

/** The servers' CPU (a share of one core, all servers together), the store's, and their store operations a second. */
export const idleCost = async (at: Deployment, seconds: number) => {
  const serversCpu = () => at.servers.reduce((sum, { child }) => sum + cpuMillis(child.pid!), 0)
  await sleep(2_000)
  // The metrics are read outside the CPU's window (with a gauge per subscription, a read is work of its own).
  const operations = await storeOperations(at)
  const cpu = serversCpu()
  const store = at.storeCpuMillis?.()
  const started = Date.now()
  await sleep(seconds * 1000)
  const elapsed = Date.now() - started
  const servers = (serversCpu() - cpu) / elapsed
  const storeShare = store === undefined ? undefined : (at.storeCpuMillis!() - store) / elapsed
  // The metrics reads themselves are requests, with no store operation.
  return {
    servers,
    store: storeShare,
    perSecond: (await storeOperations(at) - operations) / (elapsed / 1000),
    heap: await heapMegabytes(at)
  }
}

/** `count` idle subscriptions, each of a folder of its own, and what they cost beside none. */
export const idle = async (at: Deployment, sink: Sink, count: number, seconds: number) => {
  const call = caller(at.token)
  const first = at.servers[0]!.base
  // Each in a folder of its own (a subscription receives its group's entries, other subscriptions' creations among
  // them: 5,000 in one folder would deliver 12.5 million creations to each other).
  const quiet = await call(first, "POST", `/iam/v2beta1/groups/${at.org}`, { name: "quiet" })
  const folders: Array<string> = []
  for (let i = 0; i < count; i += 10) {
    const made = await Promise.all(
      Array.from(
        { length: 10 },
        (_, j) => call(first, "POST", `/iam/v2beta1/groups/${quiet.uid}`, { name: `q${i + j}` })
      )
    )
    folders.push(...made.map((f) => f.uid))
  }
  // Beside the same folders without subscriptions: what is measured is the subscriptions' own cost.
  const none = await idleCost(at, seconds)
  const createdAt = Date.now()
  for (let i = 0; i < count; i += 10) {
    await Promise.all(
      folders.slice(i, i + 10).map((folder, j) =>
        call(first, "POST", `/events/v2beta1/subscriptions/${folder}`, { sink: `${sink.url}/idle-${i + j}` })
      )
    )
  }
  const createRate = count / ((Date.now() - createdAt) / 1000)
  const settledAfter = await settle(at, none.perSecond, 120)
  const many = await idleCost(at, seconds)
  return { none, many, createRate, settledAfter }
}

/** The servers' heap, per subscription, that `count` idle subscriptions added. */
export const perSubscriptionKilobytes = (
  quiet: { readonly none: { readonly heap: number }; readonly many: { readonly heap: number } },
  count: number
) => (quiet.many.heap - quiet.none.heap) * 1024 / count

export const percent = (share: number) => `${(share * 100).toFixed(1)}%`
