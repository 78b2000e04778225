/**
 * The SQLite store: a file (or `:memory:`) opened with WAL, `synchronous=NORMAL`, foreign keys and a busy
 * timeout, migrated to the current schema at start, serving the storage port.
 */
import { Store } from "@arbor/core"
import { Migrations, SqlStore } from "@arbor/store-sql"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
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

/** The SQLite store at `config.filename`, migrated; also provides the `SqlClient` for backups and benchmarks. */
export const layer = (
  config: SqliteStoreConfig
): Layer.Layer<
  Store.Store | SqlStore.SqlStore | SqlClient.SqlClient | SqliteClient.SqliteClient,
  SchemaTooNew | OpenFailed
> =>
  Layer.effectContext(
    Effect.zipRight(migrate(config.filename), SqlStore.make(dialect)).pipe(
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
