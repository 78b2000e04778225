/** @arbor/store-sqlite: the SQLite storage adapter for Arbor. */
export * as Migrations from "./Migrations.js"
export * as SqliteDdl from "./SqliteDdl.js"
export * as SqliteDialect from "./SqliteDialect.js"
export * as SqliteStore from "./SqliteStore.js"
