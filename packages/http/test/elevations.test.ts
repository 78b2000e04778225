/**
 * Just-in-time elevation over REST (DECISIONS §21, docs/api.md §2): an eligibility made, an elevation asked with a
 * reason, refused to its requester as an approver, approved by another owner, deciding at once, and ended with its
 * eligibility; each step an event of the audit trail.
 */
import { type Principal, Role, TokenIssuer, type Uid } from "@arbor/core"
import * as Effect from "effect/Effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

let server: Awaited<ReturnType<typeof startServer>>
let owner: { org: string; identity: string; token: string }
let approver: { org: string; identity: string; token: string }
let deployer: { org: string; identity: string; token: string }

const editor = Role.builtInByName("editor")!.uid
const ownerRole = Role.builtInByName("owner")!.uid

beforeAll(async () => {
  server = await startServer(await freePort(), {})
  owner = await server.runtime.runPromise(member("elevating"))
  approver = await server.runtime.runPromise(member("elevating", "owner"))
  deployer = await server.runtime.runPromise(member("elevating", "viewer"))
}, 30_000)

afterAll(async () => {
  await server?.close()
})

const rest = (method: string, path: string, token: string, body?: unknown) =>
  fetchJson(server.url, method, path, token, body)

/** Whether the deployer may create repos in the organization, as AuthZEN decides it. */
const mayCreateRepos = async () =>
  (await rest("POST", "/access/v1/evaluation", deployer.token, {
    subject: { type: "identity", id: deployer.identity },
    action: { name: "repo.create" },
    resource: { type: "group", id: owner.org }
  })).body.decision as boolean

