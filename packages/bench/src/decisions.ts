/**
 * Decisions for other services (docs/api.md §14): an AuthZEN evaluation over HTTP beside an authenticated GET of a
 * group by uid, a batch of 100 beside one evaluation (both against the standalone server on SQLite), and the
 * in-process `Access.can` beside node-casbin and CASL (peers.ts) and beside the reads it needs, done by hand with
 * better-sqlite3 on the same database (the version row of the grants, then the cached grants).
 */
import { EmbeddedPostgres } from "@arbor/store-postgres/testing"
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { worstRequest } from "./conditionCost.js"
import type { Comparison, Figure } from "./Harness.js"
import { compare, section } from "./Harness.js"
import * as Peers from "./peers.js"
import { type Arbor as Server, load, startArbor } from "./Servers.js"

const evaluation = (subject: string, group: string) => ({
  subject: { type: "identity", id: subject },
  action: { name: "groups.list" },
  resource: { type: "group", id: group }
})

/**
 * A bare `node:http` server in this process answering every request with a small JSON body once it has read the
 * request's: what the same client's POST costs beside its GET with nothing behind either.
 */
const bareServer = async () => {
  const server = createServer((request, response) => {
    request.resume().on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() }
}

/** The HTTP figures, against a fresh standalone server. */
const overHttp = async (dir: string): Promise<{ comparisons: ReadonlyArray<Comparison>; figures: Array<Figure> }> => {
  let server: Server | undefined
  try {
    server = await startArbor(join(dir, ".arbor"))
    const { base, org, token } = server
    const me = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()).sub as string
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) })
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
      return response.json()
    }
    const one = () => post("/access/v1/evaluation", evaluation(me, org))
    const get = async () => {
      const response = await fetch(`${base}/iam/v2beta1/groups/${org}`, { headers })
      if (response.status !== 200) throw new Error(`GET: ${response.status}`)
      return response.json()
    }
    const batch = {
      subject: { type: "identity", id: me },
      resource: { type: "group", id: org },
      evaluations: Array.from(
        { length: 100 },
        (_, i) => ({ action: { name: i % 2 === 0 ? "groups.list" : "repo.create" } })
      )
    }
    // Decisions per second under 50 connections, beside authenticated GETs per second on the same server.
    await load(`${base}/access/v1/evaluation`, token, 2, evaluation(me, org))
    const perSecond = await load(`${base}/access/v1/evaluation`, token, 6, evaluation(me, org))
    const gets = await load(`${base}/iam/v2beta1/groups/${org}`, token, 6)
    const figures: Array<Figure> = [{
      name: "AuthZEN decisions per second, 50 connections (authenticated GETs per second beside it)",
      value: `${perSecond.rps.toFixed(0)} (${gets.rps.toFixed(0)}), p99 ${perSecond.p99} ms`
    }]
    const bare = await bareServer()
    const evaluationBody = JSON.stringify(evaluation(me, org))
    const clientsPost = await compare("The client's own POST beside its GET, bare node:http", {
      ours: () => fetch(bare.url, { method: "POST", headers, body: evaluationBody }).then((r) => r.json()),
      baseline: () => fetch(bare.url, { headers }).then((r) => r.json()),
      baselineName: "a GET of the same server, the same headers"
    })
    bare.close()
    const conditions = await worstRequest(base, token, org)
    return {
      figures: [...figures, ...conditions.figures],
      comparisons: [
        await compare("An AuthZEN evaluation over HTTP", {
          ours: one,
          baseline: get,
          baselineName: "an authenticated GET of the group by uid",
          target: 1
        }),
        clientsPost,
        await compare("A batch of 100 evaluations over HTTP", {
          ours: () => post("/access/v1/evaluations", batch),
          baseline: one,
          baselineName: "one evaluation",
          perRound: 50,
          target: 5
        }),
        ...conditions.comparisons
      ]
    }
  } finally {
    server?.child.kill("SIGTERM")
  }
}

/**
 * The in-process figures: `Access.can` warm on the in-memory Layer and on SQLite beside node-casbin and CASL on the
 * same question (peers.ts), and on SQLite beside the read and check it would make by hand on the same file.
 */
