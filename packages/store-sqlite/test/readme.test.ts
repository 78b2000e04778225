import { TokenIssuer, Uid } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * Checks that the README quotes the example verbatim, and runs it as written: in a fresh directory, with no
 * setting in the environment.
 */
const quotedAndConfigured = (example: string) => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
  assert.include(readme, "```ts\n" + readFileSync(new URL(`examples/${example}`, import.meta.url), "utf8") + "```")
  for (const name of Object.keys(process.env)) if (name.startsWith("ARBOR_")) delete process.env[name]
  process.chdir(mkdtempSync(join(tmpdir(), "arbor-embed-")))
}

describe("README", () => {
  it("quotes the SQLite embedding example verbatim, and it runs", async () => {
    quotedAndConfigured("embed-sqlite.ts")
    const { organizations } = await import("./examples/embed-sqlite.js")
    assert.deepStrictEqual(await organizations, ["acme"])
    // The key file it made is the owner's alone.
    assert.strictEqual(statSync("arbor.key").mode & 0o777, 0o600)
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
