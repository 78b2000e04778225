/**
 * The PostgreSQL store: a pool of connections to one database, migrated to the current schema at start (under an
 * advisory lock, so several servers starting together migrate once), serving the storage port. Every transaction is
 * serializable and is retried whole when it loses to a concurrent one.
 */
import { Store } from "@arbor/core"
import { Migrations, SqlStore } from "@arbor/store-sql"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { migrations } from "./Migrations.js"
import { dialect } from "./PostgresDialect.js"

/** Where the database is, and how many connections a server keeps to it. */
export interface PostgresStoreConfig {
  /** `postgres://user:password@host:port/database`. */
  readonly url: Redacted.Redacted
  /** Connections in the pool (default 10). */
  readonly maxConnections?: number | undefined
}

/** The database was written by a newer version of Arbor than this one. */
export const SchemaTooNew = Migrations.SchemaTooNew
export type SchemaTooNew = Migrations.SchemaTooNew

/** The database could not be reached or migrated. */
export const OpenFailed = Migrations.OpenFailed
export type OpenFailed = Migrations.OpenFailed

/** The advisory lock that migrations hold: `arbor` in ASCII. */
const migrationLock = 0x6172626f72

/** The database a URL names, without its credentials, for messages. */
const databaseName = (url: Redacted.Redacted): string => {
  try {
    const parsed = new URL(Redacted.value(url))
    return `${parsed.host}${parsed.pathname}`
  } catch {
    return "(an invalid URL)"
  }
}

/** Migrates inside one transaction that first takes the advisory lock, so concurrent starts migrate in turn. */
const migrate = (database: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.zipRight(sql`SELECT pg_advisory_xact_lock(${migrationLock})`, Migrations.run(database, migrations))
    ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(new OpenFailed({ database, cause })))))

/** The PostgreSQL store at `config.url`, migrated; also provides the `SqlClient` for backups and benchmarks. */
export const layer = (
  config: PostgresStoreConfig
): Layer.Layer<
  Store.Store | SqlStore.SqlStore | SqlClient.SqlClient | PgClient.PgClient,
  SchemaTooNew | OpenFailed
> => {
  const database = databaseName(config.url)
  return Layer.effectContext(
    Effect.zipRight(migrate(database), SqlStore.make(dialect)).pipe(
      Effect.map((store) => Context.make(Store.Store, store).pipe(Context.add(SqlStore.SqlStore, store)))
    )
  ).pipe(
    Layer.provideMerge(
      PgClient.layer({ url: config.url, maxConnections: config.maxConnections ?? 10, applicationName: "arbor" }).pipe(
        Layer.catchAllCause((cause) => Layer.fail(new OpenFailed({ database, cause: Cause.squash(cause) })))
      )
    )
  )
}

/** The PostgreSQL store named by `ARBOR_DATABASE_URL`, with `ARBOR_DATABASE_POOL` connections (default 10). */
export const layerConfig = (
  config: Config.Config<PostgresStoreConfig> = Config.all({
    url: Config.redacted("ARBOR_DATABASE_URL"),
    maxConnections: Config.integer("ARBOR_DATABASE_POOL").pipe(Config.withDefault(10))
  })
) => Layer.unwrapEffect(Effect.map(config, layer))
