/**
 * The SQLite store at a million rows: 1M groups (depth up to 6; every top-level folder a 50k-node subtree), 200k
 * identities and 1M role bindings, seeded with raw SQL; then each engine operation beside the same work done with
 * hand-written better-sqlite3 prepared statements on the same database.
 */
import { Arbor, Authorization, Groups, Principal, Role, Secrets, Uid } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Comparison, Figure } from "./Harness.js"
import { compare, section } from "./Harness.js"

const hexPool = { buffer: Buffer.alloc(0), offset: 0 }
const hex = (bytes: number) => {
  if (hexPool.offset + bytes > hexPool.buffer.length) {
    hexPool.buffer = randomBytes(1 << 20)
    hexPool.offset = 0
  }
  hexPool.offset += bytes
  return hexPool.buffer.toString("hex", hexPool.offset - bytes, hexPool.offset)
}

interface Seeded {
  readonly root: string
  readonly levels: ReadonlyArray<ReadonlyArray<string>>
  readonly identities: ReadonlyArray<string>
  readonly groups: number
  readonly bindings: number
}

/** Seeds the database with raw statements: the workload, not what is measured. */
const seed = (db: Database.Database, scale: number): Seeded => {
  const totalGroups = Math.round(1_000_000 * scale)
  const totalIdentities = Math.round(200_000 * scale)
  const bindingsPerIdentity = 5
  // Seeding is setup: no journal, a large page cache; the measured database runs with WAL and NORMAL sync.
  db.pragma("journal_mode = OFF")
  db.pragma("synchronous = OFF")
  db.pragma("cache_size = -2000000")
  const insertGroup = db.prepare(
    "INSERT INTO groups (uid, parent, name, description, verified, create_time, update_time) VALUES (?, ?, ?, '', 0, ?, ?)"
  )
  let clock = Date.parse("2026-01-01T00:00:00Z")
  const root = hex(20)
  const levels: Array<Array<string>> = [[root]]
  let made = 1
  db.transaction(() => insertGroup.run(root, null, "bench", clock, clock))()
  // Level 1: 20 folders; below them, ten children each down to depth 5; depth 6 takes the rest.
  for (let depth = 1; depth <= 6 && made < totalGroups; depth++) {
    const parents = levels[depth - 1]!
    const want = depth === 6 ? totalGroups - made : Math.min(depth === 1 ? 20 : parents.length * 10, totalGroups - made)
    const level: Array<string> = []
    const insertLevel = db.transaction(() => {
      for (let i = 0; i < want; i++) {
        const parent = parents[i % parents.length]!
        const uid = `${parent}/${hex(8)}`
        clock++
        insertGroup.run(uid, parent, `g${i}`, clock, clock)
        level.push(uid)
      }
    })
    insertLevel()
    levels.push(level)
    made += want
  }

  const insertIdentity = db.prepare(
    "INSERT INTO identities (uid, parent, name, description, claim_match, static_keys, last_seen_time, create_time, update_time) VALUES (?, ?, ?, '', ?, NULL, ?, ?, ?)"
  )
  const insertBinding = db.prepare(
    "INSERT INTO role_bindings (uid, parent, identity_uid, role_uid, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?)"
  )
  const homes = levels[3] ?? levels[levels.length - 1]!
  const targets = levels.slice(1, 5).flat()
  const viewer = Role.builtInByName("viewer")!.uid
  const identities: Array<string> = []
  let bindings = 0
  for (let start = 0; start < totalIdentities; start += 20_000) {
    db.transaction(() => {
      for (let k = start; k < Math.min(start + 20_000, totalIdentities); k++) {
        const parent = homes[k % homes.length]!
        const uid = `${parent}/${hex(8)}`
        clock++
        insertIdentity.run(
          uid,
          parent,
          `i${k}`,
          JSON.stringify({ issuer: "https://issuer.example", subject: `s${k}` }),
          clock,
          clock,
          clock
        )
        identities.push(uid)
        const chosen = new Set<string>()
        while (chosen.size < bindingsPerIdentity) chosen.add(targets[Math.floor(Math.random() * targets.length)]!)
        for (const group of chosen) {
          insertBinding.run(`${group}/${hex(8)}`, group, uid, viewer, clock, clock)
          bindings++
        }
      }
    })()
  }
  db.pragma("analysis_limit = 2000")
  db.exec("ANALYZE")
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  return { root, levels, identities, groups: made, bindings }
}

