/**
 * IAM as code at size (issues 45 and 55). In process, on SQLite and on PostgreSQL (embedded, fsync on): a document of
 * 1,000 folders, 200 identities and 2,000 bindings applied by `Declarative.apply` to an empty store, planned again
 * with nothing to change, and exported; then documents of 10,000 folders, flat (side by side) and nested (100 teams
 * of 99), each applied beside a baseline of the same folders created by hand (`Groups.create` in one transaction).
 * On the standalone server (SQLite): other clients' reads and `/readyz` while a 10,000-folder document is applied,
 * beside the same reads alone.
 */
import { Arbor, Declarative, Groups, Principal, Secrets, Store, type Uid } from "@arbor/core"
import { PostgresStore } from "@arbor/store-postgres"
import { EmbeddedPostgres } from "@arbor/store-postgres/testing"
import { SqliteStore } from "@arbor/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import type { Comparison, Figure } from "./Harness.js"
import { section } from "./Harness.js"
import { startArbor } from "./Servers.js"

type Folders = { [name: string]: { folders?: Folders } }

/** The document: 10 teams of 100 folders (`team-3/app-42`), an identity per 5 folders, 2,000 bindings. */
const teamsDocument = (scale: number) => {
  const teams = Math.max(1, Math.round(10 * scale))
  const folders: Folders = {}
  const identities: Record<string, { issuer: string; subject: string }> = {}
  const bindings: Array<{ identity: string; role: string; group: string }> = []
  for (let t = 0; t < teams; t++) {
    const apps: Folders = {}
    for (let a = 0; a < 100; a++) apps[`app-${a}`] = {}
    folders[`team-${t}`] = { folders: apps }
    for (let i = 0; i < 20; i++) {
      const path = `team-${t}/app-${i * 5}/ci`
      identities[path] = {
        issuer: "https://token.actions.githubusercontent.com",
        subject: `repo:acme/t${t}-a${i}:ref:refs/heads/main`
      }
      for (let b = 0; b < 10; b++) {
        bindings.push({
          identity: path,
          role: b % 2 === 0 ? "viewer" : "editor",
          group: `team-${t}/app-${(i * 5 + b) % 100}`
        })
      }
    }
  }
  return { organizations: { acme: { folders, identities, bindings } } }
}

/**
 * The document issue 55 measured (60 s on SQLite then): 1,000 folders (10 teams of 100), 500 identities and 5,000
 * bindings, each identity bound ten times across the teams.
 */
const mixedDocument = (scale: number) => {
  const teams = Math.max(1, Math.round(10 * scale))
  const folders: Folders = nested(teams, 99)
  const identities: Record<string, { issuer: string; subject: string }> = {}
  const bindings: Array<{ identity: string; role: string; group: string }> = []
  for (let i = 0; i < 50 * teams; i++) {
    const path = `team-${i % teams}/f${i % 99}/ci-${i}`
    identities[path] = {
      issuer: "https://token.actions.githubusercontent.com",
      subject: `repo:acme/r${i}:ref:refs/heads/main`
    }
    for (let b = 0; b < 10; b++) {
      bindings.push({
        identity: path,
        role: b % 2 === 0 ? "viewer" : "editor",
        group: `team-${(i + b) % teams}/f${(i * 7 + b) % 99}`
      })
    }
  }
  return { organizations: { acme: { folders, identities, bindings } } }
}

/** `count` folders side by side. */
const flat = (count: number): Folders => Object.fromEntries(Array.from({ length: count }, (_, i) => [`f${i}`, {}]))

/** `teams` folders of `apps` folders each. */
const nested = (teams: number, apps: number): Folders =>
  Object.fromEntries(Array.from({ length: teams }, (_, t) => [`team-${t}`, { folders: flat(apps) }]))

const folderCount = (folders: Folders): number =>
  Object.values(folders).reduce((sum, folder) => sum + 1 + folderCount(folder.folders ?? {}), 0)

/** An engine on one store, built afresh for each measurement. */
type Engine = Layer.Layer<Arbor.Services | Store.Store, unknown>

const seconds = async <A>(engine: Engine, effect: Effect.Effect<A, unknown, Arbor.Services | Store.Store>) => {
  const runtime = ManagedRuntime.make(engine)
  try {
    await runtime.runPromise(Effect.void)
    const started = performance.now()
    const result = await runtime.runPromise(effect)
    return { result, seconds: (performance.now() - started) / 1000 }
  } finally {
    await runtime.dispose()
  }
}

/** Applies `document` (its organization `acme`) to an empty store, plans it again and exports it: seconds each. */
const applied = (engine: Engine, document: unknown) =>
  seconds(
    engine,
    Effect.gen(function*() {
      const declarative = yield* Declarative.Declarative
      const began = performance.now()
      const plan = yield* declarative.apply(Principal.system, document)
      const apply = (performance.now() - began) / 1000
      const again = performance.now()
      const replan = yield* declarative.plan(Principal.system, document)
      if (replan.changes.length !== 0) throw new Error("a re-plan found changes")
      const replanned = (performance.now() - again) / 1000
      const exporting = performance.now()
      yield* declarative.exportOrganization(Principal.system, "acme")
      return {
        changes: plan.changes.length,
        apply,
        replan: replanned,
        exported: (performance.now() - exporting) / 1000
      }
    })
  )

