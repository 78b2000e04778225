/**
 * Data at rest (docs/operations.md): the data directory is private however it was made, its files 0600 from their
 * first byte, and identity providers' client secrets sealed under a key that is not in the database.
 */
import { IdentityProvider, IdentityProviders, Principal, Repository, Role, Sealing } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as DataDir from "../src/DataDir.js"
import * as Server from "../src/Server.js"
import type { ServerConfig } from "../src/ServerConfig.js"
import { member, testConfig } from "./support.js"

const modeOf = (path: string) => statSync(path).mode & 0o777

describe("the data directory", () => {
  it.scopedLive("an existing directory and its files are made private at start; new files are born 0600", () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "arbor-data-")), ".arbor")
    mkdirSync(dataDir, { mode: 0o755 })
    chmodSync(dataDir, 0o755)
    writeFileSync(join(dataDir, DataDir.files.bootstrapToken), "old\n", { mode: 0o644 })
    writeFileSync(join(dataDir, "notes.txt"), "not ours\n", { mode: 0o644 })
    const config = testConfig({ store: "sqlite", dataDir, secretsKey: undefined })
    return Effect.gen(function*() {
      const { org } = yield* member("acme")
      yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org, {
        name: "sso",
        defaultRole: Role.builtInByName("viewer")!.uid,
        oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "the-client-secret-plugh" }
      })
      assert.strictEqual(modeOf(dataDir), 0o700)
      for (
        const file of [
          DataDir.files.database,
          `${DataDir.files.database}-wal`,
          DataDir.files.bootstrapToken,
          DataDir.files.pageTokenKey,
          DataDir.files.secretsKey
        ]
      ) {
        assert.strictEqual(modeOf(join(dataDir, file)), 0o600, file)
      }
      assert.strictEqual(modeOf(join(dataDir, "notes.txt")), 0o644, "files that are not the server's are left alone")
      // The sealed secret: nowhere in the database's files, and opened only with the key file beside them.
      for (const file of [DataDir.files.database, `${DataDir.files.database}-wal`]) {
        const path = join(dataDir, file)
        if (existsSync(path)) assert.notInclude(readFileSync(path).toString("latin1"), "the-client-secret-plugh")
      }
      const keys = yield* DataDir.sealingKeys(dataDir, { current: undefined, retired: [] })
      const [record] = yield* (yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)).find({
        order: [{ column: "uid", direction: "asc" }]
      })
      assert.strictEqual(yield* Sealing.open(keys, record!.oidc.clientSecret), "the-client-secret-plugh")
    }).pipe(Effect.provide(Server.engine(config)))
  })

  it.scopedLive("moving from the key file to ARBOR_SECRETS_KEY, and rotating that, keeps every secret", () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "arbor-data-")), ".arbor")
    const first = testConfig({ store: "sqlite", dataDir, secretsKey: undefined })
    const key = (fill: number) => Redacted.make(new Uint8Array(32).fill(fill))
    const stored = Effect.flatMap(
      Repository.make(IdentityProvider.table, IdentityProvider.Record),
      (providers) => Effect.map(providers.find({ order: [{ column: "uid", direction: "asc" }] }), ([p]) => p!)
    )
    /** Starts on `config` as the server does (sealing again what needs it): the secret as sealed, and opened. */
    const startAndRead = (config: ServerConfig) =>
      Effect.gen(function*() {
        yield* (yield* IdentityProviders.IdentityProviders).sealStoredSecrets
        const secret = (yield* stored).oidc.clientSecret
        const sealing = Sealing.keys(Redacted.value(config.secretsKey!))
        return { opened: yield* Sealing.open(sealing, secret), underCurrentKey: !Sealing.needsSealing(sealing, secret) }
      }).pipe(Effect.provide(Server.engine(config)))
    return Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const { org } = yield* member("acme")
        yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org, {
          name: "sso",
          defaultRole: Role.builtInByName("viewer")!.uid,
          oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "kept-through-rotations" }
        })
      }).pipe(Effect.provide(Server.engine(first)))
      // The key file is retired by setting a key: what it sealed is sealed again under the new one.
      const second = { ...first, secretsKey: key(1) }
      assert.deepStrictEqual(yield* startAndRead(second), { opened: "kept-through-rotations", underCurrentKey: true })
      // Rotating the configured key: the old one as retired for one start, then not at all.
      const third = { ...first, secretsKey: key(2), retiredSecretsKeys: [key(1)] }
      assert.deepStrictEqual(yield* startAndRead(third), { opened: "kept-through-rotations", underCurrentKey: true })
      rmSync(join(dataDir, DataDir.files.secretsKey))
      const fourth = { ...first, secretsKey: key(2) }
      assert.deepStrictEqual(yield* startAndRead(fourth), { opened: "kept-through-rotations", underCurrentKey: true })
    })
  })
})
