/** @arbor/store-sql: the storage port as portable SQL over `@effect/sql`, completed by a database's `Dialect`. */
export * as Ddl from "./Ddl.js"
export * as Dialect from "./Dialect.js"
export * as Migrations from "./Migrations.js"
export * as SqlStore from "./SqlStore.js"
