/** @arbor/store-sqlite: the SQLite storage adapter for Arbor. */
export * as Dialect from "./Dialect.js"
export * as Migrations from "./Migrations.js"
export * as SqliteStore from "./SqliteStore.js"
export * as SqlStore from "./SqlStore.js"
