/**
 * The SQLite store: a file (or `:memory:`) opened with WAL, `synchronous=NORMAL`, foreign keys and a busy
 * timeout, migrated to the current schema at start, serving the storage port. A file also gets a second,
 * read-only connection for reads outside transactions (WAL lets it read beside the writer), where better-sqlite3
 * runs them directly.
 */
import { Store } from "@arbor/core"
import { Migrations, SqlStore } from "@arbor/store-sql"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import Database from "better-sqlite3"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { migrations } from "./Migrations.js"
import { dialect } from "./SqliteDialect.js"

/** Where the database lives. */
export interface SqliteStoreConfig {
  /** A file path, or `:memory:` for a private in-memory database. */
  readonly filename: string
}

/** The database was written by a newer version of Arbor than this one. */
export const SchemaTooNew = Migrations.SchemaTooNew
export type SchemaTooNew = Migrations.SchemaTooNew

/** The database could not be opened or migrated. */
export const OpenFailed = Migrations.OpenFailed
export type OpenFailed = Migrations.OpenFailed

const migrate = (filename: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`PRAGMA foreign_keys = ON`
    yield* sql`PRAGMA synchronous = NORMAL`
    yield* sql`PRAGMA busy_timeout = 5000`
  }).pipe(
    Effect.mapError((cause) => new OpenFailed({ database: filename, cause })),
    Effect.zipRight(Migrations.run(filename, migrations))
  )

/** How many prepared statements the reader keeps (the store's statements differ only in their conditions). */
const readerStatements = 500

/**
 * The read-only connection of a database file, closed with the scope, as the store's reader and its change marker
 * (the connection's `PRAGMA data_version`, which moves whenever another connection, the writer included, commits);
 * none for an in-memory database.
 */
const openReader = (filename: string) =>
  filename === ":memory:" || filename === ""
    ? Effect.succeed({})
    : Effect.acquireRelease(
      Effect.try({
        try: () => {
          const db = new Database(filename, { readonly: true, fileMustExist: true })
          db.pragma("busy_timeout = 5000")
          return db
        },
        catch: (cause) => new OpenFailed({ database: filename, cause })
      }),
      (db) => Effect.sync(() => db.close())
    ).pipe(Effect.map((db): SqlStore.Options => {
      const prepared = new Map<string, Database.Statement>()
      const dataVersion = db.prepare("PRAGMA data_version").pluck()
      const reader: SqlStore.Reader = (sql, params) => {
        let statement = prepared.get(sql)
        if (statement === undefined) {
          if (prepared.size >= readerStatements) prepared.clear()
          statement = db.prepare(sql)
          prepared.set(sql, statement)
        }
        return statement.all(...params) as ReadonlyArray<Record<string, unknown>>
      }
      return { reader, changeMarker: () => dataVersion.get() }
    }))

/** The SQLite store at `config.filename`, migrated; also provides the `SqlClient` for backups and benchmarks. */
export const layer = (
  config: SqliteStoreConfig
): Layer.Layer<
  Store.Store | SqlStore.SqlStore | SqlClient.SqlClient | SqliteClient.SqliteClient,
  SchemaTooNew | OpenFailed
> =>
  Layer.scopedContext(
    migrate(config.filename).pipe(
      Effect.zipRight(openReader(config.filename)),
      Effect.flatMap((options) => SqlStore.make(dialect, options)),
      Effect.map((store) => Context.make(Store.Store, store).pipe(Context.add(SqlStore.SqlStore, store)))
    )
  ).pipe(
    Layer.provideMerge(
      SqliteClient.layer({ filename: config.filename }).pipe(
        Layer.catchAllCause((cause) =>
          Layer.fail(new OpenFailed({ database: config.filename, cause: Cause.squash(cause) }))
        )
      )
    )
  )

/** The SQLite store at the file named by `ARBOR_SQLITE_FILE` (default `arbor.db`). */
export const layerConfig = (
  config: Config.Config<SqliteStoreConfig> = Config.all({
    filename: Config.string("ARBOR_SQLITE_FILE").pipe(Config.withDefault("arbor.db"))
  })
) => Layer.unwrapEffect(Effect.map(config, layer))
