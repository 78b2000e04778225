/** @arbor/core/testing: the storage contract suite that every adapter runs against itself. */
export * as StoreContract from "./StoreContract.js"
