/**
 * The SQLite store: a file (or `:memory:`) opened with WAL, `synchronous=NORMAL`, foreign keys and a busy
 * timeout, migrated to the current schema at start, serving the storage port.
 */
import { Store } from "@arbor/core"
import { SqlStore } from "@arbor/store-sql"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { latestVersion, migrations } from "./Migrations.js"
import { dialect } from "./SqliteDialect.js"

/** Where the database lives. */
export interface SqliteStoreConfig {
  /** A file path, or `:memory:` for a private in-memory database. */
  readonly filename: string
}

/** The database was written by a newer version of Arbor than this one. */
export class SchemaTooNew extends Schema.TaggedError<SchemaTooNew>()("SchemaTooNew", {
  filename: Schema.String,
  found: Schema.Number,
  supported: Schema.Number
}) {
  override get message(): string {
    return `The database ${this.filename} has schema version ${this.found}, newer than this version of Arbor ` +
      `supports (${this.supported}). Run a newer Arbor, or restore a backup made by this version.`
  }
}

/** The database could not be opened or migrated. */
export class OpenFailed extends Schema.TaggedError<OpenFailed>()("OpenFailed", {
  filename: Schema.String,
  cause: Schema.Defect
}) {
  override get message(): string {
    return `Cannot open the database ${this.filename}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

/** The name of the table that records applied migrations. */
export const migrationsTable = "arbor_migrations"

const migrate = (filename: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`PRAGMA foreign_keys = ON`
    yield* sql`PRAGMA synchronous = NORMAL`
    yield* sql`PRAGMA busy_timeout = 5000`
    const tables = yield* sql<
      { name: string }
    >`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ${migrationsTable}`
    if (tables.length > 0) {
      const [row] = yield* sql<{ v: number | null }>`SELECT max(migration_id) AS v FROM ${sql(migrationsTable)}`
      const found = Number(row?.v ?? 0)
      if (found > latestVersion) return yield* new SchemaTooNew({ filename, found, supported: latestVersion })
    }
    yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: migrationsTable })
  }).pipe(
    Effect.catchIf(
      (e) => !Predicate.isTagged(e, "SchemaTooNew"),
      (cause) => Effect.fail(new OpenFailed({ filename, cause }))
    )
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
          Layer.fail(new OpenFailed({ filename: config.filename, cause: Cause.squash(cause) }))
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
