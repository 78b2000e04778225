import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, it as plainIt } from "vitest"
import { Groups, IdentityProviders, Principal } from "../src/index.js"
import { Fixture } from "../src/testing/index.js"
import * as Refusal from "../src/testing/Refusal.js"

const yaml = `
organizations:
  acme:
    folders:
      prod: { folders: { web: {} } }
      staging: {}
    roles:
      deployer: [repo.create, repo.update, CAP_REPO_LIST]
    identities:
      ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
      auditor: { issuer: https://issuer.example.com, subject: auditor, group: staging }
    bindings:
      - { identity: ci, role: deployer, group: prod }
      - { identity: auditor, role: viewer }
`

describe("Fixture, with @effect/vitest", () => {
  layer(Fixture.layer(yaml))((it) => {
    it.effect("seeds folders, roles, identities and bindings; the helpers ask the engine's decision", () =>
      Effect.gen(function*() {
        const names = yield* Fixture.Seeded
        const web = yield* (yield* Groups.Groups).get(Principal.system, names.group("acme/prod/web"))
        assert.strictEqual(web.name, "web")
        yield* Fixture.expectAllowed("ci", "repo.create", "acme/prod/web")
        yield* Fixture.expectDenied("ci", "repo.create", "acme/staging")
        yield* Fixture.expectAllowed("auditor", "groups.list", "acme/prod")
        yield* Fixture.expectDenied("auditor", "groups.create", "acme")
        // A failed expectation says what the identity does hold there.
        const failed = yield* Refusal.of(Fixture.expectAllowed("ci", "repo.delete", "acme/prod"))
        assert.strictEqual(
          failed.message,
          "expected ci to hold repo.delete at acme/prod; it holds there: repo.create, repo.update, repo.list"
        )
        const denied = yield* Refusal.of(Fixture.expectDenied("auditor", "groups.list", "acme"))
        assert.match(denied.message, /^expected auditor not to hold groups.list at acme; it holds there: groups.list,/)
      }))
  })

  it.effect("a bad fixture is refused with where it went wrong", () =>
    Effect.gen(function*() {
      const unknownRole = yield* Refusal.of(Effect.provide(
        Fixture.Seeded,
        Fixture.layer({
          organizations: {
            acme: {
              identities: { a: { issuer: "https://i.example.com", subject: "a" } },
              bindings: [{ identity: "a", role: "wizard" }]
            }
          }
        })
      ))
      assert.strictEqual(
        unknownRole.message,
        "the fixture cannot be seeded: Invalid argument: organizations.acme.bindings[0].role: names no role: wizard"
      )
      const notAFixture = yield* Refusal.of(Effect.provide(Fixture.Seeded, Fixture.layer("organizations: [1, 2]")))
      assert.match(notAFixture.message, /^the fixture is not valid: /)
      const badName = yield* Refusal.of(
        Effect.provide(Fixture.Seeded, Fixture.layer({ organizations: { "ACME!": {} } }))
      )
      assert.match(badName.message, /^the fixture cannot be seeded: Invalid argument: name/)
    }))

  it.effect("an identity provider's secret is read from the test's environment, as arbor apply reads it", () =>
    Effect.gen(function*() {
      const withProvider = (variable: string) => ({
        organizations: {
          acme: {
            identityProviders: {
              okta: {
                issuer: "https://okta.example.invalid",
                clientId: "arbor",
                defaultRole: "viewer",
                secretFrom: { env: variable }
              }
            }
          }
        }
      })
      process.env["ARBOR_FIXTURE_TEST_SECRET"] = "s3cret"
      const seeded = yield* Effect.provide(
        Effect.gen(function*() {
          const names = yield* Fixture.Seeded
          const providers = yield* IdentityProviders.IdentityProviders
          const [okta] = (yield* providers.list(Principal.system, { childrenOf: names.group("acme") })).items
          return [
            yield* providers.clientSecretIs(Principal.system, okta!.uid, "s3cret"),
            yield* providers.clientSecretIs(Principal.system, okta!.uid, "other")
          ]
        }),
        Fixture.layer(withProvider("ARBOR_FIXTURE_TEST_SECRET"))
      ).pipe(Effect.ensuring(Effect.sync(() => delete process.env["ARBOR_FIXTURE_TEST_SECRET"])))
      assert.deepStrictEqual(seeded, [true, false])
      const unset = yield* Refusal.of(
        Effect.provide(Fixture.Seeded, Fixture.layer(withProvider("ARBOR_FIXTURE_TEST_UNSET")))
      )
      assert.strictEqual(
        unset.message,
        "the fixture cannot be seeded: Invalid argument: organizations.acme.identityProviders.okta.secretFrom: " +
          "the environment variable ARBOR_FIXTURE_TEST_UNSET is not set"
      )
    }))
})

describe("Fixture, with plain vitest", () => {
  let arbor: Fixture.Started
  beforeAll(async () => {
    arbor = await Fixture.start(yaml)
  })
  afterAll(() => arbor.dispose())

  plainIt("start() gives promise helpers", async () => {
    await arbor.expectAllowed("ci", "CAP_REPO_UPDATE", "acme/prod")
    await arbor.expectDenied("ci", "repo.update", "acme")
    let message = ""
    await arbor.expectAllowed("auditor", "repo.create", "acme").catch((e: Error) => (message = e.message))
    assert.match(message, /^expected auditor to hold repo.create at acme/)
    const folder = await arbor.run(
      Effect.flatMap(Groups.Groups, (g) => g.get(Principal.system, arbor.group("acme/staging")))
    )
    assert.strictEqual(folder.name, "staging")
  })
})
