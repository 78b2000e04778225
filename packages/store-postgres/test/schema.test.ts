/**
 * The PostgreSQL schema against the core's table descriptors, and its migrations: run once when several servers
 * start together, harmless when repeated, and refused when the database is newer than the code.
 */
import { Arbor } from "@arbor/core"
import { Refusal } from "@arbor/core/testing"
import { Ddl, Dialect } from "@arbor/store-sql"
import * as MigrationFiles from "@arbor/store-sql/MigrationFiles"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { join } from "node:path"
import { Migrations, PostgresDdl, PostgresStore } from "../src/index.js"
import { freshDatabase } from "./databases.js"

const sqlTypes = { text: "text", integer: "bigint", boolean: "boolean", json: "jsonb", position: "text" } as const

const open = (url: string) => PostgresStore.layer({ url: Redacted.make(url), maxConnections: 2 })

/** Where the adapter's migrations are, as numbered files. */
const migrationsFolder = join(import.meta.dirname, "..", "src", "migrations")

describe("PostgresStore", () => {
  it("the migrations are the numbered files of src/migrations, one after another, loaded by the index written from them", () => {
    assert.deepStrictEqual(MigrationFiles.problems(migrationsFolder), [])
    assert.deepStrictEqual(Object.keys(Migrations.migrations), MigrationFiles.ids(migrationsFolder))
  })

  it.live("the migrations build the schema the descriptors render: same columns, keys and indexes", () =>
    Effect.gen(function*() {
      const migrated = yield* PostgresDdl.catalog.pipe(
        Effect.provide(Layer.unwrapEffect(Effect.map(freshDatabase, open)))
      )
      const { beyond, statements } = Ddl.plan(PostgresDdl.renderer, Arbor.tables, migrated)
      // A descriptor's change without its migration fails here, naming the statements of the migration to add, which
      // ARBOR_NEW_MIGRATION=<name> writes as the next numbered file.
      assert.deepStrictEqual(statements, [], MigrationFiles.pending(migrationsFolder, statements))
      assert.deepStrictEqual(beyond.join("\n"), "", "what the migrations made that no descriptor declares")
      const rendered = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (const table of Arbor.tables) {
          for (const statement of Ddl.create(PostgresDdl.renderer, table)) yield* sql.unsafe(statement)
        }
        return yield* PostgresDdl.catalog
      }).pipe(
        Effect.provide(
          Layer.unwrapEffect(Effect.map(freshDatabase, (url) => PgClient.layer({ url: Redacted.make(url) })))
        )
      )
      assert.deepStrictEqual(Ddl.differences(rendered, migrated).join("\n"), "")
      // Each column as its descriptor types it, text in byte order.
      for (const table of Arbor.tables) {
        const columns = Object.fromEntries(migrated[table.name]!.columns)
        for (const [name, column] of Object.entries(table.columns)) {
          const found = columns[Dialect.snake(name)] ?? ""
          assert.isTrue(found.startsWith(sqlTypes[column.type]), `${table.name}.${name}: ${found}`)
          assert.strictEqual(found.includes("NOT NULL"), column.nullable !== true, `${table.name}.${name}`)
          if (column.type === "text") assert.include(found, `COLLATE "C"`, `${table.name}.${name}`)
        }
      }
    }))

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
      const refused = yield* Refusal.of(Effect.scoped(Layer.build(open(url))))
      assert.strictEqual(refused._tag, "SchemaTooNew")
      assert.include(refused.message, `schema version ${Migrations.latestVersion + 1}`)
    }))

  it.live("an unreachable database is a clear failure that names it without its password", () =>
    Effect.gen(function*() {
      const failed = yield* Refusal.of(
        Effect.scoped(Layer.build(open("postgres://arbor:hunter2@127.0.0.1:1/nowhere")))
      )
      assert.strictEqual(failed._tag, "OpenFailed")
      assert.include(failed.message, "Cannot open the database 127.0.0.1:1/nowhere")
      assert.notInclude(failed.message, "hunter2")
    }))
})
