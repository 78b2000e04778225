/**
 * Deliveries and streams that hold (issues 40 and 55), on the standalone server (`node packages/http/dist/main.js`):
 * on SQLite, a healthy sink's lag beside 0, 16 and 100 sinks on its host and port that never answer or answer after
 * 5 s, and how long a watch stream
 * outlives the deletion of the binding that authorized it, beside how long an entry takes to reach it; on SQLite, and
 * on PostgreSQL with one server and with two, deliveries a second to 100 subscriptions under steady writes (each
 * one's worst lag), one subscription's backlog drained, and what 5,000 idle subscriptions cost the servers (and the
 * database) beside none; on each store, the deliveries a crash sends again.
 */
import { EmbeddedPostgres } from "@arbor/store-postgres/testing"
import { type ChildProcess, execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import pg from "pg"
import type { Comparison, Figure } from "./Harness.js"
import { section } from "./Harness.js"
import { type Arbor, freePort, root, spawnArbor, startArbor } from "./Servers.js"

import {
  caller,
  type Deployment,
  drain,
  fanOut,
  healthySink,
  idle,
  percent,
  percentile,
  perSubscriptionKilobytes,
  postgresCpuMillis,
  type Sink,
  sleep
} from "./deliveriesMeasures.js"
/** On SQLite: lags beside bad sinks on the same host and port, a watch stream's end after its binding's deletion. */
const sqliteOnly = async (arbor: Arbor, dataDir: string, sink: Sink, scale: number) => {
  const { base, org, token } = arbor
  const call = (method: string, path: string, body?: unknown, as = token) => caller(as)(base, method, path, body)
  {
    // A healthy sink's lag over 50 writes in 10 s, beside 0, 16 and 100 subscriptions (of other folders: other
    // tenants) whose sinks, on the same host and port, never answer or answer after 5 s.
    const writes = Math.max(10, Math.round(50 * Math.min(scale, 1)))
    const lagBeside = async (kind: "hang" | "slow", count: number) => {
      const label = `${kind}-${count}`
      const folder = await call("POST", `/iam/v2beta1/groups/${org}`, { name: `beside ${label}` })
      const others = await call("POST", `/iam/v2beta1/groups/${org}`, { name: `neighbours ${label}` })
      const bad = []
      for (let i = 0; i < count; i++) {
        const neighbour = await call("POST", `/iam/v2beta1/groups/${others.uid}`, { name: `n${i}` })
        bad.push(
          await call("POST", `/events/v2beta1/subscriptions/${neighbour.uid}`, { sink: `${sink.url}/${kind}/${i}` })
        )
      }
      const mine = await call("POST", `/events/v2beta1/subscriptions/${folder.uid}`, {
        sink: `${sink.url}/lag-${label}`
      })
      const from = sink.arrivals.length
      for (let i = 0; i < writes; i++) {
        // Each neighbour gets a write too, so that its sink has a delivery to hold.
        await call("POST", `/iam/v2beta1/groups/${folder.uid}`, { name: `w${i}` })
        if (count > 0) await call("POST", `/iam/v2beta1/groups/${others.uid}`, { name: `w${i}` })
        await sleep(10_000 / writes)
      }
      const path = `/lag-${label}`
      const arrived = () => sink.arrivals.slice(from).filter((a) => a.path === path)
      for (let i = 0; i < 300 && arrived().length < writes; i++) await sleep(100)
      const lags = arrived().map((a) => a.lag)
      for (const s of [mine, ...bad]) await call("DELETE", `/events/v2beta1/subscriptions/${s.uid}`)
      return { p50: percentile(lags, 0.5), p99: percentile(lags, 0.99), got: lags.length }
    }
    const lag0 = await lagBeside("hang", 0)
    const beside = {
      hang16: await lagBeside("hang", 16),
      hang100: await lagBeside("hang", 100),
      slow16: await lagBeside("slow", 16),
      slow100: await lagBeside("slow", 100)
    }
    console.log(
      `healthy lag p50/p99 (of ${writes}): alone ${lag0.p50}/${lag0.p99} (${lag0.got}); ` +
        Object.entries(beside).map(([k, l]) => `${k} ${l.p50}/${l.p99} (${l.got})`).join(", ")
    )

    // A watch stream's end after its binding's deletion, beside an entry's arrival on it.
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
    const end = { median: percentile(endings, 0.5), worst: Math.max(...endings), arrival: percentile(arrivals, 0.5) }
    console.log(
      `stream end after revocation: median ${end.median.toFixed(1)} ms, worst ${end.worst.toFixed(0)} ms; ` +
        `an entry's arrival ${end.arrival.toFixed(1)} ms`
    )
    return { writes, lag0, beside, end }
  }
}

/** Fan-out, one subscription's backlog, and idle subscriptions on `at`. */
const throughput = async (at: Deployment, sink: Sink, scale: number, idleCount: number) => {
  const fanSeconds = Math.max(3, Math.round(10 * Math.min(scale, 1)))
  const fan = await fanOut(at, sink, 100, 10, fanSeconds, `${at.key}-fan`)
  console.log(
    `${at.name}: 100 subscriptions at 10 writes/s: ${fan.got} of ${fan.expected} delivered, ` +
      `${fan.perSecond.toFixed(0)}/s; lag p50 ${fan.p50} ms, p99 ${fan.p99} ms; the worst subscription's p99 ` +
      `${fan.worstP99} ms`
  )
  const backlog = await drain(at, sink, Math.max(500, Math.round(3000 * Math.min(scale, 1))), `${at.key}-backlog`)
  console.log(`${at.name}: one subscription's backlog of ${backlog.total}: ${backlog.perSecond.toFixed(0)}/s`)
  const quiet = idleCount === 0 ? undefined : await idle(at, sink, idleCount, 10)
  if (quiet !== undefined) {
    console.log(
      `${at.name}: idle: ${percent(quiet.none.servers)} of a core, ${quiet.none.perSecond.toFixed(1)} store ` +
        `operations/s with none; ${percent(quiet.many.servers)}, ${quiet.many.perSecond.toFixed(1)}/s with ` +
        `${idleCount} (created at ${quiet.createRate.toFixed(0)}/s, their first looks done ${
          quiet.settledAfter.toFixed(0)
        } s later)` +
        (quiet.many.store === undefined
          ? ""
          : `; the database ${percent(quiet.none.store!)} with none, ${percent(quiet.many.store)} with ${idleCount}`)
    )
  }
  return { fan, backlog, quiet }
}

/**
 * Deliveries sent again per crash: one server (SQLite in a directory of its own, or PostgreSQL's `database`) delivers
 * a backlog to one subscription and is killed with SIGKILL amid it, three times, each time started again on its port
 * and data; what reached the sink twice, per crash.
 */
const resentPerCrash = async (
  sink: Sink,
  dirs: Array<string>,
  postgresUrl?: string
): Promise<ReadonlyArray<number>> => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "arbor-bench-crash-")), ".arbor")
  dirs.push(dirname(dataDir))
  let env: Record<string, string> = { ARBOR_ALLOW_INSECURE_SINKS: "loopback" }
  if (postgresUrl !== undefined) {
    const admin = new pg.Client({ connectionString: postgresUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE crashes`)
    await admin.end()
    env = {
      ...env,
      ARBOR_STORE: "postgres",
      ARBOR_DATABASE_URL: postgresUrl.replace(/\/postgres$/, "/crashes"),
      ARBOR_SECRETS_KEY: "cd".repeat(32)
    }
  }
  const port = await freePort()
  let arbor = await startArbor(dataDir, env, port)
  try {
    const call = caller(arbor.token)
    const folder = await call(arbor.base, "POST", `/iam/v2beta1/groups/${arbor.org}`, { name: "crashes" })
    const path = `/crash-${postgresUrl === undefined ? "sqlite" : "postgres"}`
    sink.failing.add(path)
    await call(arbor.base, "POST", `/events/v2beta1/subscriptions/${folder.uid}`, { sink: `${sink.url}${path}` })
    const total = 3000
    let next = 0
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < total) {
        next++
        await call(arbor.base, "POST", `/iam/v2beta1/groups/${folder.uid}`, { name: `c${next}` })
      }
    }))
    sink.failing.delete(path)
    const mine = () => sink.arrivals.filter((a) => a.path === path)
    const repeated = () => mine().length - new Set(mine().map((a) => a.id)).size
    const resent: Array<number> = []
    for (let crash = 1; crash <= 3; crash++) {
      for (let i = 0; i < 600 && mine().length < crash * 500; i++) await sleep(50)
      arbor.child.kill("SIGKILL")
      await new Promise((resolve) => arbor.child.once("exit", resolve))
      const before = repeated()
      const arrived = mine().length
      arbor = await startArbor(dataDir, env, port)
      for (let i = 0; i < 600 && mine().length < arrived + 50; i++) await sleep(50)
      resent.push(repeated() - before)
    }
    return resent
  } finally {
    arbor.child.kill("SIGTERM")
  }
}

/** `count` servers on a new database of the PostgreSQL server at `url`, the first bootstrapping. */
const onPostgres = async (url: string, database: string, count: number, dirs: Array<string>) => {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  await admin.end()
  const env = {
    ARBOR_ALLOW_INSECURE_SINKS: "loopback",
    ARBOR_STORE: "postgres",
    ARBOR_DATABASE_URL: url.replace(/\/postgres$/, `/${database}`),
    ARBOR_SECRETS_KEY: "cd".repeat(32)
  }
  const dir = () => {
    const made = mkdtempSync(join(tmpdir(), "arbor-bench-deliveries-"))
    dirs.push(made)
    return made
  }
  const first = dir()
  const bootstrapped = await startArbor(first, env)
  const others = []
  // Behind one address, as behind a load balancer: a token of one is a token of every other.
  for (let i = 1; i < count; i++) others.push(await spawnArbor(dir(), { ...env, ARBOR_BASE_URL: bootstrapped.base }))
  return { bootstrapped, servers: [bootstrapped, ...others] }
}

const deployment = (
  name: string,
  key: string,
  { bootstrapped, servers }: Awaited<ReturnType<typeof onPostgres>>,
  storeCpuMillis: () => number
): Deployment => ({ name, key, servers, token: bootstrapped.token, org: bootstrapped.org, storeCpuMillis })

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dirs = [mkdtempSync(join(tmpdir(), "arbor-bench-deliveries-"))]
  const dataDir = join(dirs[0]!, ".arbor")
  const sink = await healthySink()
  const children: Array<ChildProcess> = []
  let postgres: EmbeddedPostgres.Running | undefined
  const idleCount = Math.max(100, Math.round(5000 * Math.min(scale, 1)))
  try {
    const arbor = await startArbor(dataDir, { ARBOR_ALLOW_INSECURE_SINKS: "loopback" })
    children.push(arbor.child)
    const sqlite: Deployment = { name: "SQLite", key: "sqlite", servers: [arbor], token: arbor.token, org: arbor.org }
    const alone = await sqliteOnly(arbor, dataDir, sink, scale)
    const onSqlite = await throughput(sqlite, sink, scale, idleCount)
    arbor.child.kill("SIGTERM")
    const sqliteResent = await resentPerCrash(sink, dirs)
    console.log(`SQLite: deliveries sent again per SIGKILL: ${sqliteResent.join(", ")}`)

    postgres = await EmbeddedPostgres.start({ durable: true })
    const port = Number(new URL(postgres.url).port)
    const storeCpuMillis = () => postgresCpuMillis(port)
    const one = await onPostgres(postgres.url, "one", 1, dirs)
    children.push(...one.servers.map((s) => s.child))
    const pgOne = deployment("PostgreSQL, one server", "postgres-one", one, storeCpuMillis)
    const onOne = await throughput(pgOne, sink, scale, idleCount)
    one.servers.forEach((s) => s.child.kill("SIGTERM"))
    const two = await onPostgres(postgres.url, "two", 2, dirs)
    children.push(...two.servers.map((s) => s.child))
    const pgTwo = deployment("PostgreSQL, two servers", "postgres-two", two, storeCpuMillis)
    const onTwo = await throughput(pgTwo, sink, scale, 0)
    two.servers.forEach((s) => s.child.kill("SIGTERM"))
    const postgresResent = await resentPerCrash(sink, dirs, postgres.url)
    console.log(`PostgreSQL: deliveries sent again per SIGKILL: ${postgresResent.join(", ")}`)

    const { beside, end, lag0, writes } = alone
    const neighbours = [
      ["16 sinks that never answer", beside.hang16],
      ["100 sinks that never answer", beside.hang100],
      ["16 sinks that answer after 5 s", beside.slow16],
      ["100 sinks that answer after 5 s", beside.slow100]
    ] as const
    const comparisons: Array<Comparison> = [
      ...neighbours.map(([name, lag]) => ({
        name: `a healthy sink's lag p99 beside ${name}, on its host and port`,
        ours: lag.p99,
        baseline: lag0.p99,
        baselineName: "with none beside it"
      })),
      {
        name: "a watch stream's end after its binding's deletion (the request included)",
        ours: end.median,
        baseline: end.arrival,
        baselineName: "a write's entry reaching the stream (the request included)"
      }
    ]
    const perDeployment = (
      [[sqlite, onSqlite], [pgOne, onOne], [pgTwo, onTwo]] as const
    ).flatMap(([at, { backlog, fan, quiet }]): Array<Figure> => [
      {
        name: `${at.name}: 100 subscriptions at 10 writes a second: deliveries a second, and the worst one's lag p99`,
        value: `${fan.perSecond.toFixed(0)}/s (${fan.got} of ${fan.expected}); ${fan.worstP99} ms`,
        target: "p99 < 2,000 ms",
        met: fan.got === fan.expected && fan.worstP99 < 2000
      },
      {
        name: `${at.name}: one subscription's backlog of ${backlog.total}, drained`,
        value: `${backlog.perSecond.toFixed(0)}/s (${backlog.got} of ${backlog.total})`,
        target: "≥ 1,000/s",
        met: backlog.got === backlog.total && backlog.perSecond >= 1000
      },
      ...(quiet === undefined ? [] : [{
        name: `${at.name}: the server idle with ${idleCount} subscriptions (beside none)`,
        value: `${percent(quiet.many.servers)} of a core, ${quiet.many.perSecond.toFixed(1)} store operations/s ` +
          `(${percent(quiet.none.servers)}, ${quiet.none.perSecond.toFixed(1)}/s)` +
          (quiet.many.store === undefined
            ? ""
            : `; the database ${percent(quiet.many.store)} (${percent(quiet.none.store!)})`),
        target: "< 2% of a core",
        met: quiet.many.servers < 0.02
      }, {
        // What stays live for each: its worker, its gauge; a leak per subscription shows here.
        name: `${at.name}: heap per idle subscription (${idleCount} beside none)`,
        value: `${perSubscriptionKilobytes(quiet, idleCount).toFixed(1)} KB (${quiet.many.heap.toFixed(0)} MB, ` +
          `${quiet.none.heap.toFixed(0)} MB)`,
        target: "< 50 KB",
        met: perSubscriptionKilobytes(quiet, idleCount) < 50
      }])
    ])
    const figures: Array<Figure> = [
      {
        name: "healthy sink's lag p50 / p99: alone; beside 16, 100 hanging; beside 16, 100 slow (same host and port)",
        value: `${lag0.p50}/${lag0.p99}; ${beside.hang16.p50}/${beside.hang16.p99}, ` +
          `${beside.hang100.p50}/${beside.hang100.p99}; ${beside.slow16.p50}/${beside.slow16.p99}, ` +
          `${beside.slow100.p50}/${beside.slow100.p99} ms (every write delivered: ${
            [lag0, ...Object.values(beside)].every((l) => l.got === writes) ? "yes" : "no"
          })`,
        target: "p99 < 1,000 ms, every write delivered",
        met: [lag0, ...Object.values(beside)].every((l) => l.p99 < 1000 && l.got === writes)
      },
      {
        name: "deliveries sent again per SIGKILL amid a backlog, three crashes: SQLite; PostgreSQL",
        value: `${sqliteResent.join(", ")}; ${postgresResent.join(", ")}`,
        target: "≤ 2 (the one in flight, the one whose record was being written)",
        met: [...sqliteResent, ...postgresResent].every((n) => n <= 2)
      },
      ...perDeployment,
      {
        name: "a watch stream's end after its binding's deletion, worst of 10",
        value: `${end.worst.toFixed(0)} ms`,
        target: "< 1,000 ms",
        met: end.worst < 1000
      }
    ]
    return section(
      "Deliveries and streams that hold",
      [
        "The standalone server (`node packages/http/dist/main.js`), sinks on loopback. On SQLite: a healthy sink's lag",
        `(from an entry's commit to its arrival) over ${writes} writes in 10 s, beside 0, 16 and 100 subscriptions of`,
        "other folders (each written to as often) whose sinks, on the healthy one's host and port, never answer or",
        "answer after 5 s; a viewer's watch stream, a write's entry",
        "reaching it, then its binding deleted until the stream's `end` event, ten times. On SQLite, then on",
        "PostgreSQL 18 (embedded, fsync on) with one server and with two sharing the database: 100 subscriptions of",
        "one folder while 10 writes a second (spread over the servers) go on, every entry to each of them; one",
        "subscription's backlog (written while its sink answered 503) drained once the sink answers; and, with one",
        `server, its CPU and store operations over 10 s with nothing to deliver, with no subscription and with ${idleCount}`,
        "(and the database's CPU, all its processes). Last, on each store, one server killed with SIGKILL three times",
        "amid a subscription's backlog of 3,000 and started again: the entries its sink received twice."
      ],
      comparisons,
      figures
    )
  } finally {
    children.forEach((child) => child.kill("SIGTERM"))
    await sleep(500)
    await postgres?.stop()
    sink.close()
    dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }))
  }
}
