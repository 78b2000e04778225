import { TokenIssuer, Uid } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Checks that the README quotes the example verbatim, and gives it a fresh database and a page-token key. */
const quotedAndConfigured = (example: string) => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
  assert.include(readme, "```ts\n" + readFileSync(new URL(`examples/${example}`, import.meta.url), "utf8") + "```")
  process.env.ARBOR_SQLITE_FILE = join(mkdtempSync(join(tmpdir(), "arbor-embed-")), "arbor.db")
  process.env.ARBOR_PAGE_TOKEN_KEY = "ab".repeat(32)
}

describe("README", () => {
  it("quotes the SQLite embedding example verbatim, and it runs", async () => {
    quotedAndConfigured("embed-sqlite.ts")
    const { organizations } = await import("./examples/embed-sqlite.js")
    assert.deepStrictEqual(await organizations, ["acme"])
  })
})

describe("README, the token exchange", () => {
  it("is quoted verbatim, and its tokens verify after a restart", async () => {
    quotedAndConfigured("embed-sts.ts")
    const { engine } = await import("./examples/embed-sts.js")
    const identity = Uid.unsafeMake(`${"a".repeat(40)}/${"b".repeat(16)}`)
    // Each run builds the engine afresh, as a restarted process would.
    const minted = await Effect.runPromise(
      Effect.flatMap(
        TokenIssuer.TokenIssuer,
        (issuer) => issuer.mint(identity, { iss: "https://ci.invalid", sub: "job" })
      )
        .pipe(Effect.provide(engine))
    )
    const verified = await Effect.runPromise(
      Effect.flatMap(TokenIssuer.TokenIssuer, (issuer) => issuer.verify(minted.token)).pipe(Effect.provide(engine))
    )
    assert.strictEqual(verified.identity, identity)
  })
})
