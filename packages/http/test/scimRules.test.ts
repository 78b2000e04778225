/**
 * What SCIM holds a client to (docs/api.md §13): ETags, attributes, PATCHes that would empty a user, the organization's
 * last active owner, passwords never kept, pushed groups' roles held and lost at once, and a rate per token.
 */
import { Role } from "@arbor/core"
import { assert, describe, it } from "vitest"
import {
  claimsOf,
  perMinute,
  provisionedOrganization,
  request,
  scim,
  server,
  signIn,
  useScimServer
} from "./scimSupport.js"

describe("SCIM provisioning over HTTP: what SCIM holds a client to", () => {
  useScimServer()

  it("ETags: a write with a stale If-Match is 412 and changes nothing; If-None-Match of the current one is 304", async () => {
    const { token, users } = await provisionedOrganization("scim-etags")
    const created = await scim("POST", users, token, { userName: "eve@example.com", externalId: "sub-eve" })
    const at = `${users}/${created.body.id}`
    const first = created.body.meta.version
    assert.strictEqual(created.headers.get("etag"), first)
    const withHeader = (method: string, headers: Record<string, string>, body?: unknown) =>
      fetch(`${server.url}${at}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/scim+json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const replaced = await withHeader("PUT", { "if-match": first }, {
      userName: "eve@example.com",
      externalId: "sub-eve",
      displayName: "Eve"
    })
    assert.strictEqual(replaced.status, 200)
    const current = replaced.headers.get("etag")!
    assert.notStrictEqual(current, first)
    const deactivate = {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", path: "active", value: false }]
    }
    for (
      const [method, body] of [
        ["PUT", { userName: "eve@example.com", externalId: "sub-eve", displayName: "Stale" }],
        ["PATCH", deactivate],
        ["DELETE", undefined]
      ] as const
    ) {
      const stale = await withHeader(method, { "if-match": first }, body)
      const error = await stale.json() as { status: string; schemas: Array<string> }
      assert.deepStrictEqual([stale.status, error.status], [412, "412"], method)
    }
    const kept = await scim("GET", at, token)
    assert.deepInclude(kept.body, { displayName: "Eve", active: true })
    assert.strictEqual(kept.body.meta.version, current, "nothing changed")
    const notModified = await withHeader("GET", { "if-none-match": current })
    assert.strictEqual(notModified.status, 304)
    assert.strictEqual((await withHeader("GET", { "if-none-match": first })).status, 200)
    assert.strictEqual((await withHeader("PATCH", { "if-match": `"0", ${current}` }, deactivate)).status, 200)
    assert.strictEqual((await withHeader("DELETE", { "if-match": "*" })).status, 204)
  })

  it("attributes and excludedAttributes shape every answer; POST .search lists as GET does", async () => {
    const { idp, token, users } = await provisionedOrganization("scim-attributes")
    const created = await scim("POST", users, token, {
      userName: "ada@example.com",
      externalId: "sub-ada",
      name: { givenName: "Ada", familyName: "Lovelace" },
      emails: [{ value: "ada@example.com", type: "work", primary: true }]
    })
    const at = `${users}/${created.body.id}`
    const only = await scim("GET", `${at}?attributes=userName,name.givenName`, token)
    assert.deepStrictEqual(only.body, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      id: created.body.id,
      userName: "ada@example.com",
      name: { givenName: "Ada" }
    })
    const without = await scim(
      "GET",
      `${at}?excludedAttributes=emails,urn:ietf:params:scim:schemas:core:2.0:User:name,id,meta`,
      token
    )
    assert.notProperty(without.body, "emails")
    assert.notProperty(without.body, "name")
    assert.notProperty(without.body, "meta")
    assert.strictEqual(without.body.id, created.body.id, "id is always returned")
    const listed = await scim(
      "GET",
      `${users}?filter=${encodeURIComponent("userName eq \"ada@example.com\"")}&attributes=emails.value`,
      token
    )
    assert.deepStrictEqual(listed.body.Resources[0].emails, [{ value: "ada@example.com" }])
    assert.notProperty(listed.body.Resources[0], "userName")
    const search = {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
      filter: "externalId eq \"sub-ada\"",
      attributes: ["userName"],
      startIndex: 1,
      count: 10
    }
    for (const path of [`${users}/.search`, `/scim/v2/${idp}/.search`]) {
      const found = await scim("POST", path, token, search)
      assert.strictEqual(found.status, 200, JSON.stringify(found.body))
      assert.deepStrictEqual(found.body.totalResults, 1, path)
      assert.deepStrictEqual(Object.keys(found.body.Resources[0]).sort(), ["id", "schemas", "userName"], path)
    }
    const bad = await scim("POST", `${users}/.search`, token, { filter: "userName eq \"x\"" })
    assert.deepStrictEqual([bad.status, bad.body.scimType], [400, "invalidSyntax"], "no SearchRequest schema")
    assert.strictEqual((await scim("GET", `${users}/.search`, token)).status, 404)
  })

  it("a PATCH that removes active, userName or externalId is refused, naming why, and changes nothing", async () => {
    const { token, users } = await provisionedOrganization("scim-remove")
    const created = await scim("POST", users, token, { userName: "rem@example.com", externalId: "sub-rem" })
    for (const path of ["active", "userName", "urn:ietf:params:scim:schemas:core:2.0:User:externalId"]) {
      const removed = await scim("PATCH", `${users}/${created.body.id}`, token, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "remove", path }]
      })
      assert.deepStrictEqual([removed.status, removed.body.scimType], [400, "mutability"], path)
    }
    const kept = await scim("GET", `${users}/${created.body.id}`, token)
    assert.deepInclude(kept.body, { active: true, userName: "rem@example.com", externalId: "sub-rem" })
    assert.strictEqual(kept.body.meta.version, created.body.meta.version)
  })

  it("no SCIM write leaves the organization without an active owner; the refused one changes nothing", async () => {
    const { idp, owner, token, users } = await provisionedOrganization("scim-owners")
    const patch = (id: string, value: unknown) =>
      scim("PATCH", `${users}/${id}`, token, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", value }]
      })
    // The organization's owners become two people of its provider: one it provisions, one who signed in.
    const provisioned = await scim("POST", users, token, { userName: "pat@example.com", externalId: "sub-pat" })
    assert.strictEqual(provisioned.status, 201, JSON.stringify(provisioned.body))
    const ownerRole = Role.builtInByName("owner")!.uid
    const bound = await request("POST", `/iam/v2beta1/roleBindings/${owner.org}`, owner.token, {
      identityUid: provisioned.body.id,
      roleUid: ownerRole
    })
    assert.strictEqual(bound.status, 200, JSON.stringify(bound.body))
    // Carol signs in through the provider and redeems an owner's invite.
    const carol = await signIn("carol", "scim-owners")
    const carolToken = carol.get("token")!
    const carolUid: string = claimsOf(carolToken).sub
    const invite = await request("POST", `/iam/v2beta1/groupInvites/${owner.org}`, owner.token, { roleUid: ownerRole })
    assert.strictEqual(invite.status, 200, JSON.stringify(invite.body))
    const redeemed = await request("POST", "/iam/v2beta1/groupInvites:redeem", carolToken, { code: invite.body.code })
    assert.strictEqual(redeemed.status, 200, JSON.stringify(redeemed.body))
    const bindings = await request("GET", `/iam/v2beta1/roleBindings?uidp.children_of=${owner.org}`, owner.token)
    const others = bindings.body.roleBindings.filter((binding: { identity: { uid: string }; role: { uid: string } }) =>
      ![provisioned.body.id, carolUid].includes(binding.identity.uid) && binding.role.uid === ownerRole
    )
    assert.lengthOf(others, 2, "the organization's first two owners")
    for (const binding of others) {
      assert.strictEqual((await request("DELETE", `/iam/v2beta1/roleBindings/${binding.uid}`, carolToken)).status, 200)
    }

    // Deactivating one owner leaves the other.
    assert.strictEqual((await patch(provisioned.body.id, { active: false })).status, 200)
    // Linking the last one and deactivating her at once is refused, in SCIM's shape, and creates no user.
    const linked = await scim("POST", users, token, {
      userName: "carol@example.com",
      externalId: "sub-carol",
      active: false
    })
    assert.deepInclude(linked.body, { status: "409", scimType: "mutability" }, JSON.stringify(linked.body))
    assert.strictEqual(linked.status, 409)
    const lookup = `${users}?filter=${encodeURIComponent("externalId eq \"sub-carol\"")}`
    assert.strictEqual((await scim("GET", lookup, token)).body.totalResults, 0)
    // Linked while active, she can be neither deactivated (by PATCH, in Entra's spelling too, or by PUT) nor deleted.
    const active = await scim("POST", users, token, { userName: "carol@example.com", externalId: "sub-carol" })
    assert.strictEqual(active.status, 201, JSON.stringify(active.body))
    assert.strictEqual(active.body.id, carolUid)
    for (
      const refused of [
        await patch(carolUid, { active: false }),
        await scim("PATCH", `${users}/${carolUid}`, token, {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
          Operations: [{ op: "Replace", path: "active", value: "False" }]
        }),
        await scim("PUT", `${users}/${carolUid}`, token, {
          userName: "carol@example.com",
          externalId: "sub-carol",
          active: false
        }),
        await scim("DELETE", `${users}/${carolUid}`, token)
      ]
    ) {
      assert.strictEqual(refused.status, 409, JSON.stringify(refused.body))
      assert.strictEqual(refused.body.scimType, "mutability")
    }
    assert.isTrue((await scim("GET", `${users}/${carolUid}`, token)).body.active)
    // She still acts as an owner: she can turn provisioning off.
    const path = `/iam/v2beta1/identityProviders/${idp}`
    const read = await request("GET", path, carolToken)
    assert.strictEqual(read.status, 200)
    const off = await request("POST", `${path}:setScimEnabled`, carolToken, {
      enabled: false,
      etag: read.body.scim.etag
    })
    assert.strictEqual(off.status, 200, JSON.stringify(off.body))
  })

  it("a password, in any spelling or name (userPassword, passwords), schema extension or PATCH, is never kept, answered, logged nor delivered", async () => {
    const { owner, token, users } = await provisionedOrganization("scim-hidden")
    const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    const created = await scim("POST", users, token, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", enterprise],
      userName: "dana@example.com",
      externalId: "sub-dana",
      Password: "secret-one",
      PASSWORD: "secret-two",
      [enterprise]: { department: "ops", password: "secret-three" },
      [`${enterprise}:Password`]: "secret-four",
      // Other names vendors and extensions give it: a password in any name is none of Arbor's to keep.
      userPassword: "secret-nine",
      passwords: [{ value: "secret-ten", type: "old" }],
      [enterprise + ":newPassword"]: "secret-eleven",
      urn: { password_hash: "secret-twelve" }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.body[enterprise].department, "ops")
    const id: string = created.body.id
    const patched = await scim("PATCH", `${users}/${id}`, token, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [
        { op: "add", path: "PassWord", value: "secret-five" },
        { op: "replace", value: { pAssword: "secret-six", displayName: "Dana" } },
        { op: "add", path: `${enterprise}:password`, value: "secret-seven" },
        { op: "replace", path: "userPassword", value: "secret-thirteen" },
        { op: "add", value: { passwords: ["secret-fourteen"], oldPassword: "secret-fifteen" } }
      ]
    })
    assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
    assert.strictEqual(patched.body.displayName, "Dana")
    const replaced = await scim("PUT", `${users}/${id}`, token, {
      userName: "dana@example.com",
      externalId: "sub-dana",
      displayName: "Dana",
      password: "secret-eight",
      userPassword: "secret-sixteen"
    })
    assert.strictEqual(replaced.status, 200, JSON.stringify(replaced.body))
    const seen = [
      created.body,
      patched.body,
      replaced.body,
      (await scim("GET", `${users}/${id}`, token)).body,
      (await request("GET", `/events/v2beta1/events?uidp.descendants_of=${owner.org}`, owner.token)).body
    ].map((body) => JSON.stringify(body))
    assert.include(seen[4], "dana@example.com", "the change log holds the user's writes")
    for (const text of seen) assert.notMatch(text, /secret-|password/i, text)
  })

  it("pushed groups: a member holds the mapped role on the token already issued, and loses it at once when removed (Entra's and Okta's requests)", async () => {
    const { idp, owner, token, users } = await provisionedOrganization("scim-groups")
    const groups = `/scim/v2/${idp}/Groups`
    const editor = Role.builtInByName("editor")!.uid
    const mapped = await request("POST", `/iam/v2beta1/externalGroupRoleMappings/${idp}`, owner.token, {
      externalGroupId: "Engineering",
      roleUid: editor
    })
    assert.strictEqual(mapped.status, 200, JSON.stringify(mapped.body))
    const user = await scim("POST", users, token, { userName: "gina@example.com", externalId: "sub-scim-gina" })
    const apiToken = (await signIn("scim-gina", "scim-groups")).get("token")!
    /** Whether the person's token, issued before any of the changes below, may create repos in the organization. */
    const mayCreate = async () => {
      const asked = await request("POST", "/access/v1/evaluation", apiToken, {
        subject: { type: "identity", id: user.body.id },
        action: { name: "repo.create" },
        resource: { type: "group", id: owner.org }
      })
      assert.strictEqual(asked.status, 200, JSON.stringify(asked.body))
      return asked.body.decision as boolean
    }
    assert.isFalse(await mayCreate())

    // Microsoft Entra: it looks the group up by name without its members, creates it, then adds members by PATCH.
    const lookup = `${groups}?excludedAttributes=members&filter=${encodeURIComponent("displayName eq \"Engineering\"")}`
    assert.deepInclude((await scim("GET", lookup, token)).body, { totalResults: 0 })
    const created = await scim("POST", groups, token, {
      schemas: [
        "urn:ietf:params:scim:schemas:core:2.0:Group",
        "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"
      ],
      externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
      displayName: "Engineering",
      members: []
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.headers.get("location"), `${server.url}${groups}/${created.body.id}`)
    assert.deepInclude(created.body, { displayName: "Engineering" })
    assert.notProperty(created.body, "members", "unassigned while it has none (RFC 7643 §2.5)")
    const found = await scim("GET", lookup, token)
    assert.deepInclude(found.body, { totalResults: 1 })
    assert.notProperty(found.body.Resources[0], "members")
    // A search at the root finds users and groups, one page across both (RFC 7644 §3.4.3).
    const root = (body: object) =>
      scim("POST", `/scim/v2/${idp}/.search`, token, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
        ...body
      })
    const everything = await root({})
    assert.deepInclude(everything.body, { totalResults: 2 })
    assert.deepStrictEqual(everything.body.Resources.map((r: { id: string }) => r.id), [user.body.id, created.body.id])
    const second = await root({ startIndex: 2, count: 1 })
    assert.deepStrictEqual(second.body.Resources.map((r: { id: string }) => r.id), [created.body.id], "paged across")
    const named = await root({ filter: "displayName eq \"Engineering\"" })
    assert.deepStrictEqual(named.body.Resources.map((r: { id: string }) => r.id), [created.body.id], "groups only")
    assert.strictEqual((await root({ filter: "title eq \"x\"" })).status, 400, "a filter neither type can read")
    const at = `${groups}/${created.body.id}`
    const patch = (...Operations: ReadonlyArray<unknown>) =>
      scim("PATCH", at, token, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations })
    const added = await patch({ op: "Add", path: "members", value: [{ value: user.body.id }] })
    assert.strictEqual(added.status, 200, JSON.stringify(added.body))
    assert.deepStrictEqual(added.body.members.map((m: { value: string }) => m.value), [user.body.id])
    assert.isTrue(await mayCreate())
    const repo = await request("POST", `/registry/v1/repos/${owner.org}`, apiToken, { name: "made-as-member" })
    assert.strictEqual(repo.status, 200, JSON.stringify(repo.body))
    const removed = await patch({ op: "Remove", path: "members", value: [{ value: user.body.id }] })
    assert.deepStrictEqual([removed.status, removed.body.members], [200, undefined], "none left: unassigned")
    assert.isFalse(await mayCreate())
    const refused = await request("POST", `/registry/v1/repos/${owner.org}`, apiToken, { name: "made-after" })
    assert.strictEqual(refused.status, 403)

    // Okta: adds with display names, renames with a pathless replace, removes by a value filter.
    await patch({ op: "add", path: "members", value: [{ value: user.body.id, display: "gina@example.com" }] })
    assert.isTrue(await mayCreate())
    const renamed = await patch({ op: "replace", value: { id: created.body.id, displayName: "Engineers" } })
    assert.deepInclude(renamed.body, { displayName: "Engineers" })
    assert.isFalse(await mayCreate(), "the mapping names the group as it was called")
    await patch({ op: "replace", path: "displayName", value: "Engineering" })
    assert.isTrue(await mayCreate())
    await patch({ op: "remove", path: `members[value eq "${user.body.id}"]` })
    assert.isFalse(await mayCreate())

    // Only the provider's own users may be members: anyone else is refused, and nothing changes.
    const before = (await scim("GET", at, token)).body.meta.version
    const stranger = await patch({ op: "add", path: "members", value: [{ value: owner.identity }] })
    assert.deepInclude(stranger.body, { status: "400", scimType: "invalidValue" })
    assert.strictEqual((await scim("GET", at, token)).body.meta.version, before)
    // Another provider's client cannot read or change the group.
    const other = await provisionedOrganization("scim-groups-other")
    assert.strictEqual((await scim("GET", `/scim/v2/${other.idp}/Groups/${created.body.id}`, other.token)).status, 404)
    assert.strictEqual((await scim("GET", at, other.token)).status, 401)

    // A group deleted takes what it gave with it.
    await patch({ op: "add", path: "members", value: [{ value: user.body.id }] })
    assert.isTrue(await mayCreate())
    assert.strictEqual((await scim("DELETE", at, token)).status, 204)
    assert.isFalse(await mayCreate())
    assert.strictEqual((await scim("GET", at, token)).status, 404)
  })

  it("every SCIM write sent no body, null, an array, a number or a string is a 400 in SCIM's shape, never 5xx", async () => {
    const { token, users } = await provisionedOrganization("scim-bodies")
    const made = await scim("POST", users, token, { userName: "ada@example.com", externalId: "sub-ada" })
    assert.strictEqual(made.status, 201, JSON.stringify(made.body))
    const groups = users.replace(/Users$/, "Groups")
    const pushed = await scim("POST", groups, token, { displayName: "engineers" })
    assert.strictEqual(pushed.status, 201, JSON.stringify(pushed.body))
    const answers: Array<string> = []
    for (
      const [method, path] of [
        ["POST", users],
        ["PUT", `${users}/${made.body.id}`],
        ["PATCH", `${users}/${made.body.id}`],
        ["POST", groups],
        ["PUT", `${groups}/${pushed.body.id}`],
        ["PATCH", `${groups}/${pushed.body.id}`]
      ] as const
    ) {
      for (const body of [undefined, "null", "[]", "5", "\"x\""]) {
        const answer = await scim(method, path, token, body)
        answers.push(
          `${method} ${path.split("/").slice(-2).join("/")} ${
            body ?? "(none)"
          }: ${answer.status} ${answer.body?.status}`
        )
      }
    }
    assert.deepStrictEqual(answers.filter((a) => !/: 400 400$/.test(a)), [])
  })

  it("a token past its rate is answered 429 with Retry-After", async () => {
    const { token, users } = await provisionedOrganization("scim-rate")
    let last = await scim("GET", users, token)
    for (let n = 1; n <= perMinute && last.status === 200; n++) last = await scim("GET", users, token)
    assert.strictEqual(last.status, 429)
    assert.strictEqual(last.body.status, "429")
    assert.isAtLeast(Number(last.headers.get("retry-after")), 1)
  })
})
