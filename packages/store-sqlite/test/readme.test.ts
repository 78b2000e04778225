import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

describe("README", () => {
  it("quotes the SQLite embedding example verbatim, and it runs", async () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const example = readFileSync(new URL("examples/embed-sqlite.ts", import.meta.url), "utf8")
    assert.include(readme, "```ts\n" + example + "```")
    process.env.ARBOR_SQLITE_FILE = join(mkdtempSync(join(tmpdir(), "arbor-embed-")), "arbor.db")
    process.env.ARBOR_PAGE_TOKEN_KEY = "ab".repeat(32)
    const { organizations } = await import("./examples/embed-sqlite.js")
    assert.deepStrictEqual(await organizations, ["acme"])
  })
})
