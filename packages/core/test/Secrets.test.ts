import { Secrets } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

const pageTokenKey = Effect.map(Secrets.Secrets, (secrets) => Buffer.from(Redacted.value(secrets.pageTokenKey)))

describe("Secrets.layerFile", () => {
  it.effect("makes a key file on first use, readable only by its owner, and reads the same key afterwards", () =>
    Effect.gen(function*() {
      const path = join(mkdtempSync(join(tmpdir(), "arbor-secrets-")), "arbor.key")
      const first = yield* pageTokenKey.pipe(Effect.provide(Secrets.layerFile(path)))
      assert.strictEqual(first.length, 32)
      assert.strictEqual(statSync(path).mode & 0o777, 0o600)
      const again = yield* pageTokenKey.pipe(Effect.provide(Secrets.layerFile(path)))
      assert.isTrue(first.equals(again))
    }))

  it.effect("processes racing to make the file all get the first one's key", () =>
    Effect.gen(function*() {
      const path = join(mkdtempSync(join(tmpdir(), "arbor-secrets-")), "arbor.key")
      const keys = yield* Effect.all(
        Array.from({ length: 8 }, () => pageTokenKey.pipe(Effect.provide(Secrets.layerFile(path)))),
        { concurrency: "unbounded" }
      )
      for (const key of keys) assert.isTrue(key.equals(keys[0]!))
      assert.strictEqual(readdirSync(dirname(path)).length, 1, "no temporary file is left")
    }))

  it.effect("refuses a file that holds no key, naming it", () =>
    Effect.gen(function*() {
      const path = join(mkdtempSync(join(tmpdir(), "arbor-secrets-")), "short.key")
      writeFileSync(path, "abcd")
      const exit = yield* Effect.exit(pageTokenKey.pipe(Effect.provide(Secrets.layerFile(path))))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), `${path} must be at least 32 bytes`)
    }))
})

describe("Secrets.layerConfig", () => {
  const withEnv = (env: Record<string, string>) =>
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

  it.effect("without ARBOR_PAGE_TOKEN_KEY, says in one sentence which setting is missing and how to make one", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(pageTokenKey.pipe(Effect.provide(Secrets.layerConfig), withEnv({})))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(
        String(Exit.isFailure(exit) ? exit.cause : ""),
        `ARBOR_PAGE_TOKEN_KEY: "is not set: set it to a key of 32 bytes or more, written as hex or base64 (openssl rand -hex 32)"`
      )
    }))

  it.effect("reads the key, and names the setting when it is too short", () =>
    Effect.gen(function*() {
      const key = yield* pageTokenKey.pipe(
        Effect.provide(Secrets.layerConfig),
        withEnv({ ARBOR_PAGE_TOKEN_KEY: "ab".repeat(32) })
      )
      assert.strictEqual(key.toString("hex"), "ab".repeat(32))
      const exit = yield* Effect.exit(
        pageTokenKey.pipe(Effect.provide(Secrets.layerConfig), withEnv({ ARBOR_PAGE_TOKEN_KEY: "abcd" }))
      )
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), `ARBOR_PAGE_TOKEN_KEY: "must be at least 32 bytes`)
    }))
})