/** The resident memory of a fresh process that opens the engine on the database and serves reads from it. */
const serverMemory = (filename: string, subtree: string) =>
  new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL("./memoryProbe.js", import.meta.url))], {
      env: { ...process.env, ARBOR_PROBE_FILE: filename, ARBOR_PROBE_SUBTREE: subtree },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk) => out += chunk)
    child.on("error", reject)
    child.on("exit", (code) =>
      code === 0 ? resolve(Number(out.trim())) : reject(new Error(`memory probe exited ${code}`)))
  })

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-"))
  const filename = join(dir, "bench.db")
  const engine = Arbor.layer.pipe(
    Layer.provideMerge(SqliteStore.layer({ filename })),
    Layer.provide(Secrets.layerEphemeral)
  )
  // Create the schema and the built-in roles, then seed with raw statements.
  await Effect.runPromise(Effect.scoped(Layer.build(engine)))
  // Seeding runs on its own connection, closed before anything is measured: its page cache is not ours.
  const seeder = new Database(filename)
  const started = performance.now()
  const seeded = seed(seeder, scale)
  const seedSeconds = (performance.now() - started) / 1000
  seeder.close()
  const db = new Database(filename)
  console.log(
    `seeded ${seeded.groups} groups, ${seeded.identities.length} identities, ${seeded.bindings} bindings in ${
      seedSeconds.toFixed(0)
    } s`
  )

  const runtime = ManagedRuntime.make(engine)
  const exec = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => runtime.runPromise(effect)
  const groups = await exec(Groups.Groups)
  const authorization = await exec(Authorization.Authorization)

  const sample = (xs: ReadonlyArray<string>, n: number) =>
    Array.from({ length: n }, () => xs[Math.floor(Math.random() * xs.length)]!)
  const allUids = seeded.levels.flat()
  const gets = sample(allUids, 1000)
  let g = 0
  const nextUid = () => gets[g++ % gets.length]!

  const raw = {
    get: db.prepare("SELECT * FROM groups WHERE uid = ?"),
    page: db.prepare("SELECT * FROM groups ORDER BY uid LIMIT 51"),
    pageAfter: db.prepare("SELECT * FROM groups WHERE uid > ? ORDER BY uid LIMIT 51"),
    count: db.prepare("SELECT count(*) AS n FROM groups"),
    rangePage: db.prepare("SELECT * FROM groups WHERE uid >= ? AND uid < ? ORDER BY uid LIMIT 51"),
    rangeCount: db.prepare("SELECT count(*) AS n FROM groups WHERE uid >= ? AND uid < ?"),
    bindingsOf: db.prepare("SELECT parent, role_uid FROM role_bindings WHERE identity_uid = ?"),
    role: db.prepare("SELECT capabilities FROM roles WHERE uid = ?"),
    insert: db.prepare(
      "INSERT INTO groups (uid, parent, name, description, verified, create_time, update_time) VALUES (?, ?, ?, '', 0, ?, ?)"
    ),
    entry: db.prepare(
      "INSERT INTO changes (uid, parent, id, type, kind, subject, time, actor_subject, actor, request_id, body) " +
        "VALUES (?, ?, ?, 'dev.chainguard.api.iam.group.created.v1', 'group', ?, ?, 'system', '{\"subject\":\"system\"}', " +
        "NULL, ?)"
    )
  }

  const comparisons: Array<Comparison> = []
  const system = Principal.system

  comparisons.push(
    await compare("get group by uid", {
      ours: () => exec(groups.get(system, nextUid())),
      baseline: () => raw.get.get(nextUid()),
      baselineName: "SELECT by uid",
      perRound: 2000,
      target: 4
    })
  )

  // An identity bound (viewer) at five groups: a get inside its reach checks its bindings first.
  const member = seeded.identities[Math.floor(seeded.identities.length / 2)]!
  const reach =
    (db.prepare("SELECT parent FROM role_bindings WHERE identity_uid = ?").all(member) as Array<{ parent: string }>)
      .map((r) => r.parent)
  const memberPrincipal = Principal.identity(Uid.unsafeMake(member))
  const reachable = allUids.filter((u) => reach.some((r) => u === r || u.startsWith(`${r}/`))).slice(0, 1000)
  let h = 0
  comparisons.push(
    await compare("get group by uid, as an identity (capability check included)", {
      ours: () => exec(groups.get(memberPrincipal, reachable[h++ % reachable.length]!)),
      baseline: () => {
        const uid = reachable[h++ % reachable.length]!
        const held = raw.bindingsOf.all(member) as Array<{ parent: string; role_uid: string }>
        for (const b of held) raw.role.get(b.role_uid)
        return raw.get.get(uid)
      },
      baselineName: "bindings + roles + SELECT",
      perRound: 1000
    })
  )

  const firstPage = () => exec(groups.list(system, { pageSize: 50 }))
  const page1 = await compare("list: first page of 50 with totalCount (1M groups)", {
    ours: firstPage,
    baseline: () => [raw.page.all(), raw.count.get()],
    baselineName: "page + count",
    perRound: 20,
    target: 2
  })
  comparisons.push(page1)

  // A token for page 10 000: skip there once (setup), then follow the token.
  const deep = await exec(groups.list(system, { pageSize: 50, skip: 49_950 * scale * 10 }))
  const deepToken = deep.nextPageToken!
  const lastUid = deep.items[deep.items.length - 1]!.uid
  const page10k = await compare(`list: page ${Math.round(1000 * scale * 10)} of 50 via page token, with totalCount`, {
    ours: () => exec(groups.list(system, { pageSize: 50, pageToken: deepToken })),
    baseline: () => [raw.pageAfter.all(lastUid), raw.count.get()],
    baselineName: "seek page + count",
    perRound: 20,
    target: 2
  })
  comparisons.push(page10k)

  const subtree = seeded.levels[1]![3]!
  const subtreeSize = (raw.rangeCount.get(`${subtree}/`, `${subtree}0`) as { n: number }).n
  comparisons.push(
    await compare(`list: descendants_of a ${subtreeSize}-node subtree, first page of 50 with totalCount`, {
      ours: () => exec(groups.list(system, { descendantsOf: subtree, pageSize: 50 })),
      baseline:
        () => [raw.rangePage.all(`${subtree}/`, `${subtree}0`), raw.rangeCount.get(`${subtree}/`, `${subtree}0`)],
      baselineName: "range page + range count",
      perRound: 50,
      target: 2
    })
  )

  comparisons.push(
    await compare(`totalCount of a ${subtreeSize}-node subtree (a page of 1)`, {
      ours: () => exec(groups.list(system, { descendantsOf: subtree, pageSize: 1 })),
      baseline: () => raw.rangeCount.get(`${subtree}/`, `${subtree}0`),
      baselineName: "range count",
      perRound: 50
    })
  )

  comparisons.push(
    await compare("capability check (an identity with 5 bindings)", {
      ours: () =>
        exec(Effect.map(authorization.grants(memberPrincipal), (grants) => grants.holds("groups.list", reachable[0]!))),
      baseline: () => {
        const held = raw.bindingsOf.all(member) as Array<{ parent: string; role_uid: string }>
        return held.some((b) => {
          const role = raw.role.get(b.role_uid) as { capabilities: string }
          return (JSON.parse(role.capabilities) as Array<string>).includes("groups.list") &&
            (reachable[0] === b.parent || reachable[0]!.startsWith(`${b.parent}/`))
        })
      },
      baselineName: "bindings + roles",
      perRound: 1000,
      target: 2
    })
  )

  const parents = sample(seeded.levels[5] ?? seeded.levels[seeded.levels.length - 1]!, 100)
  let c = 0
  const insertRaw = db.transaction((parent: string, name: string) => {
    const t = Date.now()
    raw.insert.run(`${parent}/${hex(8)}`, parent, name, t, t)
  })
  const createGroup = await compare("create a group", {
    ours: () => exec(groups.create(system, parents[c % parents.length]!, { name: `new ${c++}` })),
    baseline: () => insertRaw(parents[c % parents.length]!, `raw ${c++}`),
    baselineName: "INSERT in a transaction",
    perRound: 200
  })
  comparisons.push(createGroup)
  // What the change log costs a write, by hand: the row and its entry beside the row alone.
  const insertWithEntry = db.transaction((parent: string, name: string) => {
    const t = Date.now()
    const uid = `${parent}/${hex(8)}`
    raw.insert.run(uid, parent, name, t, t)
    const body = JSON.stringify({ uid, name, description: "", verified: false, createTime: t, updateTime: t })
    raw.entry.run(`${uid}/${hex(8)}`, uid, crypto.randomUUID(), uid, t, body)
  })
  const logged = await compare("a group's INSERT with its change-log entry", {
    ours: () => insertWithEntry(parents[c % parents.length]!, `entry ${c++}`),
    baseline: () => insertRaw(parents[c % parents.length]!, `raw ${c++}`),
    baselineName: "the INSERT alone",
    perRound: 200
  })
  comparisons.push(logged)

  await runtime.dispose()
  db.close()
  const rss = await serverMemory(filename, subtree)
  const logShare = (logged.ours - logged.baseline) / createGroup.ours
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
    {
      name: "memory of a process serving the database (RSS after the read workload)",
      value: `${(rss / 2 ** 20).toFixed(0)} MiB`,
      target: "< 1 GiB",
      met: rss < 2 ** 30
    },
    { name: "database size", value: `${(statSync(filename).size / 2 ** 20).toFixed(0)} MiB` },
    { name: "seeding time (raw statements, not measured above)", value: `${seedSeconds.toFixed(0)} s` }
  ]
  rmSync(dir, { recursive: true, force: true })

  return section(
    "SQLite store at a million rows",
    [
      `${seeded.groups.toLocaleString("en")} groups (depth up to 6), ${
        seeded.identities.length.toLocaleString("en")
      } identities, ` +
      `${
        seeded.bindings.toLocaleString("en")
      } role bindings, in one SQLite file (WAL, synchronous=NORMAL, after ANALYZE).`,
      "Ours: the engine's service calls through `@arbor/store-sqlite` (decoding, authorization, page tokens included).",
      "Baseline: the same rows fetched with hand-written better-sqlite3 prepared statements on the same database,",
      "in alternating rounds of the same run. Times are medians per operation."
    ],
    comparisons,
    figures
  )
}
