/**
 * Durability and concurrency on a real database file: a writer killed with SIGKILL at random points loses no
 * acknowledged write, leaves no write without its change-log entry nor an entry without its write, and an intact
 * database; concurrent writers on two connections keep every invariant.
 */
import { Arbor, Secrets } from "@arbor/core"
import { ConcurrencySuite, CrashSuite } from "@arbor/core/testing"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqliteStore } from "../src/index.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))

const engineOn = (filename: string) =>
  Arbor.layer.pipe(Layer.provideMerge(SqliteStore.layer({ filename })), Layer.provide(Secrets.layerEphemeral))

describe("durability", () => {
  it.live(
    "a writer killed with SIGKILL at random points loses no acknowledged write, and keeps the log whole",
    () =>
      Effect.gen(function*() {
        const filename = join(mkdtempSync(join(tmpdir(), "arbor-crash-")), "arbor.db")
        const created = new Map<string, string>()
        let total = 0
        for (let round = 0; round < 6; round++) {
          const acknowledged = yield* CrashSuite.crashAfter(
            join(packageDir, "node_modules/.bin/vite-node"),
            [
              "--config",
              join(packageDir, "vitest.config.ts"),
              join(packageDir, "test/crash/writer.ts"),
              filename,
              `${round}`
            ],
            packageDir,
            5 + Math.floor(Math.random() * 150),
            Math.floor(Math.random() * 15)
          )
          total += acknowledged.length
          for (const [, uid, name] of acknowledged) created.set(uid!, name!)
          yield* Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const [check] = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
            assert.strictEqual(check?.integrity_check, "ok", `round ${round}`)
            yield* CrashSuite.checkWhole(created, round)
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
