/** @arbor/core/testing: the suites every storage adapter runs against itself, and samples for tests. */
export * as ConcurrencySuite from "./ConcurrencySuite.js"
export * as CrashSuite from "./CrashSuite.js"
export * as ModelSuite from "./ModelSuite.js"
export * as Samples from "./Samples.js"
export * as StoreContract from "./StoreContract.js"
