import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Arbor, AuditTrail, Groups, Principal, Terms } from "../src/index.js"
import * as Refusal from "../src/testing/Refusal.js"
import { folder, organization, principalWith } from "./fixtures.js"

describe("Terms", () => {
  it.effect("a group accepts documents once; a folder's list includes what the groups above it accepted", () =>
    Effect.gen(function*() {
      const terms = yield* Terms.Terms
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const owner = yield* principalWith(org.uid, "owner", "owner")
      const accepted = yield* terms.accept(owner, org.uid, { documentIds: ["tos.v1", "dpa.v2", "tos.v1"] })
      assert.deepStrictEqual(accepted, { group: org.uid, documentIds: ["tos.v1", "dpa.v2"] })
      const first = (yield* terms.list(owner, org.uid)).items
      assert.sameMembers(first.map((a) => a.docId), ["tos.v1", "dpa.v2"])
      assert.isTrue(first.every((a) => a.acceptedBy === owner.identityUid && a.orgUid === org.uid))
      // Accepting again changes nothing: the first acceptance stays, and nothing is logged.
      yield* terms.accept(Principal.system, org.uid, { documentIds: ["tos.v1"] })
      assert.deepStrictEqual((yield* terms.list(owner, org.uid)).items, first)
      yield* terms.accept(owner, team.uid, { documentIds: ["team-rules.v1"] })
      const inTeam = yield* terms.list(owner, team.uid)
      assert.strictEqual(inTeam.totalCount, 3)
      assert.sameDeepMembers(
        inTeam.items.map((a) => [a.docId, a.orgUid]),
        [["tos.v1", org.uid], ["dpa.v2", org.uid], ["team-rules.v1", team.uid]]
      )
      const paged = yield* terms.list(owner, team.uid, { pageSize: 2 })
      assert.strictEqual(paged.items.length, 2)
      const rest = yield* terms.list(owner, team.uid, { pageSize: 2, pageToken: paged.nextPageToken })
      assert.sameMembers([...paged.items, ...rest.items].map((a) => a.docId), ["tos.v1", "dpa.v2", "team-rules.v1"])
      // The org's list does not include what the folder accepted.
      assert.strictEqual((yield* terms.list(owner, org.uid)).totalCount, 2)
      const logged = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, {
        types: ["dev.chainguard.api.iam.terms.accepted.v1"]
      })
      assert.sameMembers(logged.items.map((e) => e.body.docId), ["tos.v1", "dpa.v2", "team-rules.v1"])
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("terms.accept and terms.list where the group is; the viewer lists, only the owner accepts", () =>
    Effect.gen(function*() {
      const terms = yield* Terms.Terms
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      const viewer = yield* principalWith(org.uid, "viewer", "viewer", [team.uid])
      yield* terms.accept(Principal.system, org.uid, { documentIds: ["tos.v1"] })
      // Holding terms.list at the folder shows what the organization accepted.
      assert.deepStrictEqual((yield* terms.list(viewer, team.uid)).items.map((a) => a.docId), ["tos.v1"])
      const notAtOrg = yield* Refusal.of(terms.list(viewer, org.uid))
      assert.strictEqual(notAtOrg._tag, "PermissionDenied")
      const cannotAccept = yield* Refusal.of(terms.accept(viewer, team.uid, { documentIds: ["x.v1"] }))
      assert.strictEqual(cannotAccept._tag, "PermissionDenied")
      assert.strictEqual((yield* terms.list(Principal.system, team.uid)).totalCount, 1)
    }).pipe(Effect.provide(Arbor.layerMemory)))

  it.effect("bad input names the field and records nothing; a deleted group's acceptances go with it", () =>
    Effect.gen(function*() {
      const terms = yield* Terms.Terms
      const org = yield* organization("acme")
      const team = yield* folder(org.uid, "team")
      for (
        const [input, field] of [
          [{}, "documentIds"],
          [{ documentIds: [] }, "documentIds"],
          [{ documentIds: ["ok.v1", "not ok"] }, "documentIds[1]"],
          [{ documentIds: Array.from({ length: 33 }, (_, i) => `d${i}`) }, "documentIds"]
        ] as const
      ) {
        const refused = yield* Refusal.of(terms.accept(Principal.system, team.uid, input))
        assert.strictEqual(refused._tag, "InvalidArgument")
        if (refused._tag === "InvalidArgument") assert.strictEqual(refused.violations[0]?.field, field)
      }
      const malformed = yield* Refusal.of(terms.list(Principal.system, "nope"))
      assert.strictEqual(malformed._tag, "InvalidArgument")
      const missing = yield* Refusal.of(terms.accept(Principal.system, `${org.uid}/0123456789abcdef`, {
        documentIds: ["tos.v1"]
      }))
      assert.strictEqual(missing._tag, "NotFound")
      assert.strictEqual((yield* terms.list(Principal.system, team.uid)).totalCount, 0)
      yield* terms.accept(Principal.system, team.uid, { documentIds: ["tos.v1"] })
      yield* (yield* Groups.Groups).delete(Principal.system, team.uid)
      yield* terms.accept(Principal.system, org.uid, { documentIds: ["tos.v1"] })
      const again = yield* folder(org.uid, "team")
      assert.deepStrictEqual((yield* terms.list(Principal.system, again.uid)).items.map((a) => a.orgUid), [org.uid])
    }).pipe(Effect.provide(Arbor.layerMemory)))
})
