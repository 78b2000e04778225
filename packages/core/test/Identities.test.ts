import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { generateKeyPairSync } from "node:crypto"
import type { Errors } from "../src/index.js"
import { Arbor, AuditTrail, Identities, Principal, Role, RoleBindings, Roles, Settings } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { claimMatch, folder, organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string; description: string }> }).violations?.map((v) => v.field)

const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
const publicJwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid: "k1", alg: "ES256" }] })
const privateJwks = JSON.stringify({ keys: [privateKey.export({ format: "jwk" })] })

/** Creates an identity in a fresh organization with `body`; returns the result or the error. */
const attempt = (body: unknown) =>
  Effect.gen(function*() {
    const org = yield* organization("acme")
    return yield* Effect.either((yield* Identities.Identities).create(Principal.system, org.uid, body as any))
  })

const violationsOf = (body: unknown) =>
  withArbor(Effect.map(attempt(body), (r) => r._tag === "Left" ? fieldsOf(r.left) : "created"))

describe("Identities", () => {
  it.effect("creates an identity with an exact claim match; lastSeenTime starts at creation", () =>
    withArbor(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-22T00:00:00Z"))
      const result = yield* attempt({ name: "deployer", claimMatch: claimMatch("repo:acme/app:ref:refs/heads/main") })
      assert.strictEqual(result._tag, "Right")
      if (result._tag !== "Right") return
      const identity = result.right
      assert.strictEqual(identity.subject, "repo:acme/app:ref:refs/heads/main")
      assert.strictEqual(identity.issuer, "https://issuer.example.com")
      assert.isTrue(DateTime.Equivalence(identity.lastSeenTime, identity.createTime))
      assert.deepStrictEqual(yield* (yield* Identities.Identities).get(Principal.system, identity.uid), identity)
    })))

  describe("claim match validation", () => {
    it.effect("exactly one of claimMatch and staticKeys", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* violationsOf({ name: "x" }), ["claimMatch"])
        assert.deepStrictEqual(
          yield* violationsOf({
            name: "x",
            claimMatch: claimMatch("s"),
            staticKeys: { issuer: "https://i.example", subject: "s", issuerKeys: publicJwks }
          }),
          ["staticKeys"]
        )
      }))

    it.effect("exactly one of each exact/pattern pair, issuer and subject required", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* violationsOf({ name: "x", claimMatch: {} }), [
          "claimMatch.issuer",
          "claimMatch.subject"
        ])
        assert.deepStrictEqual(
          yield* violationsOf({
            name: "x",
            claimMatch: {
              issuer: "https://a.example",
              issuerPattern: "https://.*",
              subject: "s",
              audience: "a",
              audiencePattern: "a.*"
            }
          }),
          ["claimMatch.issuerPattern", "claimMatch.audiencePattern"]
        )
        assert.strictEqual(
          yield* violationsOf({
            name: "x",
            claimMatch: {
              issuerPattern: "https://token\\.actions\\.githubusercontent\\.com",
              subjectPattern: "repo:acme/[^:]+:ref:refs/heads/main",
              audience: "https://arbor.example",
              claims: { repository_owner: "acme" },
              claimPatterns: { workflow_ref: "acme/.+@refs/heads/main" }
            }
          }),
          "created"
        )
      }))

    it.effect("patterns must be valid RE2: no backtracking-only syntax", () =>
      Effect.gen(function*() {
        for (const pattern of ["(", "a(?=b)", "(a)\\1", "", "x".repeat(1025)]) {
          assert.deepStrictEqual(
            yield* violationsOf({ name: "x", claimMatch: { issuer: "https://a.example", subjectPattern: pattern } }),
            ["claimMatch.subjectPattern"],
            pattern
          )
        }
        assert.deepStrictEqual(
          yield* violationsOf({ name: "x", claimMatch: { ...claimMatch("s"), claimPatterns: { ref: "[" } } }),
          ["claimMatch.claimPatterns.ref"]
        )
        assert.strictEqual(
          yield* violationsOf({ name: "x", claimMatch: { issuer: "https://a.example", subjectPattern: "(a+)+$" } }),
          "created",
          "nested quantifiers are fine on a linear-time engine"
        )
      }))

    it.effect("a literal issuer must be https; loopback http only when configured", () =>
      Effect.gen(function*() {
        const http = (issuer: string) => ({ name: "x", claimMatch: { issuer, subject: "s" } })
        assert.deepStrictEqual(yield* violationsOf(http("http://127.0.0.1:8080")), ["claimMatch.issuer"])
        assert.deepStrictEqual(yield* violationsOf(http("not a url")), ["claimMatch.issuer"])
        assert.deepStrictEqual(yield* violationsOf(http("ftp://issuer.example")), ["claimMatch.issuer"])
        const allowLoopback = Layer.succeed(Settings.Settings, { allowLoopbackHttpIssuers: true, platformAdmins: [] })
        const configured = (body: unknown) => violationsOf(body).pipe(Effect.provide(allowLoopback))
        assert.strictEqual(yield* configured(http("http://127.0.0.1:8080")), "created")
        assert.strictEqual(yield* configured(http("http://localhost:9000/oidc")), "created")
        assert.deepStrictEqual(yield* configured(http("http://issuer.invalid")), ["claimMatch.issuer"])
      }))
  })

  it.effect("lists by relationship type: claim matches, static keys, the kinds the engine has none of", () =>
    withArbor(Effect.gen(function*() {
      const org = yield* organization("acme")
      const identities = yield* Identities.Identities
      yield* identities.create(Principal.system, org.uid, { name: "ci", claimMatch: claimMatch("repo:acme/app") })
      yield* identities.create(Principal.system, org.uid, {
        name: "offline",
        staticKeys: { issuer: "https://offline.example", subject: "batch", issuerKeys: publicJwks }
      })
      const names = (relationshipType?: string) =>
        Effect.map(
          identities.list(Principal.system, { childrenOf: org.uid, relationshipType }),
          (page) => page.items.map((i) => i.name).sort()
        )
      assert.deepStrictEqual(yield* names(), ["ci", "offline"])
      assert.deepStrictEqual(yield* names("RELATIONSHIP_TYPE_UNSPECIFIED"), ["ci", "offline"])
      assert.deepStrictEqual(yield* names("RELATIONSHIP_TYPE_CLAIM_MATCH"), ["ci"])
      assert.deepStrictEqual(yield* names("RELATIONSHIP_TYPE_STATIC"), ["offline"])
      assert.deepStrictEqual(yield* names("RELATIONSHIP_TYPE_AWS_IDENTITY"), [])
      assert.deepStrictEqual(
        fieldsOf(yield* Refusal.of(identities.list(Principal.system, { relationshipType: "static" }))),
        ["relationship_type"]
      )
    })))

  describe("static keys", () => {
    it.effect("expire 365 days after creation by default, and no later", () =>
      withArbor(Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-01-01T00:00:00Z"))
        const result = yield* attempt({
          name: "offline",
          staticKeys: { issuer: "https://offline.example", subject: "batch", issuerKeys: publicJwks }
        })
        assert.strictEqual(result._tag, "Right")
        if (result._tag !== "Right") return
        assert.strictEqual(DateTime.formatIso(result.right.staticKeys!.expirationTime), "2027-01-01T00:00:00.000Z")
        assert.strictEqual(result.right.issuer, "https://offline.example")
        const tooLate = yield* Refusal.of((yield* Identities.Identities).update(Principal.system, result.right.uid, {
          staticKeys: {
            issuer: "https://offline.example",
            subject: "batch",
            issuerKeys: publicJwks,
            expirationTime: "2027-01-02T00:00:00Z"
          }
        }))
        assert.deepStrictEqual(fieldsOf(tooLate), ["staticKeys.expirationTime"])
      })))

    it.effect("issuer keys must be a JWKS of public asymmetric keys", () =>
      Effect.gen(function*() {
        const keys = (issuerKeys: string) => ({
          name: "x",
          staticKeys: { issuer: "https://offline.example", subject: "s", issuerKeys }
        })
        for (
          const bad of [
            privateJwks,
            JSON.stringify({ keys: [{ kty: "oct", k: "c2VjcmV0" }] }),
            JSON.stringify({ keys: [] }),
            "{not json",
            JSON.stringify([publicJwks])
          ]
        ) {
          assert.deepStrictEqual(yield* violationsOf(keys(bad)), ["staticKeys.issuerKeys"], bad)
        }
      }))
  })

  describe("update", () => {
    it.effect("setting one relationship clears the other", () =>
      withArbor(Effect.gen(function*() {
        const identities = yield* Identities.Identities
        const org = yield* organization("acme")
        const identity = yield* identities.create(Principal.system, org.uid, {
          name: "ci",
          claimMatch: claimMatch("a")
        })
        const renamed = yield* identities.update(Principal.system, identity.uid, { name: "ci2" })
        assert.deepStrictEqual(renamed.claimMatch, identity.claimMatch)
        const offline = yield* identities.update(Principal.system, identity.uid, {
          staticKeys: { issuer: "https://offline.example", subject: "s", issuerKeys: publicJwks }
        })
        assert.isUndefined(offline.claimMatch)
        assert.strictEqual(offline.staticKeys?.subject, "s")
        const back = yield* identities.update(
          Principal.system,
          identity.uid,
          { claimMatch: claimMatch("b") },
          "claim_match"
        )
        assert.isUndefined(back.staticKeys)
        assert.strictEqual(back.subject, "b")
        const neither = yield* Refusal.of(identities.update(Principal.system, identity.uid, {}, "claimMatch"))
        assert.deepStrictEqual(fieldsOf(neither), ["claimMatch"])
      })))

    it.effect("changing how an identity is assumed needs every capability it holds, where it holds it", () =>
      withArbor(Effect.gen(function*() {
        const identities = yield* Identities.Identities
        const org = yield* organization("acme")
        const team = yield* folder(org.uid, "team")
        // The victim lives in the team folder but owns the organization.
        const victim = yield* identities.create(Principal.system, team.uid, {
          name: "victim",
          claimMatch: claimMatch("v")
        })
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
          identityUid: victim.uid,
          roleUid: Role.builtInByName("owner")!.uid
        })
        // The attacker may update identities in the team folder, nothing more.
        const keeper = yield* (yield* Roles.Roles).create(Principal.system, org.uid, {
          name: "identity keeper",
          capabilities: ["identity.update", "identity.list"]
        })
        const attacker = yield* identities.create(Principal.system, team.uid, {
          name: "a",
          claimMatch: claimMatch("a")
        })
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, team.uid, {
          identityUid: attacker.uid,
          roleUid: keeper.uid
        })
        const as = Principal.identity(attacker.uid)
        const takeover = { issuer: "https://attacker.example", subject: "me" }
        const staticKeys = { issuer: "https://attacker.example", subject: "me", issuerKeys: publicJwks }
        for (
          const [patch, mask] of [
            [{ claimMatch: takeover }, undefined],
            [{ claimMatch: { ...victim.claimMatch, claims: { x: "y" } } }, undefined],
            [{ staticKeys }, undefined],
            [{ name: "victim", claimMatch: takeover }, "*"]
          ] as const
        ) {
          const denied = yield* Refusal.of(identities.update(as, victim.uid, patch, mask))
          assert.strictEqual(denied._tag, "PermissionDenied", JSON.stringify(patch))
          assert.strictEqual((denied as Errors.PermissionDenied).resource, org.uid)
        }
        assert.deepStrictEqual((yield* identities.get(Principal.system, victim.uid)).claimMatch, victim.claimMatch)
        // Names and descriptions need identity.update alone, also as a whole replacement (v1 PUT).
        const renamed = yield* identities.update(as, victim.uid, { name: "renamed", description: "d" })
        assert.strictEqual(renamed.name, "renamed")
        const replaced = yield* identities.update(as, victim.uid, {
          name: "victim",
          claimMatch: { ...victim.claimMatch }
        }, "*")
        assert.strictEqual(replaced.name, "victim")
        // Identities holding nothing the caller lacks can be repointed; the organization's owner can repoint any.
        const own = yield* identities.update(as, attacker.uid, { claimMatch: takeover })
        assert.strictEqual(own.subject, "me")
        const owner = yield* principalWith(org.uid, "owner", "owner")
        assert.strictEqual((yield* identities.update(owner, victim.uid, { claimMatch: takeover })).subject, "me")
      })))
  })

  it.effect("delete removes the identity's role bindings in every group, atomically", () =>
    withArbor(Effect.gen(function*() {
      const identities = yield* Identities.Identities
      const bindings = yield* RoleBindings.RoleBindings
      const a = yield* organization("a")
      const b = yield* organization("b")
      const identity = yield* identities.create(Principal.system, a.uid, { name: "ci", claimMatch: claimMatch("ci") })
      const other = yield* identities.create(Principal.system, a.uid, { name: "other", claimMatch: claimMatch("o") })
      const viewer = Role.builtInByName("viewer")!.uid
      for (const g of [a.uid, b.uid]) {
        yield* bindings.create(Principal.system, g, { identityUid: identity.uid, roleUid: viewer })
        yield* bindings.create(Principal.system, g, { identityUid: other.uid, roleUid: viewer })
      }
      yield* identities.delete(Principal.system, identity.uid)
      const left = yield* bindings.list(Principal.system)
      assert.deepStrictEqual(left.items.map((x) => x.identity.uid), [other.uid, other.uid])
      assert.strictEqual((yield* Refusal.of(identities.get(Principal.system, identity.uid)))._tag, "NotFound")
    })))
})