/** The baseline: `folders` created by hand, parents first, through `Groups.create`, in one transaction. */
const byHand = (engine: Engine, folders: Folders) =>
  seconds(
    engine,
    Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const store = yield* Store.Store
      yield* store.transaction(Effect.gen(function*() {
        const org = yield* groups.createRoot(Principal.system, { name: "acme" })
        const make = (parent: Uid.Uid, children: Folders): Effect.Effect<void, unknown> =>
          Effect.forEach(Object.entries(children), ([name, folder]) =>
            Effect.flatMap(
              groups.create(Principal.system, parent, { name }),
              (made) => make(made.uid, folder.folders ?? {})
            ), { discard: true })
        yield* make(org.uid, folders)
      }))
    })
  )

/**
 * Other clients' requests until `until` settles, each one's milliseconds: reads of the organization, `/readyz`, and
 * creates of folders below `folder`, each kind from a client of its own sending one after another.
 */
const requests = async (base: string, token: string, org: string, folder: string, until: Promise<unknown>) => {
  let done = false
  void until.finally(() => (done = true))
  const client = async (path: string, body?: () => string) => {
    const times: Array<number> = []
    while (!done) {
      const started = performance.now()
      const response = await fetch(`${base}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: body() })
      })
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`${path} answered ${response.status}`)
      times.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return times
  }
  const [reads, readyz, writes] = await Promise.all([
    client(`/iam/v2beta1/groups/${org}`),
    client("/readyz"),
    client(`/iam/v2beta1/groups/${folder}`, () => JSON.stringify({ name: `w${Math.random()}` }))
  ])
  return { reads, readyz, writes }
}

const p99 = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? Number.NaN

/** On the standalone server (SQLite): another client's requests beside an apply of `folders`, and alone. */
const beside = async (folders: Folders) => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-apply-"))
  const arbor = await startArbor(dir)
  try {
    const created = await fetch(`${arbor.base}/iam/v2beta1/groups/${arbor.org}`, {
      method: "POST",
      headers: { authorization: `Bearer ${arbor.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "elsewhere" })
    })
    const folder = ((await created.json()) as { uid: string }).uid
    const reads = (until: Promise<unknown>) => requests(arbor.base, arbor.token, arbor.org, folder, until)
    const alone = await reads(new Promise((r) => setTimeout(r, 5_000)))
    const began = performance.now()
    const applying = fetch(`${arbor.base}/iam/v2beta1/groups/${arbor.org}:apply`, {
      method: "POST",
      headers: { authorization: `Bearer ${arbor.token}`, "content-type": "application/json" },
      body: JSON.stringify({ document: { organizations: { default: { folders } } } })
    }).then(async (r) => {
      if (!r.ok) throw new Error(`the apply answered ${r.status}: ${await r.text()}`)
    })
    const during = await reads(applying)
    await applying
    return { alone, during, apply: (performance.now() - began) / 1000 }
  } finally {
    arbor.child.kill("SIGTERM")
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dirs: Array<string> = []
  const postgres = await EmbeddedPostgres.start({ durable: true })
  try {
    const sqlite = (): Engine => {
      const dir = mkdtempSync(join(tmpdir(), "arbor-bench-declarative-"))
      dirs.push(dir)
      return Arbor.layer.pipe(
        Layer.provideMerge(SqliteStore.layer({ filename: join(dir, "declarative.db") })),
        Layer.provide(Secrets.layerEphemeral)
      )
    }
    let databases = 0
    const postgresEngine = (): Engine =>
      Layer.unwrapEffect(Effect.promise(async () => {
        const admin = new pg.Client({ connectionString: postgres.url })
        await admin.connect()
        const name = `declarative_${databases++}`
        await admin.query(`CREATE DATABASE ${name}`)
        await admin.end()
        return Arbor.layer.pipe(
          Layer.provideMerge(
            PostgresStore.layer({
              url: Redacted.make(postgres.url.replace(/\/postgres$/, `/${name}`)),
              maxConnections: 4
            })
          ),
          Layer.provide(Secrets.layerEphemeral)
        )
      }))
    const stores = [["SQLite", sqlite], ["PostgreSQL", postgresEngine]] as const

    const figures: Array<Figure> = []
    const comparisons: Array<Comparison> = []
    for (const [name, engine] of stores) {
      const teams = await applied(engine(), teamsDocument(scale))
      const { apply, changes, exported, replan: replanned } = teams.result
      console.log(
        `${name}: teams document, ${changes} changes: apply ${apply.toFixed(2)} s, re-plan ${replanned.toFixed(2)} s`
      )
      figures.push(
        {
          name: `${name}: apply to an empty store (${changes} changes, one transaction)`,
          value: `${apply.toFixed(2)} s`,
          target: "< 10 s",
          met: apply < 10
        },
        {
          name: `${name}: plan again, nothing to change`,
          value: `${replanned.toFixed(2)} s`,
          target: "< 1 s",
          met: replanned < 1
        },
        { name: `${name}: export`, value: `${exported.toFixed(2)} s` }
      )
      const mixed = await applied(engine(), mixedDocument(scale))
      const mixedTotal = mixed.result.apply + mixed.result.replan
      console.log(
        `${name}: mixed document, ${mixed.result.changes} changes: apply ${mixed.result.apply.toFixed(2)} s, ` +
          `re-plan ${mixed.result.replan.toFixed(2)} s`
      )
      figures.push({
        name: `${name}: folders, identities and ten bindings each (${mixed.result.changes} changes), applied and ` +
          "planned again",
        value: `${mixedTotal.toFixed(2)} s (${mixed.result.apply.toFixed(2)} + ${mixed.result.replan.toFixed(2)})`,
        target: "< 5 s",
        met: mixedTotal < 5
      })
      const count = Math.max(1_000, Math.round(10_000 * Math.min(scale, 1)))
      for (const [shape, folders] of [["flat", flat(count)], ["nested", nested(100, count / 100 - 1)]] as const) {
        const ours = await applied(engine(), { organizations: { acme: { folders } } })
        const baseline = await byHand(engine(), folders)
        const total = ours.result.apply + ours.result.replan
        console.log(
          `${name}: ${folderCount(folders)} folders ${shape}: apply ${ours.result.apply.toFixed(2)} s, re-plan ` +
            `${ours.result.replan.toFixed(2)} s; by hand ${baseline.seconds.toFixed(2)} s`
        )
        comparisons.push({
          name: `${name}: apply ${ours.result.changes} folders, ${shape}`,
          ours: ours.result.apply * 1000,
          baseline: baseline.seconds * 1000,
          baselineName: "the same folders created by hand in one transaction"
        })
        figures.push({
          name: `${name}: ${ours.result.changes} folders ${shape}, applied and planned again`,
          value: `${total.toFixed(2)} s (${(ours.result.apply * 1e6 / ours.result.changes).toFixed(0)} µs a change)`,
          target: "< 5 s",
          met: total < 5
        })
      }
    }

    const count = Math.max(1_000, Math.round(10_000 * Math.min(scale, 1)))
    const side = await beside(flat(count))
    const readyz = Math.max(...side.during.readyz)
    console.log(
      `beside a ${count}-folder apply (${side.apply.toFixed(1)} s): read p99 ${p99(side.during.reads).toFixed(0)} ms ` +
        `(alone ${p99(side.alone.reads).toFixed(0)} ms), write p99 ${p99(side.during.writes).toFixed(0)} ms (alone ` +
        `${p99(side.alone.writes).toFixed(0)} ms), /readyz at worst ${readyz.toFixed(0)} ms`
    )
    for (const kind of ["reads", "writes"] as const) {
      figures.push({
        name: `another client's ${kind.slice(0, -1)} p99 while ${count} folders are applied (${
          side.apply.toFixed(1)
        } s), beside alone`,
        value: `${p99(side.during[kind]).toFixed(0)} ms (${p99(side.alone[kind]).toFixed(0)} ms; ${
          side.during[kind].length
        } ${kind})`,
        target: "+ ≤ 100 ms",
        met: p99(side.during[kind]) - p99(side.alone[kind]) <= 100
      })
    }
    figures.push({
      name: "`/readyz` at worst meanwhile",
      value: `${readyz.toFixed(0)} ms`,
      target: "< 1,000 ms",
      met: readyz < 1000
    })
    return section(
      "IAM as code",
      [
        "In process, on SQLite and on PostgreSQL 18 (embedded, fsync on), as the system: a document of 1,000 folders",
        "(10 teams of 100), 200 identities and 2,000 bindings applied to an empty store in one transaction, planned",
        "again (nothing to change) and exported; the same shape at 1,000 folders, 500 identities and 5,000 bindings",
        "(issue 55's), applied and planned again; then 10,000 folders, flat and nested (100 teams of 99), applied and",
        "planned again, beside the same folders created by hand (`Groups.create`, parents first, one transaction).",
        "Each change goes through the engine's services, as the API makes it. On the standalone server (SQLite): three",
        "other clients, each sending one request after another (reads of the organization, `/readyz`, creates of folders",
        "elsewhere in it) while the owner applies 10,000 folders, beside the same alone (SQLite has one writer: a create",
        "waits for the apply)."
      ],
      comparisons,
      figures
    )
  } finally {
    await postgres.stop()
    dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }))
  }
}
