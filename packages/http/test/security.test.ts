/**
 * Authorization over HTTP for the paths an attacker inside an organization would try: repointing a more powerful
 * identity through the v1 PUT, reading names through role-binding hydration, and redeeming invites.
 */
import { GroupInvites, Groups, Identities, Principal, Role, RoleBindings, Roles } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call, member, testServer, tokenFor } from "./support.js"

/** A folder `team` in `org` and an identity there holding a custom role with `capabilities` in it, with its token. */
const insider = (org: string, capabilities: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const team = yield* (yield* Groups.Groups).create(Principal.system, org, { name: "team" })
    const role = yield* (yield* Roles.Roles).create(Principal.system, org, { name: "insider", capabilities })
    const identity = yield* (yield* Identities.Identities).create(Principal.system, team.uid, {
      name: "insider",
      claimMatch: { issuer: "https://issuer.invalid", subject: "insider" }
    })
    yield* (yield* RoleBindings.RoleBindings).create(Principal.system, team.uid, {
      identityUid: identity.uid,
      roleUid: role.uid
    })
    return { team: team.uid, identity: identity.uid, token: yield* tokenFor(identity.uid) }
  }).pipe(Effect.orDie)

describe("escalation over HTTP", () => {
  it.scopedLive("identity.update in a folder cannot repoint an organization owner that lives there, v1 or v2", () =>
    Effect.gen(function*() {
      const { org } = yield* member("acme")
      const { team, token } = yield* insider(org, ["identity.update", "identity.list"])
      const victim = yield* (yield* Identities.Identities).create(Principal.system, team, {
        name: "victim",
        claimMatch: { issuer: "https://issuer.invalid", subject: "victim" }
      }).pipe(Effect.orDie)
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org, {
        identityUid: victim.uid,
        roleUid: Role.builtInByName("owner")!.uid
      }).pipe(Effect.orDie)
      const takeover = { issuer: "https://attacker.invalid", subject: "me" }
      const v1 = yield* call("PUT", `/iam/v1/identities/${victim.uid}`, {
        token,
        body: { name: "victim", claimMatch: takeover }
      })
      assert.strictEqual(v1.status, 403, v1.text)
      const v2 = yield* call("PATCH", `/iam/v2beta1/identities/${victim.uid}`, {
        token,
        body: { claimMatch: takeover }
      })
      assert.strictEqual(v2.status, 403, v2.text)
      assert.strictEqual(v2.body.details[0].metadata.capability, "groups.create")
      const renamed = yield* call("PUT", `/iam/v1/identities/${victim.uid}`, {
        token,
        body: { name: "renamed", claimMatch: victim.claimMatch }
      })
      assert.strictEqual(renamed.status, 200, renamed.text)
      assert.deepStrictEqual(renamed.body.claimMatch, victim.claimMatch)
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("role binding hydration shows names only to those who may read them", () =>
    Effect.gen(function*() {
      const { org, token: ownerToken } = yield* member("acme")
      const { team, token } = yield* insider(org, ["role_bindings.list"])
      const listed = yield* call("GET", `/iam/v2beta1/roleBindings?uidp.children_of=${team}`, { token })
      assert.strictEqual(listed.status, 200)
      for (const b of listed.body.roleBindings) {
        assert.strictEqual(b.identity.name, "")
        assert.strictEqual(b.role.name, "")
        assert.strictEqual(b.group.name, "")
      }
      const asOwner = yield* call("GET", `/iam/v2beta1/roleBindings?uidp.children_of=${team}`, { token: ownerToken })
      assert.deepStrictEqual(asOwner.body.roleBindings.map((b: any) => b.role.name), ["insider"])
    }).pipe(Effect.provide(testServer())))
})

describe("invite redemption over HTTP", () => {
  it.scopedLive("POST /iam/v2beta1/groupInvites:redeem binds the caller, with the rules of redeem", () =>
    Effect.gen(function*() {
      const { org } = yield* member("acme")
      const invite = yield* (yield* GroupInvites.GroupInvites).create(Principal.system, org, {
        roleUid: Role.builtInByName("viewer")!.uid,
        singleUse: true
      }).pipe(Effect.orDie)
      const { identity, token } = yield* member("elsewhere", "viewer")
      const redeemed = yield* call("POST", "/iam/v2beta1/groupInvites:redeem", { token, body: { code: invite.code } })
      assert.strictEqual(redeemed.status, 200, redeemed.text)
      assert.strictEqual(redeemed.body.identity.uid, identity)
      assert.strictEqual(redeemed.body.group.uid, org)
      assert.strictEqual(redeemed.body.role.name, "viewer")
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${org}`, { token })).status, 200)
      const again = yield* call("POST", "/iam/v2beta1/groupInvites:redeem", { token, body: { code: invite.code } })
      assert.strictEqual(again.status, 400)
      assert.strictEqual(again.body.code, 9)
      assert.strictEqual(again.body.details[1].violations[0].type, "INVITE_USED")
      const malformed = yield* call("POST", "/iam/v2beta1/groupInvites:redeem", { token, body: { code: 5 } })
      assert.strictEqual(malformed.status, 400)
      assert.deepStrictEqual(malformed.body.details[1].fieldViolations.map((v: any) => v.field), ["code"])
      const unknown = yield* call("POST", "/iam/v2beta1/groupInvites:redeem", {
        token,
        body: { code: `${invite.keyId}.${"A".repeat(43)}` }
      })
      assert.strictEqual(unknown.status, 404)
      assert.strictEqual(
        (yield* call("POST", "/iam/v2beta1/groupInvites:redeem", { body: { code: invite.code } })).status,
        401
      )
    }).pipe(Effect.provide(testServer())))
})
