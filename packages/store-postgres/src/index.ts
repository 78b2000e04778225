/** @arbor/store-postgres: the PostgreSQL storage adapter for Arbor. */
export * as Migrations from "./Migrations.js"
export * as PostgresDdl from "./PostgresDdl.js"
export * as PostgresDialect from "./PostgresDialect.js"
export * as PostgresStore from "./PostgresStore.js"
