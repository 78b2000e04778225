import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as IdentityProvider from "../src/iam/IdentityProvider.js"
import { Arbor, IdentityProviders, MemoryStore, Principal, Repository, Role, Sealing, Secrets } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { organization } from "./fixtures.js"

const one = Sealing.keys(new Uint8Array(32).fill(1))
const other = Sealing.keys(new Uint8Array(32).fill(2))

describe("Sealing", () => {
  it.effect("seals with a fresh nonce, opens with its key only, refuses a damaged value", () =>
    Effect.gen(function*() {
      const sealed = Sealing.seal(one, "client-secret-1234")
      assert.isTrue(Sealing.isSealed(sealed))
      assert.notInclude(sealed, "client-secret-1234")
      assert.notStrictEqual(Sealing.seal(one, "client-secret-1234"), sealed)
      assert.strictEqual(yield* Sealing.open(one, sealed), "client-secret-1234")
      assert.strictEqual((yield* Refusal.of(Sealing.open(other, sealed)))._tag, "Internal")
      // Rotation: the new key seals, the retired one still opens, and what it sealed needs sealing again.
      const rotated = Sealing.keys(new Uint8Array(32).fill(2), [new Uint8Array(32).fill(1)])
      assert.strictEqual(yield* Sealing.open(rotated, sealed), "client-secret-1234")
      assert.isTrue(Sealing.needsSealing(rotated, sealed))
      assert.isFalse(Sealing.needsSealing(rotated, Sealing.seal(rotated, "x")))
      assert.isTrue(Sealing.needsSealing(rotated, "legacy"))
      const damaged = sealed.slice(0, -2) + (sealed.endsWith("AA") ? "BB" : "AA")
      assert.strictEqual((yield* Refusal.of(Sealing.open(one, damaged)))._tag, "Internal")
      // A value stored before sealing began is taken as it is.
      assert.strictEqual(yield* Sealing.open(one, "legacy"), "legacy")
    }))
})

describe("identity providers' client secrets at rest", () => {
  const secrets = Secrets.layer(new Uint8Array(32).fill(9), new Uint8Array(32).fill(1), [new Uint8Array(32).fill(3)])
  const engine = Arbor.layer.pipe(Layer.provideMerge(MemoryStore.layer), Layer.provideMerge(secrets))

  it.effect("are stored sealed under the secrets' key, kept sealed through updates, and legacy ones sealed", () =>
    Effect.gen(function*() {
      const org = yield* organization("acme")
      const providers = yield* IdentityProviders.IdentityProviders
      const stored = yield* Repository.make(IdentityProvider.table, IdentityProvider.Record)
      const secretOf = (uid: string) => Effect.map(stored.get(uid), (row) => Option.getOrThrow(row).oidc.clientSecret)
      const created = yield* providers.create(Principal.system, org.uid, {
        name: "sso",
        defaultRole: Role.builtInByName("viewer")!.uid,
        oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "client-secret-1234" }
      })
      const sealed = yield* secretOf(created.uid)
      assert.isTrue(Sealing.isSealed(sealed))
      assert.strictEqual(yield* Sealing.open(one, sealed), "client-secret-1234")
      // An update that leaves the secret out keeps it (sealed again); one that gives it replaces it.
      yield* providers.update(Principal.system, created.uid, {
        description: "d",
        oidc: { issuer: "https://login.example.com", clientId: "b" }
      })
      assert.strictEqual(yield* Sealing.open(one, yield* secretOf(created.uid)), "client-secret-1234")
      yield* providers.update(Principal.system, created.uid, {
        oidc: { issuer: "https://login.example.com", clientId: "b", clientSecret: "rotated" }
      })
      assert.strictEqual(yield* Sealing.open(one, yield* secretOf(created.uid)), "rotated")
      // A row written before sealing began, or sealed under a retired key, is sealed again at the next start.
      const record = Option.getOrThrow(yield* stored.get(created.uid))
      yield* stored.update({ ...record, oidc: { ...record.oidc, clientSecret: "plain" } })
      assert.strictEqual(yield* providers.sealStoredSecrets, 1)
      assert.strictEqual(yield* Sealing.open(one, yield* secretOf(created.uid)), "plain")
      assert.strictEqual(yield* providers.sealStoredSecrets, 0)
      const retired = Sealing.keys(new Uint8Array(32).fill(3))
      yield* stored.update({ ...record, oidc: { ...record.oidc, clientSecret: Sealing.seal(retired, "old") } })
      assert.strictEqual(yield* providers.sealStoredSecrets, 1)
      assert.strictEqual(yield* Sealing.open(one, yield* secretOf(created.uid)), "old")
    }).pipe(Effect.provide(engine)))
})
