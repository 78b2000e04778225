/** @arbor/core/testing: the suites every storage adapter runs against itself. */
export * as ConcurrencySuite from "./ConcurrencySuite.js"
export * as ModelSuite from "./ModelSuite.js"
export * as StoreContract from "./StoreContract.js"
