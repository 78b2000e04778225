/**
 * Durability on PostgreSQL: a process of four concurrent writers killed with SIGKILL at random points loses no
 * acknowledged write, and leaves no write without its change-log entry nor an entry without its write (the database
 * aborts the transactions the process had open).
 */
import { Arbor, Secrets } from "@arbor/core"
import { CrashSuite } from "@arbor/core/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { PostgresStore } from "../src/index.js"
import { freshDatabase } from "./databases.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))

const engineOn = (url: string) =>
  Arbor.layer.pipe(
    Layer.provideMerge(PostgresStore.layer({ url: Redacted.make(url), maxConnections: 2 })),
    Layer.provide(Secrets.layerEphemeral)
  )

describe("durability on PostgreSQL", () => {
  it.live(
    "concurrent writers killed with SIGKILL lose no acknowledged write, and keep the log whole",
    () =>
      Effect.gen(function*() {
        const url = yield* freshDatabase
        const created = new Map<string, string>()
        let total = 0
        for (let round = 0; round < 4; round++) {
          const acknowledged = yield* CrashSuite.crashAfter(
            join(packageDir, "node_modules/.bin/vite-node"),
            [
              "--config",
              join(packageDir, "vitest.config.ts"),
              join(packageDir, "test/crash/writer.ts"),
              url,
              `${round}`
            ],
            packageDir,
            20 + Math.floor(Math.random() * 150),
            Math.random() * 15
          )
          total += acknowledged.length
          for (const [, uid, name] of acknowledged) created.set(uid!, name!)
          yield* CrashSuite.checkWhole(created, round).pipe(Effect.provide(engineOn(url)))
        }
        assert.isAbove(total, 80)
      }),
    { timeout: 240_000 }
  )
})
