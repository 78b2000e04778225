/**
 * @arbor/core/testing: the suites every storage adapter runs against itself, samples for tests, and the fixtures and
 * decision helpers of embedders' own suites (`Fixture`).
 */
export * as ConcurrencySuite from "./ConcurrencySuite.js"
export * as CrashSuite from "./CrashSuite.js"
export * as Fixture from "./Fixture.js"
export * as ModelSuite from "./ModelSuite.js"
export * as Refusal from "./Refusal.js"
export * as Samples from "./Samples.js"
export * as StoreContract from "./StoreContract.js"