const inProcess = async (): Promise<{ comparisons: ReadonlyArray<Comparison>; figures: Array<Figure> }> => {
  const postgres = await EmbeddedPostgres.start()
  const engines: Array<{ close: () => Promise<void> }> = []
  const engine = async (storage: Peers.Storage) => {
    const made = await Peers.arbor(storage)
    engines.push(made)
    return made
  }
  try {
    const database = async (name: string) => {
      const admin = new pg.Client({ connectionString: postgres.url })
      await admin.connect()
      await admin.query(`CREATE DATABASE ${name}`)
      await admin.end()
      return postgres.url.replace(/\/postgres$/, `/${name}`)
    }
    const memory = await engine({ store: "memory" })
    const memoryExpiring = await Peers.arbor({ store: "memory" }, { expiring: true })
    engines.push(memoryExpiring)
    // A working-hours kind of condition, on the time in a zone and the resource: compiled once, evaluated at each decision.
    const memoryConditional = await Peers.arbor({ store: "memory" }, {
      condition: `request.time.getHours("Europe/Berlin") < 24 && resource.kind == "group"`
    })
    engines.push(memoryConditional)
    const sqlite = await engine({ store: "sqlite" })
    const sqliteBounded = await engine({ store: "sqlite", boundedStaleness: true })
    const postgresStrict = await engine({ store: "postgres", url: await database("strict") })
    const postgresBounded = await engine({ store: "postgres", url: await database("bounded"), boundedStaleness: true })
    const casbin = await Peers.casbin()
    const casl = Peers.casl()
    const perCall = Peers.batch
    /** The issue's ≤ 0.1 of node-casbin is asked of the in-memory Layer and SQLite, every commit seen. */
    const besideCasbin = (name: string, ours: () => Promise<unknown>, perRound = 5, target?: number) =>
      compare(`Access.can warm, ${name}, beside node-casbin`, {
        ours,
        baseline: casbin,
        baselineName: "node-casbin's enforceSync, RBAC with domains",
        perRound,
        perCall,
        ...(target === undefined ? {} : { target })
      })
    const memoryBesideCasbin = await besideCasbin("in-memory Layer", memory.ask, 5, 0.1)
    const memoryBesideCasl = await compare("Access.can warm, in-memory Layer, beside CASL", {
      ours: memory.ask,
      baseline: casl,
      baselineName: "CASL's ability.can, rules precomputed",
      perRound: 5,
      perCall
    })
    const memoryBesideLoop = await compare("Access.can warm, in-memory Layer, beside the Effect loop it runs in", {
      ours: memory.ask,
      baseline: memory.loop,
      baselineName: "the same loop yielding Effect.void",
      perRound: 5,
      perCall
    })
    const expiringBesideForGood = await compare("Access.can warm, in-memory Layer, a grant that ends", {
      ours: memoryExpiring.ask,
      baseline: memory.ask,
      baselineName: "the same grant for good",
      perRound: 5,
      perCall
    })
    const conditionalBesideForGood = await compare("Access.can warm, in-memory Layer, a grant with a condition", {
      ours: memoryConditional.ask,
      baseline: memory.ask,
      baselineName: "the same grant with none",
      perRound: 5,
      perCall
    })
    const conditionalEvaluations = await compare("AuthZEN evaluations in process, a grant with a condition", {
      ours: memoryConditional.evaluate,
      baseline: memory.evaluate,
      baselineName: "the same grant with none",
      perRound: 5,
      perCall,
      target: 1.2
    })
    const sqliteBesideCasbin = await besideCasbin("SQLite", sqlite.ask, 5, 0.1)
    const sqliteBoundedBesideCasbin = await besideCasbin("SQLite, at most 1 s stale", sqliteBounded.ask)
    const postgresBesideCasbin = await besideCasbin("PostgreSQL", postgresStrict.ask, 1)
    const postgresBoundedBesideCasbin = await besideCasbin("PostgreSQL, at most 1 s stale", postgresBounded.ask)
    // By hand on the same file: the version row read, then the check on the grants.
    const db = new Database(sqlite.filename, { readonly: true })
    const version = db.prepare("SELECT value FROM versions WHERE uid = ?")
    const grants = [{ group: sqlite.bound, capabilities: new Set(["groups.list"]) }]
    const byHand = () => {
      for (let i = 0; i < perCall; i++) {
        version.get("0000000000000000000000000000000000000001")
        grants.some((g) =>
          g.capabilities.has("groups.list") && (g.group === sqlite.group || sqlite.group.startsWith(`${g.group}/`))
        )
      }
    }
    const sqliteByHand = await compare("Access.can warm, SQLite, beside its reads by hand", {
      ours: sqlite.ask,
      baseline: byHand,
      baselineName: "the grants' version row read and the check, by hand",
      perRound: 5,
      perCall,
      target: 2
    })
    db.close()
    const µs = (ms: number) => `${(ms * 1000).toFixed(2)} µs`
    return {
      comparisons: [
        memoryBesideCasbin,
        memoryBesideCasl,
        memoryBesideLoop,
        expiringBesideForGood,
        conditionalBesideForGood,
        conditionalEvaluations,
        sqliteBesideCasbin,
        sqliteBoundedBesideCasbin,
        postgresBesideCasbin,
        postgresBoundedBesideCasbin,
        sqliteByHand
      ],
      figures: [
        {
          name: "Access.can warm, in-memory Layer (the Effect loop's own step beside it)",
          value: `${µs(memoryBesideCasbin.ours)} (${µs(memoryBesideLoop.baseline)})`,
          target: "≤ 1 µs",
          met: memoryBesideCasbin.ours <= 0.001
        },
        {
          name: "Access.can warm, in-memory Layer: a grant that ends, beside the same grant for good",
          value: `+${µs(expiringBesideForGood.ours - expiringBesideForGood.baseline)}`,
          target: "≤ +0.1 µs",
          met: expiringBesideForGood.ours - expiringBesideForGood.baseline <= 0.0001
        },
        {
          name: "Access.can warm, in-memory Layer, a grant with a compiled condition",
          value: µs(conditionalBesideForGood.ours),
          target: "≤ 2 µs",
          met: conditionalBesideForGood.ours <= 0.002
        },
        {
          name: "Access.can warm, SQLite: every commit seen / at most 1 s stale about other processes",
          value: `${µs(sqliteBesideCasbin.ours)} / ${µs(sqliteBoundedBesideCasbin.ours)}`,
          target: "≤ 2 µs, every commit seen",
          met: sqliteBesideCasbin.ours <= 0.002
        },
        {
          name: "Access.can warm, PostgreSQL: every commit seen / at most 1 s stale about other servers",
          value: `${µs(postgresBesideCasbin.ours)} / ${µs(postgresBoundedBesideCasbin.ours)}`
        },
        {
          name: "node-casbin enforceSync / CASL ability.can",
          value: `${µs(memoryBesideCasbin.baseline)} / ${µs(memoryBesideCasl.baseline)}`
        }
      ]
    }
  } finally {
    for (const made of engines) await made.close()
    await postgres.stop()
  }
}

/** Runs the suite; returns its report section. */
export const run = async (_scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-decisions-"))
  try {
    const http = await overHttp(dir)
    const local = await inProcess()
    return section(
      "Decisions (AuthZEN)",
      [
        "An evaluation (`POST /access/v1/evaluation`, the bootstrap owner about itself) beside an authenticated",
        "`GET /iam/v2beta1/groups/<uid>`, and the same client's POST beside its GET of a bare `node:http` server (what",
        "a POST costs `fetch` and Node before any server work); a batch of 100 beside one evaluation. In process, the question \"may asker",
        "list groups at acme/prod/svc?\" (a viewer binding at acme/prod), warm: `Access.can` on the in-memory Layer",
        "and on SQLite, 1,000 decisions in one Effect run as an embedder's program makes them, beside node-casbin",
        "(`enforceSync`, RBAC with domains, the domain matched as the group or below it) and CASL (a precomputed",
        "ability, the resource carrying its ancestors), and on SQLite beside its reads by hand on the same file.",
        "The worst condition request the limits allow (200 evaluations each spending its condition's budget) beside",
        "one ordinary evaluation, and how long `/healthz` waits while it runs."
      ],
      [...http.comparisons, ...local.comparisons],
      [...http.figures, ...local.figures]
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
