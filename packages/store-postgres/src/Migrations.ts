/**
 * The PostgreSQL schema, as versioned migrations. A migration is frozen once released: later changes come as new
 * migrations, never as edits. Text columns order by bytes (`COLLATE "C"`, the order every store shares); unique
 * keys over a parent treat null parents as equal (`NULLS NOT DISTINCT`), and each has a twin index ending in `uid`
 * that lists in that key's order read without sorting; constraints are named as
 * `Dialect.constraintName` names them. `test/schema.test.ts` checks the schema against the core's table descriptors.
 */
import { Migrations } from "@arbor/store-sql"
import { migrations } from "./migrations/index.js"

/**
 * The migrations, by `<id>_<name>`: the numbered files of `migrations/`, each frozen once released. A new one is
 * written from the table descriptors by the schema test (`ARBOR_NEW_MIGRATION=<name>`, `MigrationFiles` in
 * `@arbor/store-sql`), which checks them against the descriptors.
 */
export { migrations }

/** The newest schema version this code knows. */
export const latestVersion = Migrations.latestVersion(migrations)
