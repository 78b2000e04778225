import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"

describe("README", () => {
  it("quotes the embedding example verbatim", () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const example = readFileSync(new URL("examples/embed.ts", import.meta.url), "utf8")
    assert.include(readme, "```ts\n" + example + "```")
  })

  it("quotes the test kit's example suite verbatim (it runs as a test of this package)", () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const example = readFileSync(new URL("examples/testKit.test.ts", import.meta.url), "utf8")
    assert.include(readme, "```ts\n" + example + "```")
  })

  it("the embedding example runs", async () => {
    const { names } = await import("./examples/embed.js")
    assert.deepStrictEqual(await names, ["platform"])
  })
})
