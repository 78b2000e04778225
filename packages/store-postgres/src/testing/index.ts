/** @arbor/store-postgres/testing: a real PostgreSQL server for test suites and benchmarks. */
export * as EmbeddedPostgres from "./EmbeddedPostgres.js"
