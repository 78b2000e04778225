import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { config } from "../src/ServerConfig.js"

const read = (env: Record<string, string>) =>
  Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("ServerConfig", () => {
  it.effect("PostgreSQL needs its URL; the pool has a default; unknown stores are refused", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(read({ ARBOR_STORE: "postgres" }))
      assert.include(String(missing), "ARBOR_DATABASE_URL")
      const url = "postgres://arbor:secret@db.invalid:5432/arbor"
      const postgres = yield* read({ ARBOR_STORE: "postgres", ARBOR_DATABASE_URL: url })
      assert.strictEqual(postgres.store, "postgres")
      assert.strictEqual(Redacted.value(postgres.databaseUrl!), url)
      assert.strictEqual(postgres.databasePool, 10)
      assert.notInclude(String(postgres.databaseUrl), "secret")
      assert.include(String(yield* Effect.flip(read({ ARBOR_STORE: "mysql" }))), "ARBOR_STORE")
      assert.strictEqual((yield* read({})).store, "sqlite")
    }))
})
