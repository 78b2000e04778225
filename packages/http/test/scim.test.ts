/**
 * SCIM provisioning (docs/api.md §13) against the server, with the requests Okta's and Microsoft Entra's provisioning
 * clients send as their documentation shows them, and people signing in through a real OpenID provider
 * (`oidc-provider`): a deprovisioned person's sign-ins, refresh tokens and API tokens stop at their next use.
 *
 * Here the credential, Okta's and Entra's provisioning, and discovery; what SCIM holds a client to in
 * `scimRules.test.ts`.
 */
import { assert, describe, it } from "vitest"
import {
  claimsOf,
  provisionedOrganization,
  refresh,
  request,
  scim,
  server,
  signIn,
  useScimServer
} from "./scimSupport.js"

describe("SCIM provisioning over HTTP", () => {
  useScimServer()

  it("the credential over REST: generated once, shown on the provider, regenerated with the etag, revoked", async () => {
    const { endpointUrl, idp, owner, token, users } = await provisionedOrganization("scim-credential")
    assert.strictEqual(endpointUrl, `${server.url}/scim/v2/${idp}`)
    const path = `/iam/v2beta1/identityProviders/${idp}`
    const read = await request("GET", path, owner.token)
    assert.deepInclude(read.body.scim, { enabled: true, endpointUrl, credentialState: "CREDENTIAL_STATE_LIVE" })
    const again = await request("POST", `${path}:generateScimToken`, owner.token, {})
    assert.strictEqual(again.status, 400)
    assert.strictEqual(again.body.details[1].violations[0].type, "SCIM_TOKEN_EXISTS")
    const stale = await request("POST", `${path}:regenerateScimToken`, owner.token, { etag: "1" })
    assert.strictEqual(stale.status, 409)
    const regenerated = await request("POST", `${path}:regenerateScimToken`, owner.token, {
      etag: read.body.scim.etag,
      overlap: "0s"
    })
    assert.strictEqual(regenerated.status, 200)
    assert.isUndefined(regenerated.body.previousTokenExpireTime)
    assert.strictEqual(regenerated.body.requestedOverlap, "0s")
    assert.strictEqual((await scim("GET", users, token)).status, 401)
    assert.strictEqual((await scim("GET", users, regenerated.body.token)).status, 200)
    const revoked = await request("POST", `${path}:revokeScimToken`, owner.token, {})
    assert.deepInclude(revoked.body, { identityProviderUid: idp, enabled: true })
    const refused = await scim("GET", users, regenerated.body.token)
    assert.strictEqual(refused.status, 401)
    assert.deepStrictEqual(refused.body.schemas, ["urn:ietf:params:scim:api:messages:2.0:Error"])
    assert.strictEqual(refused.headers.get("www-authenticate"), "Bearer")
    assert.strictEqual(
      (await request("GET", path, owner.token)).body.scim.credentialState,
      "CREDENTIAL_STATE_REVOKED"
    )
  })

  it("Okta provisions and deactivates; the person's sign-ins, refresh and API tokens stop; Entra reactivates", async () => {
    const { owner, token, users } = await provisionedOrganization("scim-okta")
    // Okta's create (its SCIM 2.0 guide): the user's Okta id as externalId, which is their sub at sign-in.
    const created = await scim("POST", users, token, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      userName: "scim-ann@example.com",
      name: { givenName: "Ann", familyName: "Scim" },
      emails: [{ primary: true, value: "scim-ann@example.com", type: "work" }],
      displayName: "Ann Scim",
      locale: "en-US",
      externalId: "sub-scim-ann",
      groups: [],
      password: "1mz050nq",
      active: true
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.headers.get("content-type"), "application/scim+json")
    assert.strictEqual(created.headers.get("location"), `${server.url}${users}/${created.body.id}`)
    assert.deepInclude(created.body, { userName: "scim-ann@example.com", externalId: "sub-scim-ann", active: true })
    assert.notProperty(created.body, "password")
    assert.strictEqual(created.body.meta.resourceType, "User")
    // Okta looks a user up before creating one.
    const found = await scim(
      "GET",
      `${users}?filter=${encodeURIComponent("userName eq \"scim-ann@example.com\"")}&startIndex=1&count=100`,
      token
    )
    assert.deepInclude(found.body, { totalResults: 1, startIndex: 1, itemsPerPage: 1 })
    assert.strictEqual(found.body.Resources[0].id, created.body.id)
    const duplicate = await scim("POST", users, token, { userName: "SCIM-ANN@example.com", externalId: "sub-other" })
    assert.deepInclude(duplicate.body, { status: "409", scimType: "uniqueness" })

    // The person signs in through the organization's provider: the SCIM user's id is their identity.
    const first = await signIn("scim-ann", "scim-okta")
    const apiToken = first.get("token")!
    assert.strictEqual(claimsOf(apiToken).sub, created.body.id)
    const groups = await request("GET", "/iam/v2beta1/groups", apiToken)
    assert.strictEqual(groups.status, 200)
    assert.deepStrictEqual(groups.body.groups.map((g: { uid: string }) => g.uid), [owner.org])

    // Okta deactivates: `replace` without a path, its value an object.
    const deactivated = await scim("PATCH", `${users}/${created.body.id}`, token, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "replace", value: { active: false } }]
    })
    assert.strictEqual(deactivated.status, 200, JSON.stringify(deactivated.body))
    assert.isFalse(deactivated.body.active)
    assert.strictEqual((await request("GET", "/iam/v2beta1/groups", apiToken)).status, 401)
    assert.strictEqual((await refresh(first.get("refresh_token")!)).status, 401)
    const refusedSignIn = await signIn("scim-ann", "scim-okta")
    assert.isNull(refusedSignIn.get("token"))
    assert.strictEqual(refusedSignIn.get("status_code"), "401")

    // Microsoft Entra reactivates: `"op": "Replace"`, the value a string.
    const reactivated = await scim("PATCH", `${users}/${created.body.id}`, token, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "Replace", path: "active", value: "True" }]
    })
    assert.isTrue(reactivated.body.active)
    const back = await signIn("scim-ann", "scim-okta")
    assert.strictEqual((await request("GET", "/iam/v2beta1/groups", back.get("token")!)).status, 200)
    assert.strictEqual((await refresh(back.get("refresh_token")!)).status, 200)

    // Entra deactivates as it does ("False"), then deletes: gone from SCIM, and still no sign-in.
    const entraOff = await scim("PATCH", `${users}/${created.body.id}`, token, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "Replace", path: "active", value: "False" }]
    })
    assert.isFalse(entraOff.body.active)
    assert.strictEqual((await scim("DELETE", `${users}/${created.body.id}`, token)).status, 204)
    const gone = await scim("GET", `${users}/${created.body.id}`, token)
    assert.deepInclude(gone.body, { status: "404", schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"] })
    assert.isNull((await signIn("scim-ann", "scim-okta")).get("token"))
  })

  it("Entra's create, replace and lookups by externalId; paging; bad requests answered in SCIM's format", async () => {
    const { token, users } = await provisionedOrganization("scim-entra")
    // Entra's create (its SCIM guide): its object id as externalId, an enterprise extension beside the core.
    const created = await scim("POST", users, token, {
      schemas: [
        "urn:ietf:params:scim:schemas:core:2.0:User",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
      ],
      externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
      userName: "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1",
      active: true,
      emails: [{ primary: true, type: "work", value: "Test_User_fd0ea19b@testuser.com" }],
      meta: { resourceType: "User" },
      name: { formatted: "givenName familyName", familyName: "familyName", givenName: "givenName" },
      roles: [],
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "Engineering" }
    })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.include(created.body.schemas, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User")
    const byExternalId = await scim(
      "GET",
      `${users}?filter=${encodeURIComponent("externalId eq \"0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef\"")}`,
      token
    )
    assert.strictEqual(byExternalId.body.totalResults, 1)
    const none = await scim("GET", `${users}?filter=${encodeURIComponent("userName eq \"nobody\"")}`, token)
    assert.deepInclude(none.body, { totalResults: 0, Resources: [] })
    const replaced = await scim("PUT", `${users}/${created.body.id}`, token, {
      ...created.body,
      displayName: "Renamed",
      active: false
    })
    assert.deepInclude(replaced.body, { displayName: "Renamed", active: false })
    for (const n of [1, 2, 3]) {
      assert.strictEqual(
        (await scim("POST", users, token, { userName: `user${n}`, externalId: `id-${n}` })).status,
        201
      )
    }
    const page = await scim("GET", `${users}?startIndex=2&count=2`, token)
    assert.deepInclude(page.body, { totalResults: 4, startIndex: 2, itemsPerPage: 2 })
    assert.deepStrictEqual(page.body.Resources.map((u: { userName: string }) => u.userName), ["user1", "user2"])

    const badFilter = await scim("GET", `${users}?filter=${encodeURIComponent("displayName co \"x\"")}`, token)
    assert.deepInclude(badFilter.body, { status: "400", scimType: "invalidFilter" })
    const noExternalId = await scim("POST", users, token, { userName: "lonely" })
    assert.deepInclude(noExternalId.body, { status: "400", scimType: "invalidValue" })
    assert.match(noExternalId.body.detail, /externalId/)
    const badPatch = await scim("PATCH", `${users}/${created.body.id}`, token, {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
      Operations: [{ op: "remove" }]
    })
    assert.strictEqual(badPatch.body.status, "400")
    const wrongType = await request("POST", users, token, "{}", "text/plain")
    assert.strictEqual(wrongType.status, 400)
    assert.deepStrictEqual(wrongType.body.schemas, ["urn:ietf:params:scim:api:messages:2.0:Error"])
    const large = await scim("POST", users, token, {
      userName: "big",
      externalId: "big",
      title: "x".repeat(256 * 1024)
    })
    assert.deepStrictEqual([large.status, large.body.status], [413, "413"])
    assert.match(large.body.detail, /262144 bytes/)
    // Nothing refused was written.
    assert.strictEqual((await scim("GET", users, token)).body.totalResults, 4)
    const config = await scim(
      "GET",
      `/scim/v2/${created.body.meta.location.split("/scim/v2/")[1].split("/Users")[0]}/ServiceProviderConfig`,
      token
    )
    assert.isTrue(config.body.patch.supported)
  })

  it("discovery tells a client Arbor's choices: users and groups, the user's externalId required and immutable", async () => {
    const { idp, token } = await provisionedOrganization("scim-discovery")
    const base = `/scim/v2/${idp}`
    const config = await scim("GET", `${base}/ServiceProviderConfig`, token)
    assert.isTrue(config.body.etag.supported)
    const types = await scim("GET", `${base}/ResourceTypes`, token)
    assert.strictEqual(types.status, 200)
    assert.deepStrictEqual(types.body.schemas, ["urn:ietf:params:scim:api:messages:2.0:ListResponse"])
    assert.deepInclude(types.body.Resources[0], {
      id: "User",
      endpoint: "/Users",
      schema: "urn:ietf:params:scim:schemas:core:2.0:User"
    })
    assert.deepStrictEqual((await scim("GET", `${base}/ResourceTypes/User`, token)).body, types.body.Resources[0])
    const schemas = await scim("GET", `${base}/Schemas`, token)
    const user = schemas.body.Resources[0]
    assert.strictEqual(user.id, "urn:ietf:params:scim:schemas:core:2.0:User")
    const byName = new Map(user.attributes.map((a: { name: string }) => [a.name, a]))
    assert.deepInclude(byName.get("externalId"), { required: true, mutability: "immutable", uniqueness: "server" })
    assert.deepInclude(byName.get("userName"), { required: true, uniqueness: "server" })
    // Every user has one: a client learns that a PATCH may replace it and never remove it (RFC 7644 §3.5.2).
    assert.deepInclude(byName.get("active"), { type: "boolean", mutability: "readWrite", required: true })
    assert.deepStrictEqual((await scim("GET", `${base}/Schemas/${user.id}`, token)).body, user)
    assert.deepInclude(types.body.Resources[1], {
      id: "Group",
      endpoint: "/Groups",
      schema: "urn:ietf:params:scim:schemas:core:2.0:Group"
    })
    const group = (await scim("GET", `${base}/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group`, token)).body
    assert.deepInclude(group.attributes[0], { name: "displayName", required: true, uniqueness: "server" })
    // A member is a user, by reference: a client fills `members` with users it made, `type` with `User`.
    const member = new Map(
      group.attributes[2].subAttributes.map((a: { name: string }) => [a.name, a] as const)
    ) as Map<string, object>
    assert.deepInclude(member.get("$ref"), { type: "reference", referenceTypes: ["User"] })
    assert.deepInclude(member.get("type"), { canonicalValues: ["User"] })
    assert.deepStrictEqual(schemas.body.Resources[1], group)
    const unknown = await scim(
      "GET",
      `${base}/Schemas/urn:ietf:params:scim:schemas:extension:enterprise:2.0:User`,
      token
    )
    assert.deepStrictEqual([unknown.status, unknown.body.status], [404, "404"])
    assert.strictEqual((await scim("POST", `${base}/Schemas`, token, {})).status, 404)
  })
})