describe("Identities.updateMetadata", () => {
  it.effect("an identity sets its own metadata: the fields present, or those the mask names; each change logged", () =>
    withArbor(Effect.gen(function*() {
      const identities = yield* Identities.Identities
      const org = yield* organization("acme")
      const ada = yield* principalWith(org.uid, "ada lovelace", "viewer")
      const first = yield* identities.updateMetadata(ada, {
        identityMetadata: { company: "Analytical Engines", updatesOptIn: true, name: "ignored", hubspotUtk: "x" }
      })
      assert.deepInclude(first, {
        uid: ada.identityUid,
        name: "ada lovelace",
        givenName: "ada",
        familyName: "lovelace",
        company: "Analytical Engines",
        updatesOptIn: true,
        jobTitle: ""
      })
      // Without a mask, only the fields present change.
      const second = yield* identities.updateMetadata(ada, { identityMetadata: { jobTitle: "analyst" } })
      assert.deepInclude(second, { company: "Analytical Engines", jobTitle: "analyst", updatesOptIn: true })
      // A listed field absent from the body is cleared; snake_case names the same field.
      const third = yield* identities.updateMetadata(ada, {
        identityMetadata: { product: "engines" },
        updateMask: "company,updates_opt_in,product"
      })
      assert.deepInclude(third, { company: "", updatesOptIn: false, product: "engines", jobTitle: "analyst" })
      // The same values again change nothing and log nothing.
      yield* identities.updateMetadata(ada, { identityMetadata: { product: "engines" } })
      const logged = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, { subject: ada.identityUid })
      assert.deepStrictEqual(
        logged.items.filter((e) => e.kind === "identity_metadata").map((e) => [e.type, e.body.company]),
        [
          ["dev.chainguard.api.iam.identity.metadata.updated.v1", "Analytical Engines"],
          ["dev.chainguard.api.iam.identity.metadata.updated.v1", "Analytical Engines"],
          ["dev.chainguard.api.iam.identity.metadata.updated.v1", ""]
        ]
      )
      // Deleting the identity removes its metadata.
      yield* identities.delete(Principal.system, ada.identityUid)
      const deleted = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, {
        types: ["dev.chainguard.api.iam.identity.metadata.deleted.v1"]
      })
      assert.strictEqual(deleted.totalCount, 1)
    })))

  it.effect("bad input names the field and changes nothing; the system and narrowed tokens are refused", () =>
    withArbor(Effect.gen(function*() {
      const identities = yield* Identities.Identities
      const org = yield* organization("acme")
      const ada = yield* principalWith(org.uid, "ada", "owner")
      yield* identities.updateMetadata(ada, { identityMetadata: { company: "kept" } })
      for (
        const [request, field] of [
          [{ identityMetadata: { company: "x".repeat(257) } }, "identityMetadata.company"],
          [{ identityMetadata: { updatesOptIn: "yes" } }, "identityMetadata.updatesOptIn"],
          [{ identityMetadata: [] }, "identityMetadata"],
          [{ identityMetadata: {}, updateMask: "company,shoeSize" }, "updateMask"]
        ] as const
      ) {
        const refused = yield* Refusal.of(identities.updateMetadata(ada, request))
        assert.deepStrictEqual(fieldsOf(refused), [field], JSON.stringify(request))
      }
      const unchanged = yield* identities.updateMetadata(ada, { identityMetadata: {} })
      assert.strictEqual(unchanged.company, "kept")
      const system = yield* Refusal.of(identities.updateMetadata(Principal.system, { identityMetadata: {} }))
      assert.strictEqual(system._tag, "PermissionDenied")
      const narrowed = Principal.identity(ada.identityUid, { narrowed: { capabilities: ["groups.list"] } })
      const refused = yield* Refusal.of(identities.updateMetadata(narrowed, { identityMetadata: { company: "x" } }))
      assert.strictEqual(refused._tag, "PermissionDenied")
    })))
})
