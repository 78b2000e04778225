/** @arbor/guards: Arbor's decisions guarding other HTTP servers' routes. */
export * as Express from "./Express.js"
export * as Guard from "./Guard.js"
export * as Hono from "./Hono.js"
export * as HttpApiGuard from "./HttpApiGuard.js"
