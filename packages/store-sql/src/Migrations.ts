/**
 * Running an adapter's migrations: the table that records them, the refusal of a database newer than the code, and
 * the errors of opening a database, the same for every SQL store.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/** The database was written by a newer version of Arbor than this one. */
export class SchemaTooNew extends Schema.TaggedError<SchemaTooNew>()("SchemaTooNew", {
  database: Schema.String,
  found: Schema.Number,
  supported: Schema.Number
}) {
  override get message(): string {
    return `The database ${this.database} has schema version ${this.found}, newer than this version of Arbor ` +
      `supports (${this.supported}). Run a newer Arbor, or restore a backup made by this version.`
  }
}

/** The database could not be opened, reached or migrated. */
export class OpenFailed extends Schema.TaggedError<OpenFailed>()("OpenFailed", {
  database: Schema.String,
  cause: Schema.Defect
}) {
  override get message(): string {
    return `Cannot open the database ${this.database}: ${reasons(this.cause).join(": ")}`
  }
}

/** The messages along a chain of causes, outermost first. */
const reasons = (cause: unknown): Array<string> => {
  const out: Array<string> = []
  for (let c: unknown = cause; c !== undefined && c !== null && out.length < 5; c = (c as { cause?: unknown }).cause) {
    out.push(c instanceof Error ? c.message : String(c))
  }
  return out
}

/** The name of the table that records applied migrations. */
export const table = "arbor_migrations"

/** An adapter's migrations, by `<id>_<name>`; each frozen once released. */
export type Migrations = Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>

/** A migration made of DDL statements, run in order. */
export const statements = (sqls: ReadonlyArray<string>): Effect.Effect<void, unknown, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(sqls, (s) => sql.unsafe(s), { discard: true }))

/** The newest schema version `migrations` reach. */
export const latestVersion = (migrations: Migrations): number =>
  Math.max(...Object.keys(migrations).map((k) => Number.parseInt(k, 10)))

/**
 * Applies the migrations `database` lacks, after refusing a database that has newer ones. The migrations table is
 * made first, as `@effect/sql`'s migrator makes it (its own probe for a missing table fails, which would abort an
 * enclosing PostgreSQL transaction).
 */
export const run = (
  database: string,
  migrations: Migrations
): Effect.Effect<void, SchemaTooNew | OpenFailed, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.onDialectOrElse({
      pg: () =>
        sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
  migration_id integer PRIMARY KEY,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  name text NOT NULL
)`,
      orElse: () =>
        sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
  migration_id integer PRIMARY KEY NOT NULL,
  created_at datetime NOT NULL DEFAULT current_timestamp,
  name VARCHAR(255) NOT NULL
)`
    })
    const [row] = yield* sql<{ v: number | string | null }>`SELECT max(migration_id) AS v FROM ${sql(table)}`
    const found = Number(row?.v ?? 0)
    const supported = latestVersion(migrations)
    if (found > supported) return yield* new SchemaTooNew({ database, found, supported })
    yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })
  }).pipe(
    Effect.catchIf(
      (e) => !Predicate.isTagged(e, "SchemaTooNew"),
      (cause) => Effect.fail(new OpenFailed({ database, cause }))
    )
  )
