/**
 * Data at rest (docs/operations.md): the data directory is private however it was made, its files 0600 from their
 * first byte, and identity providers' client secrets sealed under a key that is not in the database.
 */
import { IdentityProvider, IdentityProviders, Principal, Repository, Role, Sealing } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as DataDir from "../src/DataDir.js"
import * as Server from "../src/Server.js"
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
      const keys = yield* DataDir.sealingKeys(dataDir, undefined)
      const [record] = yield* (yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)).find({
        order: [{ column: "uid", direction: "asc" }]
      })
      assert.strictEqual(yield* Sealing.openWith(keys, record!.oidc.clientSecret), "the-client-secret-plugh")
    }).pipe(Effect.provide(Server.engine(config)))
  })
})
