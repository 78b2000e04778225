import { Refusal } from "@arbor/core/testing"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { config } from "../src/ServerConfig.js"

const read = (env: Record<string, string>) =>
  Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("ServerConfig", () => {
  it.effect("PostgreSQL needs its URL; the pool has a default; unknown stores are refused", () =>
    Effect.gen(function*() {
      const missing = yield* Refusal.of(read({ ARBOR_STORE: "postgres" }))
      assert.include(String(missing), "ARBOR_DATABASE_URL")
      const url = "postgres://arbor:secret@db.invalid:5432/arbor"
      // The key that seals secrets in the database is kept outside it: required.
      const keyless = yield* Refusal.of(read({ ARBOR_STORE: "postgres", ARBOR_DATABASE_URL: url }))
      assert.include(String(keyless), "ARBOR_SECRETS_KEY")
      assert.include(
        String(
          yield* Refusal.of(read({ ARBOR_STORE: "postgres", ARBOR_DATABASE_URL: url, ARBOR_SECRETS_KEY: "short" }))
        ),
        "at least 32 bytes"
      )
      const rotating = yield* read({ ARBOR_SECRETS_KEY_RETIRED: `${"ab".repeat(32)},${"cd".repeat(32)}` })
      assert.strictEqual(rotating.retiredSecretsKeys.length, 2)
      assert.include(
        String(yield* Refusal.of(read({ ARBOR_SECRETS_KEY_RETIRED: "short" }))),
        "ARBOR_SECRETS_KEY_RETIRED"
      )
      const postgres = yield* read({
        ARBOR_STORE: "postgres",
        ARBOR_DATABASE_URL: url,
        ARBOR_SECRETS_KEY: "ab".repeat(32)
      })
      assert.strictEqual(postgres.store, "postgres")
      assert.strictEqual(Redacted.value(postgres.databaseUrl!), url)
      assert.strictEqual(postgres.databasePool, 10)
      assert.notInclude(String(postgres.databaseUrl), "secret")
      assert.include(String(yield* Refusal.of(read({ ARBOR_STORE: "mysql" }))), "ARBOR_STORE")
      assert.strictEqual((yield* read({})).store, "sqlite")
    }))

  it.effect("decisions see every commit unless ARBOR_DECISION_STALENESS bounds them, at most a minute", () =>
    Effect.gen(function*() {
      assert.isUndefined((yield* read({})).decisionStaleness)
      const bounded = yield* read({ ARBOR_DECISION_STALENESS: "250 millis" })
      assert.strictEqual(Duration.toMillis(bounded.decisionStaleness!), 250)
      for (const wrong of ["2 minutes", "soon"]) {
        assert.include(
          String(yield* Refusal.of(read({ ARBOR_DECISION_STALENESS: wrong }))),
          "ARBOR_DECISION_STALENESS"
        )
      }
    }))

  it.effect("the sign-in provider: none by default; a strict issuer with a client id; the secret from a file", () =>
    Effect.gen(function*() {
      assert.isUndefined((yield* read({})).login)
      const issuer = "https://login.example.com"
      assert.include(String(yield* Refusal.of(read({ ARBOR_LOGIN_ISSUER: issuer }))), "ARBOR_LOGIN_CLIENT_ID")
      const insecure = yield* Refusal.of(
        read({ ARBOR_LOGIN_ISSUER: "http://login.example.com", ARBOR_LOGIN_CLIENT_ID: "a" })
      )
      assert.include(String(insecure), "ARBOR_LOGIN_ISSUER")
      const file = join(mkdtempSync(join(tmpdir(), "arbor-config-")), "secret")
      writeFileSync(file, "from-a-file\n")
      const login = (yield* read({
        ARBOR_LOGIN_ISSUER: issuer,
        ARBOR_LOGIN_CLIENT_ID: "arbor",
        ARBOR_LOGIN_CLIENT_SECRET_FILE: file,
        ARBOR_LOGIN_SCOPES: "groups, offline_access"
      })).login!
      assert.deepStrictEqual([login.issuer, login.clientId, Redacted.value(login.clientSecret), login.scopes], [
        issuer,
        "arbor",
        "from-a-file",
        ["groups", "offline_access"]
      ])
      const unreadable = yield* Refusal.of(read({
        ARBOR_LOGIN_ISSUER: issuer,
        ARBOR_LOGIN_CLIENT_ID: "arbor",
        ARBOR_LOGIN_CLIENT_SECRET_FILE: join(file, "missing")
      }))
      assert.include(String(unreadable), "ARBOR_LOGIN_CLIENT_SECRET_FILE")
      // Loopback http issuers only where insecure issuers are allowed.
      const local = yield* read({
        ARBOR_LOGIN_ISSUER: "http://127.0.0.1:9400",
        ARBOR_LOGIN_CLIENT_ID: "arbor",
        ARBOR_ALLOW_INSECURE_ISSUERS: "loopback"
      })
      assert.strictEqual(local.login?.issuer, "http://127.0.0.1:9400")
    }))
})
