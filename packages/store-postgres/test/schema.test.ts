/**
 * The PostgreSQL schema against the core's table descriptors, and its migrations: run once when several servers
 * start together, harmless when repeated, and refused when the database is newer than the code.
 */
import { Arbor } from "@arbor/core"
import { Dialect } from "@arbor/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Migrations, PostgresStore } from "../src/index.js"
import { freshDatabase } from "./databases.js"

const sqlTypes = { text: "text", integer: "bigint", boolean: "boolean", json: "jsonb", position: "text" } as const

const open = (url: string) => PostgresStore.layer({ url: Redacted.make(url), maxConnections: 2 })

describe("PostgresStore", () => {
  it.live("the migrated schema has every column, unique key and index the core's tables declare", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const table of Arbor.tables) {
        const columns = yield* sql<{ name: string; type: string; nullable: string; collation: string | null }>`
          SELECT column_name AS name, data_type AS type, is_nullable AS nullable, collation_name AS collation
          FROM information_schema.columns WHERE table_name = ${table.name} ORDER BY ordinal_position`
        const expected = [
          ["uid", "text", "NO", "C"],
          ["parent", "text", "YES", "C"],
          ...Object.entries(table.columns).map(([name, c]) => [
            Dialect.snake(name),
            sqlTypes[c.type],
            c.nullable === true ? "YES" : "NO",
            c.type === "text" || c.type === "position" ? "C" : null
          ])
        ]
        assert.deepStrictEqual(columns.map((c) => [c.name, c.type, c.nullable, c.collation]), expected, table.name)
        const indexes = yield* sql<{ name: string; definition: string }>`
          SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE tablename = ${table.name}`
        const byName = new Map(indexes.map((i) => [i.name, i.definition]))
        assert.match(byName.get(Dialect.constraintName(table.name, ["uid"])) ?? "", /UNIQUE INDEX .* \(uid\)$/)
        for (const key of table.unique) {
          const definition = byName.get(Dialect.constraintName(table.name, key)) ?? ""
          assert.match(definition, /^CREATE UNIQUE INDEX/, `${table.name} unique ${key}`)
          if (key.includes("parent")) assert.match(definition, /NULLS NOT DISTINCT/, `${table.name} unique ${key}`)
        }
        for (const key of table.indexes) {
          const definition = byName.get(`${table.name}__${key.map(Dialect.snake).join("__")}`) ?? ""
          // PostgreSQL quotes a column named like a keyword (`"time"`).
          const columns = [...key.map(Dialect.snake), "uid"].map((c) => `"?${c}"?`).join(", ")
          assert.match(definition, new RegExp(`\\(${columns}\\)$`))
        }
      }
    }).pipe(Effect.provide(Layer.unwrapEffect(Effect.map(freshDatabase, open)))))

  it.live("servers starting together migrate once; a database newer than the code is refused", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const started = yield* Effect.all(
        Array.from({ length: 4 }, () => Effect.scoped(Layer.build(open(url)))),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(started.length, 4)
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const applied = yield* sql<{ id: number }>`SELECT migration_id AS id FROM arbor_migrations ORDER BY 1`
        assert.deepStrictEqual(
          applied.map((r) => r.id),
          Array.from({ length: Migrations.latestVersion }, (_, i) => i + 1)
        )
        yield* sql`INSERT INTO arbor_migrations (migration_id, name) VALUES (${Migrations.latestVersion + 1}, 'future')`
      }).pipe(Effect.provide(open(url)))
      const refused = yield* Effect.flip(Effect.scoped(Layer.build(open(url))))
      assert.strictEqual(refused._tag, "SchemaTooNew")
      assert.include(refused.message, `schema version ${Migrations.latestVersion + 1}`)
    }))

  it.live("an unreachable database is a clear failure that names it without its password", () =>
    Effect.gen(function*() {
      const failed = yield* Effect.flip(
        Effect.scoped(Layer.build(open("postgres://arbor:hunter2@127.0.0.1:1/nowhere")))
      )
      assert.strictEqual(failed._tag, "OpenFailed")
      assert.include(failed.message, "Cannot open the database 127.0.0.1:1/nowhere")
      assert.notInclude(failed.message, "hunter2")
    }))
})
