/**
 * Concurrent writers on PostgreSQL through two engines, each with its own pool (`ConcurrencySuite`), and what a write
 * that keeps losing its race to concurrent ones is told.
 */
import { Repository, Store } from "@arbor/core"
import { ConcurrencySuite, Refusal } from "@arbor/core/testing"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { PostgresStore } from "../src/index.js"
import { freshDatabase, freshStore } from "./databases.js"

ConcurrencySuite.suite(
  "postgres, two pools",
  Effect.map(freshDatabase, (url) => PostgresStore.layer({ url: Redacted.make(url), maxConnections: 4 }))
)

describe("PostgresStore, a race lost again and again", () => {
  it.live("is retried for a while, then answered UNAVAILABLE (retry shortly), never INTERNAL", () =>
    Effect.gen(function*() {
      const store = yield* Store.Store
      const sql = yield* SqlClient.SqlClient
      let tries = 0
      // A transaction that loses every time, as one would to writers that always commit first: SQLSTATE 40001.
      const losing = store.transaction(Effect.suspend(() => {
        tries++
        return sql.unsafe(`DO $$ BEGIN RAISE EXCEPTION 'lost' USING ERRCODE = '40001'; END $$`)
      }))
      const refused = yield* Refusal.tagged(Repository.orInternal(losing), "Unavailable")
      assert.isAbove(tries, 1, "retried")
      assert.strictEqual(refused.reason, "STORE_UNAVAILABLE")
      assert.match(refused.description, /concurrent writes kept conflicting with this one; retry shortly/)
    }).pipe(Effect.provide(freshStore(2))))
})
