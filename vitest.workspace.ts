/** The test projects: one per package, each with its own `vitest.config.ts`. */
export default ["packages/*"]
