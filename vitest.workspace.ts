/** The test projects: every package with a `vitest.config.ts`. */
export default ["packages/*/vitest.config.ts"]
