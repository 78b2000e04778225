/**
 * The SQLite store: a file (or `:memory:`) opened with WAL, `synchronous=NORMAL`, foreign keys and a busy
 * timeout, migrated to the current schema at start, serving the storage port. A file also gets a second,
 * read-only connection for reads outside transactions (WAL lets it read beside the writer), where better-sqlite3
 * runs them directly, and a third in a worker thread that checkpoints the WAL (`checkpointer`).
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
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
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

/** How often the checkpointer copies the WAL's committed pages into the database file. */
const checkpointMillis = 250

/** The checkpointer's program: a connection that checkpoints every `every` ms until told to stop. */
const checkpointerSource = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.module)
const db = new Database(workerData.filename)
db.pragma("busy_timeout = 1000")
const checkpoint = () => { try { db.pragma("wal_checkpoint(PASSIVE)") } catch {} }
const timer = setInterval(checkpoint, workerData.every)
parentPort.once("message", () => { clearInterval(timer); checkpoint(); db.close(); parentPort.postMessage("stopped") })
`

/**
 * The WAL's checkpoints, off the thread that answers requests: a connection in a worker thread copies the committed
 * pages into the database file every `checkpointMillis` (PASSIVE: it neither waits for nor holds up a reader or the
 * writer), and the writer's own automatic checkpoints are turned off. Otherwise the commit that grows the WAL past
 * 1,000 pages copies it all itself, on the server's thread: about 0.1 s after a 10,000-change apply. True when it
 * runs; false (the writer checkpointing itself, as before) where better-sqlite3's own file cannot be named for the
 * worker, or for a database in memory.
 */
const checkpointer = (filename: string) =>
  Effect.gen(function*() {
    if (filename === ":memory:" || filename === "") return false
    // The module as this process loaded it (an import, perhaps from a bundle): its file, from CommonJS's cache.
    const module = Object.keys(createRequire(import.meta.url).cache).find((file) =>
      /[\\/]better-sqlite3[\\/]lib[\\/]index\.js$/.test(file)
    )
    if (module === undefined) return false
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const worker = new Worker(checkpointerSource, {
          eval: true,
          workerData: { module, filename, every: checkpointMillis }
        })
        worker.unref()
        return worker
      }),
      // Told to stop, it checkpoints once more and closes its connection; ended in any case within 5 s.
      (worker) =>
        Effect.promise(async () => {
          const stopped = new Promise<void>((resolve) => {
            for (const event of ["message", "error", "exit"]) worker.once(event, () => resolve())
          })
          worker.postMessage("stop")
          await Promise.race([stopped, new Promise<void>((resolve) => setTimeout(resolve, 5_000).unref())])
          await worker.terminate()
        })
    )
    return true
  })

/** The SQLite store at `config.filename`, migrated; also provides the `SqlClient` for backups and benchmarks. */
export const layer = (
  config: SqliteStoreConfig
): Layer.Layer<
  Store.Store | SqlStore.SqlStore | SqlClient.SqlClient | SqliteClient.SqliteClient,
  SchemaTooNew | OpenFailed
> =>
  Layer.scopedContext(
    migrate(config.filename).pipe(
      Effect.zipRight(checkpointer(config.filename)),
      Effect.tap((offThread) =>
        offThread
          ? Effect.flatMap(SqlClient.SqlClient, (sql) => sql`PRAGMA wal_autocheckpoint = 0`).pipe(
            Effect.mapError((cause) => new OpenFailed({ database: config.filename, cause }))
          )
          : Effect.void
      ),
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
