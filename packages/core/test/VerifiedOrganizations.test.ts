import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Arbor, AuditTrail, Groups, Identities, Principal } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

/** A person signed in with `email` (verified by the server's own provider, as their token's claim says). */
const person = (email: string) =>
  Effect.gen(function*() {
    const identity = yield* (yield* Identities.Identities).create(
      Principal.system,
      (yield* organization(
        `home of ${email.replace(/[^a-z0-9]/g, "-")}`
      )).uid,
      { name: "person", claimMatch: { issuer: "https://issuer.example.com", subject: email } }
    )
    return Principal.identity(identity.uid, { email })
  })

describe("verified organizations", () => {
  it.effect("only platform admins verify, only organizations named by a domain; renames by others unverify", () =>
    withArbor(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const org = yield* organization("acme.dev")
      const owner = yield* principalWith(org.uid, "owner", "owner")
      const byOwner = yield* Refusal.of(groups.update(owner, org.uid, { verified: true }))
      assert.strictEqual(byOwner._tag, "PermissionDenied")
      assert.isFalse((yield* groups.get(owner, org.uid)).verified)
      assert.isTrue((yield* groups.update(Principal.system, org.uid, { verified: true })).verified)
      // The owner edits the description: still verified. They rename it: no longer.
      assert.isTrue((yield* groups.update(owner, org.uid, { description: "the acme developers" })).verified)
      const renamed = yield* groups.update(owner, org.uid, { name: "acme.io" })
      assert.isFalse(renamed.verified)
      const notDomain = yield* organization("acme corp")
      const refused = yield* Refusal.of(groups.update(Principal.system, notDomain.uid, { verified: true }))
      assert.strictEqual(refused._tag, "InvalidArgument")
      const folder = yield* groups.create(Principal.system, org.uid, { name: "team.acme.dev" })
      assert.strictEqual(
        (yield* Refusal.of(groups.update(Principal.system, folder.uid, { verified: true })))._tag,
        "InvalidArgument"
      )
      const notBoolean = yield* Refusal.of(groups.update(Principal.system, org.uid, { verified: "yes" }))
      assert.strictEqual(notBoolean._tag, "InvalidArgument")
      // `verified` in a create body is output-only there: ignored, for a platform admin too (a client that copies a
      // fetched group sends it). Verified by a platform admin's update; a whole replacement (`*`, v1's) leaves it.
      const created = yield* groups.createRoot(Principal.system, { name: "verified.example", verified: true })
      assert.isFalse(created.verified)
      assert.isTrue((yield* groups.update(Principal.system, created.uid, { verified: true })).verified)
      const owned = yield* principalWith(created.uid, "owner", "owner")
      const replaced = yield* groups.update(owned, created.uid, { name: "verified.example", description: "d" }, "*")
      assert.isTrue(replaced.verified)
      const unverify = yield* Refusal.of(groups.update(owned, created.uid, { verified: false }))
      assert.strictEqual(unverify._tag, "PermissionDenied")
      const copied = yield* groups.create(owned, created.uid, { name: "x.dev", verified: true })
      assert.isFalse(copied.verified)
    })))

  it.effect("a person at the domain finds it and asks for access once a day; everyone else finds nothing alike", () =>
    withArbor(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const org = yield* organization("acme.dev")
      const ada = yield* person("ada@acme.dev")
      // Not verified yet: not found, as for everyone else.
      assert.strictEqual((yield* Refusal.of(groups.lookupVerified(ada)))._tag, "NotFound")
      yield* groups.update(Principal.system, org.uid, { verified: true })
      assert.deepStrictEqual(yield* groups.checkEligibility(ada), { eligible: true })
      assert.strictEqual((yield* groups.lookupVerified(ada)).uid, org.uid)
      yield* groups.requestAccess(ada, org.uid)
      const again = yield* Refusal.of(groups.requestAccess(ada, org.uid))
      assert.strictEqual(again._tag, "ResourceExhausted")
      yield* TestClock.adjust("25 hours")
      yield* groups.requestAccess(ada, org.uid)
      const entries = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, {
        types: ["dev.chainguard.api.iam.group.access_requested.v1"]
      })
      assert.deepStrictEqual(entries.items.map((e) => [e.group, e.body.email]), [[org.uid, "ada@acme.dev"], [
        org.uid,
        "ada@acme.dev"
      ]])
      // The owners see the request in their audit trail.
      const owner = yield* principalWith(org.uid, "owner", "owner")
      assert.strictEqual(
        (yield* (yield* AuditTrail.AuditTrail).list(owner, {
          types: ["dev.chainguard.api.iam.group.access_requested.v1"]
        }))
          .totalCount,
        2
      )
      const strangers = [
        yield* person("bob@gmail.com"),
        yield* person("eve@other.dev"),
        Principal.identity(owner.identityUid),
        Principal.identity(owner.identityUid, { email: "ada@acme.dev", narrowed: { capabilities: ["groups.list"] } }),
        Principal.system
      ]
      for (const stranger of strangers) {
        const lookup = yield* Refusal.of(groups.lookupVerified(stranger))
        assert.deepStrictEqual([lookup._tag, lookup.message], [
          "NotFound",
          "Not found: verified organization for your email's domain"
        ])
        const request = yield* Refusal.of(groups.requestAccess(stranger, org.uid))
        assert.strictEqual(request._tag, "NotFound")
      }
      assert.deepStrictEqual(yield* groups.checkEligibility(strangers[0]!), { eligible: false })
      assert.deepStrictEqual(yield* groups.checkEligibility(strangers[1]!), { eligible: true })
      assert.strictEqual((yield* Refusal.of(groups.requestAccess(ada, "")))._tag, "InvalidArgument")
      assert.strictEqual(
        (yield* Refusal.of(groups.requestAccess(ada, `${org.uid}/0123456789abcdef`)))._tag,
        "NotFound"
      )
    })))
})
