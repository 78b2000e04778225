import { Access, Arbor, Group, Groups, Identities, Principal, Role, RoleBindings, Secrets, Store } from "@arbor/core"
import { Refusal } from "@arbor/core/testing"
import { Ddl, Dialect } from "@arbor/store-sql"
import * as MigrationFiles from "@arbor/store-sql/MigrationFiles"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as TestClock from "effect/TestClock"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Migrations, SqliteDdl, SqliteStore } from "../src/index.js"

const sqlTypes = { text: "TEXT", integer: "INTEGER", boolean: "INTEGER", json: "TEXT", position: "TEXT" } as const

const freshFile = () => join(mkdtempSync(join(tmpdir(), "arbor-sqlite-")), "arbor.db")

/** Where the adapter's migrations are, as numbered files. */
const migrationsFolder = join(import.meta.dirname, "..", "src", "migrations")

describe("SqliteStore", () => {
  it("the migrations are the numbered files of src/migrations, one after another, loaded by the index written from them", () => {
    assert.deepStrictEqual(MigrationFiles.problems(migrationsFolder), [])
    assert.deepStrictEqual(Object.keys(Migrations.migrations), MigrationFiles.ids(migrationsFolder))
  })

  it("a gap in the migrations' numbers, or an index not written from the files, is named", () => {
    const folder = mkdtempSync(join(tmpdir(), "arbor-migrations-"))
    writeFileSync(join(folder, "0001_initial.ts"), "export const statements = []\n")
    writeFileSync(join(folder, "0003_later.ts"), "export const statements = []\n")
    writeFileSync(join(folder, "index.ts"), MigrationFiles.indexSource(["0001_initial"]))
    assert.deepStrictEqual(MigrationFiles.problems(folder), [
      "0003_later: migration 2 expected here",
      "index.ts is not the index of the numbered files: write it again"
    ])
  })

  it.effect("the migrations build the schema the descriptors render: same columns, keys and indexes", () =>
    Effect.gen(function*() {
      const migrated = yield* SqliteDdl.catalog.pipe(Effect.provide(SqliteStore.layer({ filename: ":memory:" })))
      const { beyond, statements } = Ddl.plan(SqliteDdl.renderer, Arbor.tables, migrated)
      // A descriptor's change without its migration fails here, naming the statements of the migration to add, which
      // ARBOR_NEW_MIGRATION=<name> writes as the next numbered file.
      assert.deepStrictEqual(statements, [], MigrationFiles.pending(migrationsFolder, statements))
      assert.deepStrictEqual(beyond.join("\n"), "", "what the migrations made that no descriptor declares")
      const rendered = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (const table of Arbor.tables) {
          for (const statement of Ddl.create(SqliteDdl.renderer, table)) yield* sql.unsafe(statement)
        }
        return yield* SqliteDdl.catalog
      }).pipe(Effect.provide(SqliteClient.layer({ filename: ":memory:" })))
      assert.deepStrictEqual(Ddl.differences(rendered, migrated).join("\n"), "")
      // Each column as its descriptor types it.
      for (const table of Arbor.tables) {
        const columns = Object.fromEntries(migrated[table.name]!.columns)
        for (const [name, column] of Object.entries(table.columns)) {
          assert.match(columns[Dialect.snake(name)] ?? "", new RegExp(`^${sqlTypes[column.type]}( NOT NULL)?`))
          assert.strictEqual(columns[Dialect.snake(name)]!.includes("NOT NULL"), column.nullable !== true, name)
        }
      }
    }))

  it.effect("migrating twice is harmless; a database newer than the code is refused with a clear message", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const open = SqliteStore.layer({ filename })
      const versions = (layer: typeof open) =>
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ id: number }>`SELECT migration_id AS id FROM arbor_migrations`
        ).pipe(
          Effect.provide(layer)
        )
      const every = Array.from({ length: Migrations.latestVersion }, (_, i) => i + 1)
      assert.deepStrictEqual((yield* versions(open)).map((r) => r.id), every)
      assert.deepStrictEqual((yield* versions(open)).map((r) => r.id), every)

      yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`INSERT INTO arbor_migrations (migration_id, name) VALUES (${
            Migrations.latestVersion + 1
          }, 'from_the_future')`
      ).pipe(
        Effect.provide(open)
      )
      const refused = yield* Refusal.of(Layer.build(open).pipe(Effect.scoped))
      assert.strictEqual(refused._tag, "SchemaTooNew")
      assert.include(
        refused.message,
        `schema version ${Migrations.latestVersion + 1}, newer than this version of Arbor supports`
      )
    }))

  it.effect("an unopenable file is a clear failure, not a crash", () =>
    Effect.gen(function*() {
      const error = yield* Refusal.of(
        Layer.build(SqliteStore.layer({ filename: "/nonexistent/dir/arbor.db" })).pipe(Effect.scoped)
      )
      assert.strictEqual(error._tag, "OpenFailed")
      assert.include(error.message, "/nonexistent/dir/arbor.db")
    }))

  it.live("a transaction that loses a race with another connection is retried, not reported", () => {
    const filename = freshFile()
    return Effect.gen(function*() {
      const store = yield* Store.Store
      const group = (n: number) => ({
        uid: n.toString(16).padStart(40, "0"),
        parent: null,
        name: `g${n}`,
        description: "",
        verified: false,
        createTime: 0,
        updateTime: 0
      })
      const other = new Database(filename)
      other.pragma("busy_timeout = 5000")
      let attempts = 0
      // Read (pinning a snapshot), let another connection commit, then write: SQLITE_BUSY_SNAPSHOT the first time.
      yield* store.transaction(Effect.gen(function*() {
        attempts++
        yield* store.count(Group.table, {})
        if (attempts === 1) {
          other.prepare(
            "INSERT INTO groups (uid, parent, name, description, verified, create_time, update_time) VALUES (?, NULL, 'other', '', 0, 0, 0)"
          )
            .run("f".repeat(40))
        }
        yield* store.insert(Group.table, group(1))
      }))
      other.close()
      assert.strictEqual(attempts, 2)
      assert.strictEqual(yield* store.count(Group.table, {}), 2)
    }).pipe(Effect.provide(SqliteStore.layer({ filename })))
  })

  it.live("a race lost inside a nested transaction retries the whole outermost one, never the savepoint alone", () => {
    const filename = freshFile()
    return Effect.gen(function*() {
      const store = yield* Store.Store
      const other = new Database(filename)
      other.pragma("busy_timeout = 5000")
      let outer = 0
      let inner = 0
      yield* store.transaction(Effect.gen(function*() {
        outer++
        yield* store.count(Group.table, {})
        if (outer === 1) {
          other.prepare(
            "INSERT INTO groups (uid, parent, name, description, verified, create_time, update_time) VALUES (?, NULL, 'other', '', 0, 0, 0)"
          )
            .run("f".repeat(40))
        }
        yield* store.transaction(Effect.gen(function*() {
          inner++
          yield* store.insert(Group.table, {
            uid: "1".padStart(40, "0"),
            parent: null,
            name: "g1",
            description: "",
            verified: false,
            createTime: 0,
            updateTime: 0
          })
        }))
      }))
      other.close()
      assert.deepStrictEqual({ outer, inner }, { outer: 2, inner: 2 })
      assert.strictEqual(yield* store.count(Group.table, {}), 2)
    }).pipe(Effect.provide(SqliteStore.layer({ filename })))
  })

  it.effect("runs with WAL, synchronous=NORMAL, foreign keys and a busy timeout", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pragma = (name: string) =>
        Effect.map(sql.unsafe<Record<string, unknown>>(`PRAGMA ${name}`), (rows) => Object.values(rows[0] ?? {})[0])
      assert.strictEqual(yield* pragma("journal_mode"), "wal")
      assert.strictEqual(yield* pragma("synchronous"), 1)
      assert.strictEqual(yield* pragma("foreign_keys"), 1)
      assert.strictEqual(yield* pragma("busy_timeout"), 5000)
    }).pipe(Effect.provide(SqliteStore.layer({ filename: freshFile() }))))

  it.live("two engines on one file (a server and an admin command): a binding revoked by one denies in the other", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const engine = () =>
        ManagedRuntime.make(
          Arbor.layer.pipe(Layer.provideMerge(SqliteStore.layer({ filename })), Layer.provide(Secrets.layerEphemeral))
        )
      const server = engine()
      const admin = engine()
      const setup = yield* Effect.promise(() =>
        server.runPromise(Effect.gen(function*() {
          const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "acme" })
          const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
            name: "reader",
            claimMatch: { issuer: "https://ci.example.com", subject: "reader" }
          })
          const binding = yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
            identityUid: identity.uid,
            roleUid: Role.builtInByName("viewer")!.uid
          })
          return { org: org.uid, reader: Principal.identity(identity.uid), binding: binding.uid }
        }))
      )
      const read = () =>
        Effect.promise(() =>
          server.runPromise(
            Effect.flatMap(Groups.Groups, (groups) => groups.get(setup.reader, setup.org)).pipe(
              Effect.as("allowed"),
              Effect.catchAll((e) => Effect.succeed(e._tag))
            )
          )
        )
      // A decision made warm, on the grants cached while the file is unchanged (its data_version), as embedders ask.
      const can = () =>
        Effect.promise(() =>
          server.runPromise(
            Effect.flatMap(Access.Access, (access) => access.can(setup.reader, "groups.list", setup.org))
          )
        )
      assert.strictEqual(yield* read(), "allowed")
      assert.strictEqual(yield* read(), "allowed")
      assert.isTrue(yield* can())
      assert.isTrue(yield* can())
      yield* Effect.promise(() =>
        admin.runPromise(Effect.flatMap(RoleBindings.RoleBindings, (b) => b.delete(Principal.system, setup.binding)))
      )
      assert.isFalse(yield* can())
      assert.strictEqual(yield* read(), "PermissionDenied")
      yield* Effect.promise(() => Promise.all([server.dispose(), admin.dispose()]))
    }))

  it.scoped("decisions at most a second stale: this engine's own revocation denies at once, another's within the bound", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const engine = (bounded: boolean) =>
        Layer.build(
          Arbor.layer.pipe(
            Layer.provide(bounded ? Store.layerBoundedStaleness("1 second") : Layer.empty),
            Layer.provideMerge(SqliteStore.layer({ filename })),
            Layer.provide(Secrets.layerEphemeral)
          )
        )
      const bounded = yield* engine(true)
      const other = yield* engine(false)
      const { bindings, org, readers } = yield* Effect.gen(function*() {
        const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "acme" })
        const readers = []
        const bindings = []
        for (const name of ["own", "other"]) {
          const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
            name,
            claimMatch: { issuer: "https://ci.example.com", subject: name }
          })
          readers.push(Principal.identity(identity.uid))
          bindings.push(
            (yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
              identityUid: identity.uid,
              roleUid: Role.builtInByName("viewer")!.uid
            })).uid
          )
        }
        return { org: org.uid, readers, bindings }
      }).pipe(Effect.provide(bounded))
      const can = (reader: Principal.Principal) =>
        Effect.flatMap(Access.Access, (access) => access.can(reader, "groups.list", org)).pipe(Effect.provide(bounded))
      const revoke = (binding: string, by: typeof bounded) =>
        Effect.flatMap(RoleBindings.RoleBindings, (b) => b.delete(Principal.system, binding)).pipe(Effect.provide(by))
      assert.isTrue(yield* can(readers[0]!))
      assert.isTrue(yield* can(readers[1]!))
      // Another engine's write (another server, another process) is seen once the bound has passed, and not before.
      yield* revoke(bindings[1]!, other)
      assert.isTrue(yield* can(readers[1]!), "within the bound the cached grants still answer")
      yield* TestClock.adjust("1 second")
      assert.isFalse(yield* can(readers[1]!))
      // A write through this engine moves its marker: its next decision sees it, whatever the clock says.
      assert.isTrue(yield* can(readers[0]!))
      yield* revoke(bindings[0]!, bounded)
      assert.isFalse(yield* can(readers[0]!))
    }))
})