describe("just-in-time elevation", () => {
  it("eligible, asked with a reason, approved by another owner, granted at once, revoked with its eligibility", async () => {
    const refused = await rest("POST", `/iam/v2beta1/eligibilities/${owner.org}`, owner.token, {
      identityUid: deployer.identity,
      roleUid: editor,
      maxDuration: "2 hours"
    })
    assert.strictEqual(refused.status, 400)
    assert.include(JSON.stringify(refused.body), "maxDuration")
    const made = await rest("POST", `/iam/v2beta1/eligibilities/${owner.org}`, owner.token, {
      identityUid: deployer.identity,
      roleUid: editor,
      maxDuration: "7200s",
      approverRoleUid: ownerRole
    })
    assert.strictEqual(made.status, 200, JSON.stringify(made.body))
    assert.deepInclude(made.body, { identityUid: deployer.identity, maxDuration: "7200s", approverRoleUid: ownerRole })
    const read = await rest("GET", `/iam/v2beta1/eligibilities/${made.body.uid}`, owner.token)
    assert.deepStrictEqual(read.body, made.body)
    const listed = await rest("GET", "/iam/v2beta1/eligibilities", owner.token)
    assert.deepInclude(listed.body.eligibilities, made.body)

    const asked = await rest("POST", `/iam/v2beta1/elevations/${owner.org}`, deployer.token, {
      roleUid: editor,
      reason: "deploy 1.2 (CHG-7)",
      duration: "3600s"
    })
    assert.strictEqual(asked.status, 200, JSON.stringify(asked.body))
    assert.deepInclude(asked.body, { state: "PENDING", reason: "deploy 1.2 (CHG-7)", duration: "3600s" })
    assert.isFalse(await mayCreateRepos(), "pending grants nothing")
    const self = await rest("POST", `/iam/v2beta1/elevations/${asked.body.uid}:approve`, deployer.token, {})
    assert.strictEqual(self.status, 403)
    assert.include(JSON.stringify(self.body), "SELF_APPROVAL")
    const pending = await rest("GET", "/iam/v2beta1/elevations?state=PENDING", approver.token)
    assert.deepStrictEqual(pending.body.elevations.map((e: { uid: string }) => e.uid), [asked.body.uid])
    const mine = await rest("GET", `/iam/v2beta1/elevations?approver=${approver.identity}`, approver.token)
    assert.deepStrictEqual(mine.body.elevations.map((e: { uid: string }) => e.uid), [asked.body.uid], "mine to approve")
    const notMine = await rest("GET", `/iam/v2beta1/elevations?approver=${approver.identity}`, deployer.token)
    assert.strictEqual(notMine.status, 400, "only one's own uid")
    const approved = await rest("POST", `/iam/v2beta1/elevations/${asked.body.uid}:approve`, approver.token, {})
    assert.strictEqual(approved.status, 200, JSON.stringify(approved.body))
    assert.deepInclude(approved.body, { state: "ACTIVE", approverUid: approver.identity })
    assert.isTrue(await mayCreateRepos(), "granted at once")
    const own = await rest("GET", `/iam/v2beta1/elevations/${asked.body.uid}`, deployer.token)
    assert.strictEqual(own.body.state, "ACTIVE")
    const binding = await rest("GET", `/iam/v2beta1/roleBindings/${approved.body.bindingUid}`, owner.token)
    assert.strictEqual(binding.body.expireTime, approved.body.expireTime)

    // Another asked, and denied.
    const again = await rest("POST", `/iam/v2beta1/elevations/${owner.org}`, deployer.token, {
      roleUid: editor,
      reason: "and once more",
      duration: "600s"
    })
    const denied = await rest("POST", `/iam/v2beta1/elevations/${again.body.uid}:deny`, approver.token, {})
    assert.deepInclude(denied.body, { state: "DENIED", approverUid: approver.identity })

    const deleted = await rest("DELETE", `/iam/v2beta1/eligibilities/${made.body.uid}`, owner.token)
    assert.strictEqual(deleted.status, 200, JSON.stringify(deleted.body))
    assert.isFalse(await mayCreateRepos(), "ended with its eligibility")
    assert.strictEqual(
      (await rest("GET", `/iam/v2beta1/elevations/${asked.body.uid}`, owner.token)).body.state,
      "REVOKED"
    )
    const logged = await rest("GET", `/events/v2beta1/events?subject=${asked.body.uid}`, owner.token)
    assert.deepStrictEqual(
      logged.body.events.map((e: { type: string }) => e.type),
      [
        "dev.chainguard.api.iam.elevations.created.v1",
        "dev.chainguard.api.iam.elevations.updated.v1",
        "dev.chainguard.api.iam.elevations.updated.v1"
      ]
    )
  })

  it("a narrowed token acts only within its narrowing: it neither approves, reads nor asks outside it", async () => {
    const org = owner.org
    const folder = async (name: string) =>
      (await rest("POST", `/iam/v2beta1/groups/${org}`, owner.token, { name })).body.uid as string
    const [fa, fb] = [await folder("narrow-fa"), await folder("narrow-fb")]
    const eligible = await rest("POST", `/iam/v2beta1/eligibilities/${fa}`, owner.token, {
      identityUid: deployer.identity,
      roleUid: editor,
      maxDuration: "3600s",
      approverRoleUid: ownerRole
    })
    assert.strictEqual(eligible.status, 200, JSON.stringify(eligible.body))
    // As `/sts/exchange?cap=repo.list&scope=<fb>` narrows them.
    const toFb = { capabilities: ["repo.list" as const], scopes: [fb as Uid.Uid] }
    const narrowedApprover = await narrowedToken(approver.identity, toFb)
    const narrowedDeployer = await narrowedToken(deployer.identity, toFb)
    const refusedAsk = await rest("POST", `/iam/v2beta1/elevations/${fa}`, narrowedDeployer, {
      roleUid: editor,
      reason: "outside its narrowing",
      duration: "600s"
    })
    assert.strictEqual(refusedAsk.status, 403, JSON.stringify(refusedAsk.body))
    assert.include(JSON.stringify(refusedAsk.body), "TOKEN_NARROWED")
    const asked = await rest("POST", `/iam/v2beta1/elevations/${fa}`, deployer.token, {
      roleUid: editor,
      reason: "deploy",
      duration: "600s"
    })
    assert.strictEqual(asked.body.state, "PENDING")
    for (const token of [narrowedApprover, narrowedDeployer]) {
      assert.strictEqual((await rest("GET", `/iam/v2beta1/elevations/${asked.body.uid}`, token)).status, 404)
    }
    const listed = await rest("GET", "/iam/v2beta1/elevations", narrowedApprover)
    assert.deepStrictEqual(listed.body.elevations ?? [], [])
    const mine = await rest("GET", `/iam/v2beta1/elevations?approver=${approver.identity}`, narrowedApprover)
    assert.deepStrictEqual(mine.body.elevations ?? [], [])
    for (const act of ["approve", "deny"]) {
      const refused = await rest("POST", `/iam/v2beta1/elevations/${asked.body.uid}:${act}`, narrowedApprover, {})
      assert.strictEqual(refused.status, 404, JSON.stringify(refused.body))
    }
    const still = await rest("GET", `/iam/v2beta1/elevations/${asked.body.uid}`, owner.token)
    assert.strictEqual(still.body.state, "PENDING", "neither approved nor denied")
  })

  it("an elevation's binding changes only through the elevation: no update or delete makes it outlast it", async () => {
    const org = owner.org
    const team = (await rest("POST", `/iam/v2beta1/groups/${org}`, owner.token, { name: "lasting" })).body.uid
    const updater = await rest("POST", `/iam/v2beta1/roles/${org}`, owner.token, {
      name: "binding-updater",
      capabilities: ["role_bindings.update", "role_bindings.list", "groups.list"]
    })
    assert.strictEqual(updater.status, 200, JSON.stringify(updater.body))
    await rest("POST", `/iam/v2beta1/eligibilities/${team}`, owner.token, {
      identityUid: deployer.identity,
      roleUid: updater.body.uid,
      maxDuration: "600s"
    })
    const granted = await rest("POST", `/iam/v2beta1/elevations/${team}`, deployer.token, {
      roleUid: updater.body.uid,
      reason: "make it last",
      duration: "600s"
    })
    assert.strictEqual(granted.body.state, "ACTIVE", JSON.stringify(granted.body))
    const binding = `/iam/v2beta1/roleBindings/${granted.body.bindingUid}`
    for (const token of [deployer.token, owner.token]) {
      const patched = await rest("PATCH", `${binding}?update_mask=expireTime`, token, { expireTime: null })
      assert.strictEqual(patched.status, 400, JSON.stringify(patched.body))
      assert.include(JSON.stringify(patched.body), "ELEVATION_BINDING")
    }
    const deleted = await rest("DELETE", binding, owner.token)
    assert.strictEqual(deleted.status, 400, JSON.stringify(deleted.body))
    assert.include(deleted.body.message, `made by elevation ${granted.body.uid}`)
    const kept = await rest("GET", binding, owner.token)
    assert.strictEqual(kept.body.expireTime, granted.body.expireTime)
    assert.strictEqual(kept.body.elevationUid, granted.body.uid)
  })

  it("a role an eligibility names as its approver cannot be deleted while it does", async () => {
    const org = owner.org
    const approvers = await rest("POST", `/iam/v2beta1/roles/${org}`, owner.token, {
      name: "change-approvers",
      capabilities: ["groups.list", "role_bindings.list"]
    })
    const eligibility = await rest("POST", `/iam/v2beta1/eligibilities/${org}`, owner.token, {
      identityUid: deployer.identity,
      roleUid: Role.builtInByName("registry.pull")!.uid,
      maxDuration: "600s",
      approverRoleUid: approvers.body.uid
    })
    assert.strictEqual(eligibility.status, 200, JSON.stringify(eligibility.body))
    const refused = await rest("DELETE", `/iam/v2beta1/roles/${approvers.body.uid}`, owner.token)
    assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
    assert.include(JSON.stringify(refused.body), "RESOURCE_IN_USE")
    assert.include(refused.body.message, "approver role")
    await rest("DELETE", `/iam/v2beta1/eligibilities/${eligibility.body.uid}`, owner.token)
    assert.strictEqual((await rest("DELETE", `/iam/v2beta1/roles/${approvers.body.uid}`, owner.token)).status, 200)
  })

  it("an identity deleted takes its eligibilities with it", async () => {
    const leaving = await rest("POST", `/iam/v2beta1/identities/${owner.org}`, owner.token, {
      name: "leaving",
      claimMatch: { issuer: "https://issuer.example.com", subject: "leaving" }
    })
    const eligibility = await rest("POST", `/iam/v2beta1/eligibilities/${owner.org}`, owner.token, {
      identityUid: leaving.body.uid,
      roleUid: editor,
      maxDuration: "600s",
      approverRoleUid: ownerRole
    })
    assert.strictEqual(eligibility.status, 200, JSON.stringify(eligibility.body))
    assert.strictEqual((await rest("DELETE", `/iam/v2beta1/identities/${leaving.body.uid}`, owner.token)).status, 200)
    const after = await rest("GET", `/iam/v2beta1/eligibilities/${eligibility.body.uid}`, owner.token)
    assert.strictEqual(after.status, 404, JSON.stringify(after.body))
  })

  it("a group that holds an eligibility is not deleted from under it", async () => {
    const folder = (await rest("POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "eligible-here" })).body
    const eligibility = await rest("POST", `/iam/v2beta1/eligibilities/${folder.uid}`, owner.token, {
      identityUid: deployer.identity,
      roleUid: editor,
      maxDuration: "600s"
    })
    const refused = await rest("DELETE", `/iam/v2beta1/groups/${folder.uid}`, owner.token)
    assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
    assert.strictEqual(refused.body.message, "Precondition failed: cannot delete group with child eligibilities")
    await rest("DELETE", `/iam/v2beta1/eligibilities/${eligibility.body.uid}`, owner.token)
    assert.strictEqual((await rest("DELETE", `/iam/v2beta1/groups/${folder.uid}`, owner.token)).status, 200)
  })
})

/** A token of `identity` narrowed as the token exchange's `cap` and `scope` narrow one. */
const narrowedToken = (identity: string, narrowed: Principal.Narrowing) =>
  server.runtime.runPromise(Effect.flatMap(TokenIssuer.TokenIssuer, (issuer) =>
    Effect.map(
      issuer.mint(identity as Uid.Uid, { iss: "https://tests.invalid", sub: "tests" }, undefined, { narrowed }),
      (minted) => minted.token
    )))
