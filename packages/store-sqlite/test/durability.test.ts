/**
 * Durability and concurrency on a real database file: a writer killed with SIGKILL at random points loses no
 * acknowledged write, leaves no write without its change-log entry nor an entry without its write, and an intact
 * database; concurrent writers on two connections keep every invariant.
 */
import { Arbor, Events, Group, Groups, Principal, Secrets, Store } from "@arbor/core"
import { ConcurrencySuite } from "@arbor/core/testing"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqliteStore } from "../src/index.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))

const engineOn = (filename: string) =>
  Arbor.layer.pipe(Layer.provideMerge(SqliteStore.layer({ filename })), Layer.provide(Secrets.layerEphemeral))

interface Round {
  readonly acknowledged: ReadonlyArray<ReadonlyArray<string>>
}

/** Runs the writer on `filename` until it has acknowledged `writes` writes (plus a little), then SIGKILLs it. */
const crashAfter = (filename: string, round: number, writes: number, extraMillis: number) =>
  Effect.async<Round, Error>((resume) => {
    const child = spawn(
      join(packageDir, "node_modules/.bin/vite-node"),
      [
        "--config",
        join(packageDir, "vitest.config.ts"),
        join(packageDir, "test/crash/writer.ts"),
        filename,
        String(round)
      ],
      { cwd: packageDir, stdio: ["ignore", "pipe", "pipe"] }
    )
    const acknowledged: Array<ReadonlyArray<string>> = []
    let buffer = ""
    let stderr = ""
    let killing = false
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.stdout.on("data", (chunk) => {
      buffer += chunk
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines) {
        if (line.startsWith("ACK ")) acknowledged.push(line.split(" ").slice(1))
      }
      if (!killing && acknowledged.length >= writes) {
        killing = true
        setTimeout(() => child.kill("SIGKILL"), extraMillis)
      }
    })
    child.on("exit", (_, signal) => {
      if (signal === "SIGKILL") resume(Effect.succeed({ acknowledged }))
      else resume(Effect.fail(new Error(`writer exited on its own: ${stderr}`)))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("durability", () => {
  it.live(
    "a writer killed with SIGKILL at random points loses no acknowledged write, and keeps the log whole",
    () =>
      Effect.gen(function*() {
        const filename = join(mkdtempSync(join(tmpdir(), "arbor-crash-")), "arbor.db")
        const created = new Map<string, string>()
        let total = 0
        for (let round = 0; round < 6; round++) {
          const { acknowledged } = yield* crashAfter(
            filename,
            round,
            5 + Math.floor(Math.random() * 150),
            Math.floor(Math.random() * 15)
          )
          total += acknowledged.length
          for (const [, uid, name] of acknowledged) created.set(uid!, name!)

          yield* Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const [check] = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
            assert.strictEqual(check?.integrity_check, "ok", `round ${round}`)
            const groups = yield* Groups.Groups
            for (const [uid, name] of created) {
              const group = yield* groups.get(Principal.system, uid)
              // The last acknowledged name, or the rename the writer may have committed but not yet acknowledged.
              const pending = /^(r\d+)-g(\d+)$/.exec(name)
              const later = pending !== null && Number(pending[2]) % 3 === 0
                ? [`${pending[1]}-renamed-${pending[2]}`]
                : []
              assert.include([name, ...later], group.name, `round ${round}: acknowledged write to ${uid} lost`)
            }
            // Every write has its change-log entry and every entry its write: each group's last entry shows the group
            // as it is, and each entry's group is there.
            const log = yield* (yield* Events.Events).after(undefined, 1_000_000)
            const stored = yield* (yield* Store.Store).find(Group.table, {
              order: [{ column: "uid", direction: "asc" }]
            })
            const last = new Map(log.map((entry) => [entry.subject, entry] as const))
            for (const row of stored) {
              assert.strictEqual(last.get(row.uid as never)?.body.name, row.name, `round ${round}: ${row.uid}'s entry`)
            }
            const kept = new Set(stored.map((row) => row.uid))
            for (const entry of log.filter((e) => e.kind === "group")) {
              assert.isTrue(kept.has(entry.subject), `round ${round}: an entry without its write, ${entry.subject}`)
            }
          }).pipe(Effect.provide(engineOn(filename)))
        }
        assert.isAbove(total, 30)
      }),
    { timeout: 180_000 }
  )
})

ConcurrencySuite.suite(
  "sqlite file, two connections",
  Effect.sync(() => SqliteStore.layer({ filename: join(mkdtempSync(join(tmpdir(), "arbor-concurrent-")), "arbor.db") }))
)
