/**
 * gRPC on the server's port, checked by an independent client (`grpcSupport`: grpc-js on the reference protos):
 * every served method against its REST twin on the same data, errors with their decoded details, authentication,
 * page walks across both surfaces, and that no method answers UNIMPLEMENTED.
 */
import {
  Advisories,
  AuditTrail,
  Groups,
  Identities,
  Principal,
  RefreshTokens,
  Repos,
  Role,
  TokenIssuer
} from "@arbor/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import * as Effect from "effect/Effect"
import * as http2 from "node:http2"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { OAuth2Server } from "oauth2-mock-server"
import protobuf from "protobufjs"
import descriptor from "protobufjs/ext/descriptor/index.js"
import { comparable, connect, failure, files, referenceProtos, without } from "./grpcSupport.js"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member, tokenFor } from "./support.js"

const iam = "chainguard.platform.iam.v2beta1"
const registry = "chainguard.platform.registry.v2beta1"

it.runIf(process.env.CI !== undefined && referenceProtos === undefined)("CI has the reference protos", () => {
  assert.fail("ARBOR_TEST_PROTOS must name the reference protos' folder in CI (.ci/run sets it)")
})

describe.runIf(referenceProtos !== undefined)("gRPC, by an independent client on the reference protos", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let clients: ReturnType<typeof connect>
  let owner: { org: string; identity: string; token: string }
  let stranger: { org: string; identity: string; token: string }
  const oidc = new OAuth2Server()

  /** A REST call as `token`: status and parsed body. */
  const rest = (method: string, path: string, token: string, body?: unknown) =>
    fetchJson(server.url, method, path, token, body)

  beforeAll(async () => {
    await oidc.issuer.keys.generate("RS256")
    await oidc.start(0, "127.0.0.1")
    const port = await freePort()
    server = await startServer(port, {})
    owner = await server.runtime.runPromise(member("acme"))
    stranger = await server.runtime.runPromise(member("elsewhere"))
    clients = connect(referenceProtos!, `127.0.0.1:${port}`)
  })
  afterAll(async () => {
    clients?.close()
    await server?.close()
    await oidc.stop()
  })

  it("serves every resource's methods as REST answers them", async () => {
    const groups = clients.service(`${iam}.GroupsService`)
    const identities = clients.service(`${iam}.IdentitiesService`)
    const roles = clients.service(`${iam}.RolesService`)
    const bindings = clients.service(`${iam}.RoleBindingsService`)
    const providers = clients.service(`${iam}.IdentityProvidersService`)
    const associations = clients.service(`${iam}.AccountAssociationsService`)
    const invites = clients.service(`${iam}.GroupInvitesService`)
    const { token } = owner

    /** The resource at `path` read over REST equals `answer`, but for the fields only one surface has. */
    const sameAsRest = async (
      answer: Record<string, unknown>,
      path: string,
      restOnly: ReadonlyArray<string> = [],
      grpcOnly: ReadonlyArray<string> = []
    ) => {
      const twin = await rest("GET", path, token)
      assert.strictEqual(twin.status, 200, JSON.stringify(twin.body))
      assert.deepStrictEqual(comparable(without(answer, ...grpcOnly)), comparable(without(twin.body, ...restOnly)))
    }
    /** A list over gRPC and its REST twin have the same items and counts. */
    const sameListAsRest = async (
      answer: Record<string, any>,
      plural: string,
      path: string,
      restOnly: ReadonlyArray<string> = [],
      grpcOnly: ReadonlyArray<string> = []
    ) => {
      const twin = await rest("GET", path, token)
      assert.strictEqual(twin.status, 200)
      assert.deepStrictEqual(
        comparable(answer[plural].map((item: Record<string, unknown>) => without(item, ...grpcOnly))),
        comparable(twin.body[plural].map((item: Record<string, unknown>) => without(item, ...restOnly)))
      )
      assert.strictEqual(answer.totalCount, twin.body.totalCount)
    }

    // Groups
    const folder = await groups.CreateGroup({ parent: owner.org, group: { name: "platform", description: "d" } }, token)
    assert.strictEqual(folder.name, "platform")
    await sameAsRest(folder, `/iam/v2beta1/groups/${folder.uid}`)
    await sameAsRest(await groups.GetGroup({ uid: folder.uid }, token), `/iam/v2beta1/groups/${folder.uid}`)
    const renamed = await groups.UpdateGroup(
      { group: { uid: folder.uid, description: "the platform team" }, updateMask: { paths: ["description"] } },
      token
    )
    assert.strictEqual(renamed.description, "the platform team")
    await sameAsRest(renamed, `/iam/v2beta1/groups/${folder.uid}`)
    await sameListAsRest(
      await groups.ListGroups({ uidp: { descendantsOf: owner.org } }, token),
      "groups",
      `/iam/v2beta1/groups?uidp.descendants_of=${owner.org}`
    )

    // Identities
    const workload = await identities.CreateIdentity({
      parent: folder.uid,
      identity: {
        name: "deployer",
        claimMatch: {
          issuer: "https://token.actions.githubusercontent.com",
          subject: "repo:acme/app:ref:refs/heads/main"
        }
      }
    }, token)
    await sameAsRest(workload, `/iam/v2beta1/identities/${workload.uid}`)
    // A person's uid, known before their first sign-in.
    const looked = await identities.LookupIdentity({ issuer: "https://login.example.com", subject: "ada" }, token)
    const lookedUp = await rest(
      "GET",
      "/iam/v2beta1/identities:lookupIdentity?issuer=https%3A%2F%2Flogin.example.com&subject=ada",
      token
    )
    assert.match(looked.uid, /^[0-9a-f]{40}$/)
    assert.deepStrictEqual(lookedUp.body, { uid: looked.uid })
    assert.strictEqual((await failure(identities.LookupIdentity({ issuer: "https://x.example.com" }, token))).code, 3)
    await sameAsRest(
      await identities.UpdateIdentity({ identity: { uid: workload.uid, description: "ships" } }, token),
      `/iam/v2beta1/identities/${workload.uid}`
    )
    await sameListAsRest(
      await identities.ListIdentities({ uidp: { childrenOf: folder.uid } }, token),
      "identities",
      `/iam/v2beta1/identities?uidp.children_of=${folder.uid}`
    )
    await sameListAsRest(
      await identities.ListIdentities(
        { uidp: { childrenOf: folder.uid }, relationshipType: "RELATIONSHIP_TYPE_CLAIM_MATCH" },
        token
      ),
      "identities",
      `/iam/v2beta1/identities?uidp.children_of=${folder.uid}&relationship_type=RELATIONSHIP_TYPE_CLAIM_MATCH`
    )
    const statics = await identities.ListIdentities({ relationshipType: "RELATIONSHIP_TYPE_STATIC" }, token)
    assert.deepStrictEqual([statics.identities ?? [], statics.totalCount], [[], "0"])

    // Roles, their capabilities as the proto enum
    const role = await roles.CreateRole(
      { parent: owner.org, role: { name: "reader", capabilities: ["CAP_IAM_GROUPS_LIST", "CAP_REPO_LIST"] } },
      token
    )
    assert.deepStrictEqual(role.capabilities, ["CAP_IAM_GROUPS_LIST", "CAP_REPO_LIST"])
    await sameAsRest(role, `/iam/v2beta1/roles/${role.uid}`)
    await sameAsRest(
      await roles.UpdateRole(
        { role: { uid: role.uid, capabilities: ["CAP_IAM_GROUPS_LIST"] }, updateMask: { paths: ["capabilities"] } },
        token
      ),
      `/iam/v2beta1/roles/${role.uid}`
    )
    await sameListAsRest(
      await roles.ListRoles({ uidp: { childrenOf: owner.org } }, token),
      "roles",
      `/iam/v2beta1/roles?uidp.children_of=${owner.org}`
    )

    // Role bindings: the proto also names the identity and role by uid at the top level
    const binding = await bindings.CreateRoleBinding(
      { parent: folder.uid, roleBinding: { identityUid: workload.uid, roleUid: role.uid } },
      token
    )
    assert.strictEqual(binding.identityUid, workload.uid)
    assert.strictEqual(binding.role.name, "reader")
    await sameAsRest(binding, `/iam/v2beta1/roleBindings/${binding.uid}`, [], ["identityUid", "roleUid"])
    const viewer = Role.builtInByName("viewer")!.uid
    await sameAsRest(
      await bindings.UpdateRoleBinding({ roleBinding: { uid: binding.uid, roleUid: viewer } }, token),
      `/iam/v2beta1/roleBindings/${binding.uid}`,
      [],
      ["identityUid", "roleUid"]
    )
    await sameListAsRest(
      await bindings.ListRoleBindings({ uidp: { childrenOf: folder.uid } }, token),
      "roleBindings",
      `/iam/v2beta1/roleBindings?uidp.children_of=${folder.uid}`,
      [],
      ["identityUid", "roleUid"]
    )
    const filtered = await bindings.ListRoleBindings({ identity: workload.uid, role: viewer }, token)
    assert.deepStrictEqual(filtered.roleBindings.map((b: { uid: string }) => b.uid), [binding.uid])
    await sameListAsRest(
      filtered,
      "roleBindings",
      `/iam/v2beta1/roleBindings?identity=${workload.uid}&role=${viewer}`,
      [],
      ["identityUid", "roleUid"]
    )
    const none = await bindings.ListRoleBindings({ group: owner.org, role: viewer }, token)
    assert.deepStrictEqual([none.roleBindings ?? [], none.totalCount], [[], "0"])
    // A batch: the shared role, each binding as REST answers it, in the order asked; over REST, the same body.
    const second = await identities.CreateIdentity({
      parent: folder.uid,
      identity: { name: "second", claimMatch: { issuer: "https://issuer.example.com", subject: "second" } }
    }, token)
    const batch = await bindings.BatchCreateRoleBindings({
      parent: folder.uid,
      roleUid: role.uid,
      requests: [{ roleBinding: { identityUid: workload.uid } }, { roleBinding: { identityUid: second.uid } }]
    }, token)
    assert.deepStrictEqual(batch.roleBindings.map((b: { identityUid: string }) => b.identityUid), [
      workload.uid,
      second.uid
    ])
    for (const made of batch.roleBindings) {
      await sameAsRest(made, `/iam/v2beta1/roleBindings/${made.uid}`, [], ["identityUid", "roleUid"])
    }
    const overRest = await rest("POST", "/iam/v2beta1/roleBindings:batchCreate", token, {
      parent: folder.uid,
      requests: [{ roleBinding: { identityUid: second.uid, roleUid: viewer } }]
    })
    assert.strictEqual(overRest.status, 200, JSON.stringify(overRest.body))
    assert.deepStrictEqual(overRest.body.roleBindings.map((b: { role: { name: string } }) => b.role.name), ["viewer"])
    const tooMany = await rest("POST", "/iam/v2beta1/roleBindings:batchCreate", token, {
      parent: folder.uid,
      roleUid: viewer,
      requests: Array.from({ length: 26 }, () => ({ roleBinding: { identityUid: second.uid } }))
    })
    assert.strictEqual(tooMany.status, 400)
    assert.match(JSON.stringify(tooMany.body), /"field":"requests"/)
    for (const made of [...batch.roleBindings, ...overRest.body.roleBindings]) {
      await bindings.DeleteRoleBinding({ uid: made.uid }, token)
    }
    await identities.DeleteIdentity({ uid: second.uid }, token)

    // Identity providers
    const provider = await providers.CreateIdentityProvider({
      parent: owner.org,
      identityProvider: {
        name: "okta",
        defaultRole: viewer,
        oidc: { issuer: "https://acme.okta.invalid", clientId: "arbor", clientSecret: "s3cret" }
      }
    }, token)
    assert.strictEqual(provider.oidc.clientSecret, undefined)
    // SCIM's status is on a get only.
    await sameAsRest(provider, `/iam/v2beta1/identityProviders/${provider.uid}`, ["scim"])
    await sameAsRest(
      await providers.GetIdentityProvider({ uid: provider.uid }, token),
      `/iam/v2beta1/identityProviders/${provider.uid}`
    )
    await sameAsRest(
      await providers.UpdateIdentityProvider({ identityProvider: { uid: provider.uid, description: "SSO" } }, token),
      `/iam/v2beta1/identityProviders/${provider.uid}`,
      ["scim"]
    )
    await sameListAsRest(
      await providers.ListIdentityProviders({ uidp: { childrenOf: owner.org } }, token),
      "identityProviders",
      `/iam/v2beta1/identityProviders?uidp.children_of=${owner.org}`
    )

    // Account associations
    const association = await associations.CreateAccountAssociation(
      { parent: owner.org, accountAssociation: { name: "aws", amazon: { account: "123456789012" } } },
      token
    )
    await sameAsRest(association, `/iam/v2beta1/accountAssociations/${association.uid}`)
    await sameAsRest(
      await associations.UpdateAccountAssociation(
        { accountAssociation: { uid: association.uid, google: { projectId: "acme-prod", projectNumber: "42" } } },
        token
      ),
      `/iam/v2beta1/accountAssociations/${association.uid}`
    )
    await sameListAsRest(
      await associations.ListAccountAssociations({ uidp: { ancestorsOf: folder.uid } }, token),
      "accountAssociations",
      `/iam/v2beta1/accountAssociations?uidp.ancestors_of=${folder.uid}`
    )

    // Group invites: the code once, at create; the proto has no update time
    const invite = await invites.CreateGroupInvite(
      { parent: owner.org, groupInvite: { roleUid: viewer, ttl: { seconds: "3600" }, singleUse: true } },
      token
    )
    assert.match(invite.code, /.{20,}/)
    await sameAsRest(without(invite, "code"), `/iam/v2beta1/groupInvites/${invite.uid}`, ["updateTime"])
    await sameListAsRest(
      await invites.ListGroupInvites({ uidp: { childrenOf: owner.org } }, token),
      "groupInvites",
      `/iam/v2beta1/groupInvites?uidp.children_of=${owner.org}`,
      ["updateTime"]
    )

    // Gets, each as REST answers it
    for (
      const [get, path, restOnly, grpcOnly] of [
        [() => identities.GetIdentity({ uid: workload.uid }, token), `/iam/v2beta1/identities/${workload.uid}`, [], []],
        [() => roles.GetRole({ uid: role.uid }, token), `/iam/v2beta1/roles/${role.uid}`, [], []],
        [
          () => bindings.GetRoleBinding({ uid: binding.uid }, token),
          `/iam/v2beta1/roleBindings/${binding.uid}`,
          [],
          ["identityUid", "roleUid"]
        ],
        [
          () => providers.GetIdentityProvider({ uid: provider.uid }, token),
          `/iam/v2beta1/identityProviders/${provider.uid}`,
          [],
          []
        ],
        [
          () => associations.GetAccountAssociation({ uid: association.uid }, token),
          `/iam/v2beta1/accountAssociations/${association.uid}`,
          [],
          []
        ],
        [
          () => invites.GetGroupInvite({ uid: invite.uid }, token),
          `/iam/v2beta1/groupInvites/${invite.uid}`,
          ["updateTime"],
          []
        ]
      ] as const
    ) {
      await sameAsRest(await get(), path, restOnly, grpcOnly)
    }

    // Deletes, each seen by REST
    for (
      const [remove, path] of [
        [() => invites.DeleteGroupInvite({ uid: invite.uid }, token), `/iam/v2beta1/groupInvites/${invite.uid}`],
        [() => bindings.DeleteRoleBinding({ uid: binding.uid }, token), `/iam/v2beta1/roleBindings/${binding.uid}`],
        [() => roles.DeleteRole({ uid: role.uid }, token), `/iam/v2beta1/roles/${role.uid}`],
        [() => identities.DeleteIdentity({ uid: workload.uid }, token), `/iam/v2beta1/identities/${workload.uid}`],
        [
          () => providers.DeleteIdentityProvider({ uid: provider.uid }, token),
          `/iam/v2beta1/identityProviders/${provider.uid}`
        ],
        [
          () => associations.DeleteAccountAssociation({ uid: association.uid }, token),
          `/iam/v2beta1/accountAssociations/${association.uid}`
        ],
        [() => groups.DeleteGroup({ uid: folder.uid }, token), `/iam/v2beta1/groups/${folder.uid}`]
      ] as const
    ) {
      assert.deepStrictEqual(await remove(), {})
      assert.strictEqual((await rest("GET", path, token)).status, 404, path)
    }
  })

  it("serves repos, tags and advisories as REST answers them", async () => {
    const repos = clients.service(`${registry}.ReposService`)
    const tags = clients.service(`${registry}.TagsService`)
    const advisories = clients.service("chainguard.platform.vulnerabilities.v2beta1.AdvisoriesService")
    const { token } = owner
    const repo = await repos.CreateRepo(
      { parent: owner.org, repo: { name: "nginx", catalogTier: "CATALOG_TIER_APPLICATION", aliases: ["web"] } },
      token
    )
    assert.strictEqual(repo.catalogTier, "CATALOG_TIER_APPLICATION")
    const restRepo = await rest("GET", `/registry/v2beta1/repos/${repo.uid}`, token)
    assert.deepStrictEqual(
      comparable(repo),
      comparable({ ...restRepo.body, catalogTier: `CATALOG_TIER_${restRepo.body.catalogTier}` })
    )
    const updated = await repos.UpdateRepo({ repo: { uid: repo.uid, description: "web server" } }, token)
    assert.strictEqual(updated.description, "web server")
    assert.strictEqual((await repos.GetRepo({ uid: repo.uid }, token)).description, "web server")
    const repoList = await repos.ListRepos({ uidp: { childrenOf: owner.org } }, token)
    assert.deepStrictEqual(repoList.repos.map((r: { uid: string }) => r.uid), [repo.uid])

    const tag = await tags.CreateTag(
      { parent: repo.uid, tag: { name: "1.27", digest: `sha256:${"a".repeat(64)}` } },
      token
    )
    const restTag = await rest("GET", `/registry/v2beta1/tags/${tag.uid}`, token)
    assert.deepStrictEqual(comparable(tag), comparable(without(restTag.body, "createTime")))
    assert.deepStrictEqual(comparable(await tags.GetTag({ uid: tag.uid }, token)), comparable(tag))
    const byDigest = await tags.ListTags({ uidp: { childrenOf: repo.uid }, digest: `sha256:${"a".repeat(64)}` }, token)
    assert.deepStrictEqual(byDigest.tags.map((t: { name: string }) => t.name), ["1.27"])
    const since = await tags.ListTags(
      { uidp: { childrenOf: repo.uid }, updatedSince: { seconds: "4102444800" } },
      token
    )
    assert.strictEqual(since.tags, undefined)
    // The views a list of tags may ask for change nothing: every answer holds them.
    const viewed = await tags.ListTags({ uidp: { childrenOf: repo.uid }, includeDates: true }, token)
    assert.deepStrictEqual(viewed.tags.map((t: { name: string }) => t.name), ["1.27"])

    await server.runtime.runPromise(
      Effect.gen(function*() {
        const org = yield* (yield* Groups.Groups).get(Principal.system, owner.org)
        yield* (yield* Advisories.Advisories).importDocuments(Principal.system, org.uid, [{
          source: "nginx.advisories.yaml",
          text: "schema-version: 2.0.2\npackage:\n  name: nginx\nadvisories:\n  - id: CGA-2222-3333-4444\n" +
            "    aliases: [CVE-2024-0001]\n    events:\n" +
            "      - timestamp: 2024-01-01T00:00:00Z\n        type: detection\n        data:\n          type: manual\n" +
            "      - timestamp: 2024-02-01T00:00:00Z\n        type: fixed\n        data:\n          fixed-version: 1.27.1-r0\n" +
            "  - id: CGA-2222-3333-5555\n    aliases: [CVE-2024-0002]\n    events:\n" +
            "      - timestamp: 2024-03-01T00:00:00Z\n        type: detection\n        data:\n          type: scan/v1\n" +
            "          data:\n            subpackageName: nginx-doc\n            componentID: c1\n" +
            "            componentName: zlib\n            componentVersion: 1.2.13\n            scanner: grype\n" +
            "      - timestamp: 2024-03-02T00:00:00Z\n        type: false-positive-determination\n        data:\n" +
            "          type: vulnerable-code-not-in-execution-path\n          note: never called\n"
        }])
      }).pipe(Effect.orDie)
    )
    const found = await advisories.ListAdvisories(
      { artifactNames: ["nginx"], eventTypes: ["EVENT_TYPE_FILTER_FIXED"] },
      token
    )
    const restFound = await rest(
      "GET",
      "/vulnerabilities/v2beta1/advisories?package_names=nginx&event_types=fixed",
      token
    )
    assert.deepStrictEqual(
      found.advisories.map((a: { uid: string }) => a.uid),
      restFound.body.advisories.map((a: { uid: string }) => a.uid)
    )
    const advisory = await advisories.GetAdvisory({ uid: found.advisories[0].uid }, token)
    const twin = restFound.body.advisories[0]
    assert.strictEqual(advisory.advisoryId, "CGA-2222-3333-4444")
    assert.strictEqual(advisory.artifactName, twin.packageName)
    assert.deepStrictEqual(advisory.aliases, twin.aliases)
    assert.deepStrictEqual(
      advisory.events.map((e: { createTime: unknown }) => comparable(e.createTime)),
      twin.events.map((e: { time: string }) => e.time)
    )
    assert.deepStrictEqual(advisory.events[0].detection, { manual: {} })
    assert.deepStrictEqual(advisory.events[1].fixed, { fixedVersion: "1.27.1-r0" })
    const determined = await advisories.ListAdvisories(
      { latestEventType: "EVENT_TYPE_FILTER_FALSE_POSITIVE_DETERMINATION" },
      token
    )
    assert.strictEqual(determined.totalCount, "1")
    const [scanned, falsePositive] = determined.advisories[0].events
    assert.deepStrictEqual(scanned.detection, {
      scanv1: {
        scanner: "grype",
        subpackage: "nginx-doc",
        componentId: "c1",
        component: "zlib",
        componentVersion: "1.2.13"
      }
    })
    assert.deepStrictEqual(falsePositive.falsePositiveDetermination, {
      type: "TYPE_VULNERABLE_CODE_NOT_IN_EXECUTION_PATH",
      note: "never called"
    })
    const none = await advisories.ListAdvisories({ latestEventType: "EVENT_TYPE_FILTER_PENDING_UPSTREAM_FIX" }, token)
    assert.strictEqual(none.totalCount, "0")

    await tags.DeleteTag({ uid: tag.uid }, token)
    await repos.DeleteRepo({ uid: repo.uid }, token)
    assert.strictEqual((await rest("GET", `/registry/v2beta1/repos/${repo.uid}`, token)).status, 404)
  })

  it("reaches every kind of resource twelve folders down", async () => {
    const service = (name: string) => clients.service(name)
    const groups = service(`${iam}.GroupsService`)
    const { token } = owner
    let deep = owner.org
    for (let level = 1; level <= 12; level++) {
      deep = (await groups.CreateGroup({ parent: deep, group: { name: `level ${level}` } }, token)).uid
    }
    const viewer = Role.builtInByName("viewer")!.uid
    const identity = await service(`${iam}.IdentitiesService`).CreateIdentity({
      parent: deep,
      identity: { name: "deep", claimMatch: { issuer: "https://issuer.example.com", subject: "deep" } }
    }, token)
    const repo = await service(`${registry}.ReposService`).CreateRepo({ parent: deep, repo: { name: "app" } }, token)
    const created: ReadonlyArray<readonly [string, string, string, Record<string, unknown>]> = [
      ["GroupsService", "Group", "group", { name: "leaf" }],
      ["IdentitiesService", "Identity", "identity", {
        name: "leaf",
        claimMatch: { issuer: "https://issuer.example.com", subject: "leaf" }
      }],
      ["RolesService", "Role", "role", { name: "leaf", capabilities: ["CAP_IAM_GROUPS_LIST"] }],
      ["RoleBindingsService", "RoleBinding", "roleBinding", { identityUid: identity.uid, roleUid: viewer }],
      ["IdentityProvidersService", "IdentityProvider", "identityProvider", {
        name: "leaf",
        defaultRole: viewer,
        oidc: { issuer: "https://login.example.com", clientId: "c" }
      }],
      ["AccountAssociationsService", "AccountAssociation", "accountAssociation", { name: "leaf" }],
      ["GroupInvitesService", "GroupInvite", "groupInvite", { roleUid: viewer }],
      ["TagsService", "Tag", "tag", { name: "v1" }]
    ]
    for (const [name, kind, field, body] of created) {
      const client = service(`${name === "TagsService" ? registry : iam}.${name}`)
      const parent = name === "TagsService" ? repo.uid : deep
      const made = await client[`Create${kind}`]({ parent, [field]: body }, token)
      assert.isTrue(made.uid.startsWith(parent), kind)
      assert.strictEqual((await client[`Get${kind}`]({ uid: made.uid }, token)).uid, made.uid, kind)
      if (kind !== "GroupInvite" && kind !== "Tag") {
        await client[`Update${kind}`]({ [field]: { ...body, uid: made.uid, description: "changed" } }, token)
      }
      await client[`Delete${kind}`]({ uid: made.uid }, token)
      assert.strictEqual((await failure(client[`Get${kind}`]({ uid: made.uid }, token))).code, grpc.status.NOT_FOUND)
    }
    await service(`${registry}.ReposService`).DeleteRepo({ uid: repo.uid }, token)
  })

  /** The REST error body of `path` as the gRPC client decodes a failure: code, message, details. */
  const restFailure = async (method: string, path: string, token: string, body?: unknown) => {
    const { body: status } = await rest(method, path, token, body)
    return { code: status.code, message: status.message, details: status.details }
  }

  it("fails with the REST body's code, message and details", async () => {
    const groups = clients.service(`${iam}.GroupsService`)
    const identities = clients.service(`${iam}.IdentitiesService`)
    const missing = `${owner.org}/0123456789abcdef`
    const notFound = await failure(groups.GetGroup({ uid: missing }, owner.token))
    assert.strictEqual(notFound.code, 5)
    assert.deepStrictEqual(
      comparable(notFound),
      comparable(await restFailure("GET", `/iam/v2beta1/groups/${missing}`, owner.token))
    )

    const invalid = await failure(
      groups.CreateGroup({ parent: owner.org, group: { name: "x".repeat(100) } }, owner.token)
    )
    assert.strictEqual(invalid.code, 3)
    assert.deepStrictEqual(
      comparable(invalid),
      comparable(await restFailure("POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "x".repeat(100) }))
    )
    assert.strictEqual(
      invalid.details.find((d) => String(d["@type"]).endsWith("BadRequest"))?.["@type"],
      "type.googleapis.com/google.rpc.BadRequest"
    )

    const denied = await failure(groups.GetGroup({ uid: owner.org }, stranger.token))
    assert.deepStrictEqual(
      comparable(denied),
      comparable(await restFailure("GET", `/iam/v2beta1/groups/${owner.org}`, stranger.token))
    )

    // Fields the engine has no feature for
    const aws = await failure(identities.CreateIdentity(
      {
        parent: owner.org,
        identity: { name: "aws", awsIdentity: { awsAccount: "123456789012", arn: "arn:aws:iam::1:role/x" } }
      },
      owner.token
    ))
    assert.strictEqual(aws.code, 3)
    assert.match(JSON.stringify(aws.details), /identity\.awsIdentity/)
    const principal = await failure(identities.CreateIdentity(
      { parent: owner.org, identity: { name: "svc", servicePrincipal: "SERVICE_PRINCIPAL_INGESTER" } },
      owner.token
    ))
    assert.strictEqual(principal.code, 3)
    // Values proto3 allows that the engine does not
    const tags = clients.service(`${registry}.TagsService`)
    for (
      const bad of [
        groups.ListGroups({ pageSize: -1 }, owner.token),
        groups.ListGroups({ skip: -1 }, owner.token),
        tags.ListTags({ updatedSince: { seconds: "999999999999" } }, owner.token),
        clients.service(`${iam}.GroupInvitesService`).CreateGroupInvite(
          { parent: owner.org, groupInvite: { roleUid: owner.org, expirationTime: { seconds: "999999999999" } } },
          owner.token
        )
      ]
    ) {
      assert.strictEqual((await failure(bad)).code, 3)
    }
    const filtered = await failure(
      clients.service(`${iam}.RoleBindingsService`).ListRoleBindings({ identity: "alice" }, owner.token)
    )
    assert.strictEqual(filtered.code, 3)
    assert.match(JSON.stringify(filtered.details), /"field":"identity"/)
  })

  it("answers UNAUTHENTICATED without a valid bearer, as REST does", async () => {
    const groups = clients.service(`${iam}.GroupsService`)
    const restNone: any = await fetch(`${server.url}/iam/v2beta1/groups`).then((r) => r.json())
    for (
      const token of [undefined, "", "not-a-token", await server.runtime.runPromise(tokenFor(owner.identity)) + "x"]
    ) {
      const refused = await failure(groups.ListGroups({}, token))
      assert.strictEqual(refused.code, 16, String(token))
      if (token === undefined) {
        assert.deepStrictEqual(
          comparable(refused),
          comparable({ code: restNone.code, message: restNone.message, details: restNone.details })
        )
      }
    }
  })

  it("walks pages with order_by and skip, a page token from either surface continuing on the other", async () => {
    const groups = clients.service(`${iam}.GroupsService`)
    const { token } = owner
    const parent = await groups.CreateGroup({ parent: owner.org, group: { name: "pages" } }, token)
    const names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
    for (const name of names) await groups.CreateGroup({ parent: parent.uid, group: { name } }, token)
    const byName = (items: ReadonlyArray<{ name: string }> | undefined) => (items ?? []).map((g) => g.name)

    const first = await groups.ListGroups(
      { uidp: { childrenOf: parent.uid }, pageSize: 3, orderBy: "name desc" },
      token
    )
    assert.deepStrictEqual(byName(first.groups), ["golf", "foxtrot", "echo"])
    assert.strictEqual(first.totalCount, "7")
    const second = await rest(
      "GET",
      `/iam/v2beta1/groups?uidp.children_of=${parent.uid}&page_size=3&order_by=name%20desc&page_token=${
        encodeURIComponent(first.nextPageToken)
      }`,
      token
    )
    assert.deepStrictEqual(byName(second.body.groups), ["delta", "charlie", "bravo"])
    const third = await groups.ListGroups(
      { uidp: { childrenOf: parent.uid }, pageSize: 3, orderBy: "name desc", pageToken: second.body.nextPageToken },
      token
    )
    assert.deepStrictEqual(byName(third.groups), ["alpha"])
    assert.strictEqual(third.nextPageToken, undefined)

    const skipped = await groups.ListGroups(
      { uidp: { childrenOf: parent.uid }, pageSize: 2, orderBy: "name", skip: 4 },
      token
    )
    const restSkipped = await rest(
      "GET",
      `/iam/v2beta1/groups?uidp.children_of=${parent.uid}&page_size=2&order_by=name&skip=4`,
      token
    )
    assert.deepStrictEqual(byName(skipped.groups), ["echo", "foxtrot"])
    assert.deepStrictEqual(byName(restSkipped.body.groups), byName(skipped.groups))
    assert.strictEqual(skipped.skipped, restSkipped.body.skipped)

    const changedOrder = await failure(groups.ListGroups(
      { uidp: { childrenOf: parent.uid }, pageSize: 3, orderBy: "name asc", pageToken: first.nextPageToken },
      token
    ))
    assert.strictEqual(changedOrder.code, 3)
  })

  it("serves LookupGroup, CheckEligibility and RequestGroupAccess as REST does, for verified organizations", async () => {
    const groups = clients.service(`${iam}.GroupsService`)
    const { ada, adaUid, org } = await server.runtime.runPromise(
      Effect.gen(function*() {
        const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "verified.dev" })
        const person = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
          name: "ada",
          claimMatch: { issuer: "https://login.example.com", subject: "ada" }
        })
        const issuer = yield* TokenIssuer.TokenIssuer
        const minted = yield* issuer.mint(
          person.uid,
          { iss: "https://login.example.com", sub: "ada" },
          issuer.audience,
          {
            email: "ada@verified.dev"
          }
        )
        return { org, ada: minted.token, adaUid: person.uid }
      }).pipe(Effect.orDie)
    )
    // Only a platform admin verifies an organization: its owner may not.
    const byOwner = await rest("PATCH", `/iam/v2beta1/groups/${owner.org}`, owner.token, { verified: true })
    assert.strictEqual(byOwner.status, 403)
    assert.deepStrictEqual(await groups.CheckEligibility({}, ada), { eligible: true })
    assert.strictEqual((await failure(groups.LookupGroup({}, ada))).code, 5)
    await server.runtime.runPromise(
      Effect.flatMap(Groups.Groups, (g) => g.update(Principal.system, org.uid, { verified: true })).pipe(Effect.orDie)
    )
    const found = await groups.LookupGroup({}, ada)
    assert.strictEqual(found.group.uid, org.uid)
    const overRest = await rest("GET", "/iam/v2beta1/groups:lookupGroup", ada)
    assert.deepStrictEqual(overRest.body.group.uid, org.uid)
    assert.isTrue(overRest.body.group.verified)
    assert.deepStrictEqual((await rest("GET", "/iam/v2beta1/groups:checkEligibility", ada)).body, { eligible: true })
    assert.deepStrictEqual(await groups.RequestGroupAccess({ groupUid: org.uid }, ada), {})
    const repeat = await rest("POST", `/iam/v2beta1/groups/${org.uid}:requestGroupAccess`, ada)
    assert.strictEqual(repeat.status, 429)
    assert.strictEqual(repeat.body.details[0].reason, "ACCESS_ALREADY_REQUESTED")
    assert.strictEqual((await failure(groups.RequestGroupAccess({ groupUid: org.uid }, ada))).code, 8)
    // Anyone else: the same NOT_FOUND, whatever the reason.
    const notEligible = await rest("GET", "/iam/v2beta1/groups:lookupGroup", owner.token)
    assert.strictEqual(notEligible.status, 404)
    assert.deepStrictEqual((await rest("GET", "/iam/v2beta1/groups:checkEligibility", owner.token)).body, {
      eligible: false
    })
    assert.strictEqual(
      (await rest("POST", `/iam/v2beta1/groups/${org.uid}:requestGroupAccess`, owner.token)).status,
      404
    )
    assert.strictEqual((await failure(groups.RequestGroupAccess({ groupUid: "" }, ada))).code, 3)
    // The request is in the organization's change log, for its owners' subscriptions and audit trail.
    const logged = await server.runtime.runPromise(
      Effect.flatMap(
        AuditTrail.AuditTrail,
        (trail) => trail.list(Principal.system, { types: ["dev.chainguard.api.iam.group.access_requested.v1"] })
      ).pipe(
        Effect.orDie
      )
    )
    assert.deepStrictEqual(
      logged.items.map((e) => [e.group, e.body.requester, e.body.email]),
      [[org.uid, adaUid, "ada@verified.dev"]]
    )
  })

  it("serves GetRepoReadme and UpdateRepoReadme as REST's /registry/v2beta1/repos/<uid>/readme", async () => {
    const repos = clients.service(`${registry}.ReposService`)
    const { org, token } = owner
    const repo = await server.runtime.runPromise(
      Effect.flatMap(Repos.Repos, (r) => r.upsert(Principal.system, org, { name: "readme-demo" })).pipe(Effect.orDie)
    )
    assert.deepStrictEqual(await repos.GetRepoReadme({ uid: repo.uid }, token), { uid: repo.uid })
    const updated = await repos.UpdateRepoReadme({ repoReadme: { uid: repo.uid, content: "# demo\n" } }, token)
    assert.deepStrictEqual(updated, { uid: repo.uid, content: "# demo\n" })
    // REST takes the uid's slashes as they are, before the /readme segment.
    const read = await rest("GET", `/registry/v2beta1/repos/${repo.uid}/readme`, token)
    assert.deepStrictEqual(read.body, { uid: repo.uid, content: "# demo\n" })
    const patched = await rest("PATCH", `/registry/v2beta1/repos/${repo.uid}/readme`, token, { content: "**bold**" })
    assert.deepStrictEqual(patched.body, { uid: repo.uid, content: "**bold**" })
    assert.strictEqual((await repos.GetRepoReadme({ uid: repo.uid }, token)).content, "**bold**")
    const unsafe = await failure(
      repos.UpdateRepoReadme({ repoReadme: { uid: repo.uid, content: "<script>x</script>" } }, token)
    )
    assert.strictEqual(unsafe.code, 3)
    assert.strictEqual((unsafe.details[1] as any).fieldViolations[0].field, "content")
    // Only a mask clears it over gRPC, where an empty content is not sent.
    const cleared = await repos.UpdateRepoReadme(
      { repoReadme: { uid: repo.uid }, updateMask: { paths: ["content"] } },
      token
    )
    assert.deepStrictEqual(cleared, { uid: repo.uid })
    assert.strictEqual((await failure(repos.GetRepoReadme({ uid: repo.uid }, stranger.token))).code, 7)
  })

  it("serves ExternalGroupRoleMappingsService as REST's /iam/v2beta1/externalGroupRoleMappings answers it", async () => {
    const mappings = clients.service(`${iam}.ExternalGroupRoleMappingsService`)
    const { org, token } = owner
    const provider = await rest("POST", `/iam/v2beta1/identityProviders/${org}`, token, {
      name: "mapped sso",
      defaultRole: Role.builtInByName("viewer")!.uid,
      oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "s", groupsClaim: "groups" }
    })
    assert.strictEqual(provider.status, 200, JSON.stringify(provider.body))
    assert.strictEqual(provider.body.oidc.groupsClaim, "groups")
    const editor = Role.builtInByName("editor")!.uid
    const created = await mappings.CreateExternalGroupRoleMapping({
      parent: provider.body.uid,
      externalGroupRoleMapping: { externalGroupId: "engineers", roleUid: editor }
    }, token)
    assert.deepInclude(created, { externalGroupId: "engineers", roleUid: editor, scope: org })
    const viaRest = await rest("POST", `/iam/v2beta1/externalGroupRoleMappings/${provider.body.uid}`, token, {
      externalGroupId: "sales",
      roleUid: Role.builtInByName("viewer")!.uid
    })
    assert.strictEqual(viaRest.status, 200, JSON.stringify(viaRest.body))
    const got = await mappings.GetExternalGroupRoleMapping({ uid: created.uid }, token)
    const twin = await rest("GET", `/iam/v2beta1/externalGroupRoleMappings/${created.uid}`, token)
    assert.deepStrictEqual(comparable(got), comparable(twin.body))
    const listed = await mappings.ListExternalGroupRoleMappings({ identityProviderUid: provider.body.uid }, token)
    const listedRest = await rest(
      "GET",
      `/iam/v2beta1/externalGroupRoleMappings?identity_provider_uid=${provider.body.uid}`,
      token
    )
    assert.strictEqual(listed.totalCount, "2")
    assert.deepStrictEqual(
      comparable(listed.externalGroupRoleMappings),
      comparable(listedRest.body.externalGroupRoleMappings)
    )
    const escalation = await failure(mappings.CreateExternalGroupRoleMapping({
      parent: provider.body.uid,
      externalGroupRoleMapping: { externalGroupId: "x", roleUid: Role.builtInByName("viewer")!.uid }
    }, stranger.token))
    assert.strictEqual(escalation.code, 7)
    const batch = await rest("POST", "/iam/v2beta1/externalGroupRoleMappings:batchDelete", token, {
      parent: provider.body.uid,
      names: [viaRest.body.uid]
    })
    assert.deepStrictEqual(batch.body.externalGroupRoleMappings.map((m: any) => m.uid), [viaRest.body.uid])
    const batchGrpc = await mappings.BatchDeleteExternalGroupRoleMappings(
      { parent: provider.body.uid, names: [created.uid] },
      token
    )
    assert.deepStrictEqual(batchGrpc.externalGroupRoleMappings.map((m: any) => m.uid), [created.uid])
    assert.deepStrictEqual(await mappings.DeleteExternalGroupRoleMapping({ uid: created.uid }, token), {})
    assert.strictEqual((await rest("DELETE", `/iam/v2beta1/identityProviders/${provider.body.uid}`, token)).status, 200)
  })

  it("serves TermsService as REST's /iam/v2beta1/terms answers it", async () => {
    const terms = clients.service(`${iam}.TermsService`)
    const groups = clients.service(`${iam}.GroupsService`)
    const { org, token } = owner
    const team = await groups.CreateGroup({ parent: org, group: { name: "terms-team" } }, token)
    const accepted = await terms.AcceptTerms({ group: org, documentIds: ["tos.v1", "dpa.v2"] }, token)
    assert.deepStrictEqual(accepted, { group: org, documentIds: ["tos.v1", "dpa.v2"] })
    const overRest = await rest("POST", `/iam/v2beta1/terms/${team.uid}`, token, { documentIds: ["team.v1"] })
    assert.deepStrictEqual(overRest.body, { group: team.uid, documentIds: ["team.v1"] })
    const listed = await terms.ListTermsAcceptances({ group: team.uid }, token)
    const twin = await rest("GET", `/iam/v2beta1/terms/${team.uid}`, token)
    assert.strictEqual(twin.status, 200)
    assert.strictEqual(listed.totalCount, "3")
    assert.strictEqual(twin.body.totalCount, "3")
    assert.deepStrictEqual(
      listed.termsAcceptances.map((a: any) => [a.docId, a.acceptedBy, a.orgUid]),
      twin.body.termsAcceptances.map((a: any) => [a.docId, a.acceptedBy, a.orgUid])
    )
    assert.sameMembers(listed.termsAcceptances.map((a: any) => a.docId), ["tos.v1", "dpa.v2", "team.v1"])
    assert.isTrue(listed.termsAcceptances.every((a: any) => a.acceptedBy === owner.identity))
    const bad = await failure(terms.AcceptTerms({ group: org, documentIds: ["not ok"] }, token))
    assert.strictEqual(bad.code, 3)
    assert.strictEqual((bad.details[1] as any).fieldViolations[0].field, "documentIds[0]")
    assert.strictEqual((await failure(terms.ListTermsAcceptances({ group: org }, stranger.token))).code, 7)
  })

  it("serves UpdateIdentityMetadata as REST's PATCH /iam/v2beta1/identities:updateIdentityMetadata", async () => {
    const identities = clients.service(`${iam}.IdentitiesService`)
    const { token } = owner
    const viaGrpc = await identities.UpdateIdentityMetadata(
      { identityMetadata: { company: "Acme", jobTitle: "builder", updatesOptIn: true } },
      token
    )
    assert.deepInclude(viaGrpc, { uid: owner.identity, company: "Acme", jobTitle: "builder", updatesOptIn: true })
    // The mask clears what it names and the body leaves out: over gRPC a false or empty field is not sent at all.
    const cleared = await identities.UpdateIdentityMetadata(
      { identityMetadata: { product: "arbor" }, updateMask: { paths: ["updates_opt_in", "product"] } },
      token
    )
    assert.deepInclude(cleared, { company: "Acme", product: "arbor" })
    assert.notStrictEqual(cleared.updatesOptIn, true)
    const viaRest = await rest("PATCH", "/iam/v2beta1/identities:updateIdentityMetadata", token, {
      identityMetadata: { jobTitle: "maker" },
      updateMask: "job_title"
    })
    assert.strictEqual(viaRest.status, 200, JSON.stringify(viaRest.body))
    assert.deepInclude(viaRest.body, {
      uid: owner.identity,
      company: "Acme",
      jobTitle: "maker",
      product: "arbor",
      updatesOptIn: false
    })
    const bad = await failure(
      identities.UpdateIdentityMetadata({ identityMetadata: { company: "x".repeat(300) } }, token)
    )
    assert.strictEqual(bad.code, 3)
    assert.strictEqual((bad.details[1] as any).fieldViolations[0].field, "identityMetadata.company")
  })

  it("serves the SCIM methods of IdentityProvidersService as REST's :generateScimToken and the rest answer them", async () => {
    const providers = clients.service(`${iam}.IdentityProvidersService`)
    const { org, token } = owner
    const viewer = Role.builtInByName("viewer")!.uid
    await server.runtime.runPromise(member("acme"))
    const provider = await providers.CreateIdentityProvider({
      parent: org,
      identityProvider: {
        name: "scim-okta",
        defaultRole: viewer,
        oidc: { issuer: "https://scim.okta.invalid", clientId: "arbor", clientSecret: "s3cret" }
      }
    }, token)
    const generated = await providers.GenerateScimToken({ identityProviderUid: provider.uid }, token)
    assert.match(generated.token, /^cgscim_[0-9a-f]{64}$/)
    assert.strictEqual(generated.endpointUrl, `${server.url}/scim/v2/${provider.uid}`)
    assert.ok(Number(generated.expireTime.seconds) > Date.now() / 1000 + 364 * 86400)
    const read = await providers.GetIdentityProvider({ uid: provider.uid }, token)
    assert.deepInclude(read.scim, { credentialState: "CREDENTIAL_STATE_LIVE", etag: generated.etag })
    const again = await failure(providers.GenerateScimToken({ identityProviderUid: provider.uid }, token))
    assert.strictEqual(again.code, 9)
    const enabled = await providers.SetScimEnabled(
      { identityProviderUid: provider.uid, enabled: true, etag: generated.etag },
      token
    )
    assert.deepInclude(enabled, { identityProviderUid: provider.uid, enabled: true })
    const stale = await failure(providers.SetScimEnabled({ identityProviderUid: provider.uid, etag: "1" }, token))
    assert.strictEqual(stale.code, 10)
    const regenerated = await providers.RegenerateScimToken(
      { identityProviderUid: provider.uid, etag: enabled.etag, overlap: { seconds: "600" } },
      token
    )
    assert.deepStrictEqual(regenerated.requestedOverlap, { seconds: "600" })
    assert.ok(Number(regenerated.previousTokenExpireTime.seconds) <= Date.now() / 1000 + 600)
    // The REST twin of a read shows the same state: both tokens work for now.
    const twin = await rest("GET", `/iam/v2beta1/identityProviders/${provider.uid}`, token)
    assert.deepInclude(twin.body.scim, { credentialState: "CREDENTIAL_STATE_ROTATING", etag: regenerated.etag })
    const revoked = await providers.RevokeScimToken({ identityProviderUid: provider.uid }, token)
    assert.deepInclude(revoked, { identityProviderUid: provider.uid, enabled: true })
    const overRest = await rest("POST", `/iam/v2beta1/identityProviders/${provider.uid}:revokeScimToken`, token, {})
    assert.strictEqual(overRest.status, 200)
    const denied = await failure(providers.RevokeScimToken({ identityProviderUid: provider.uid }, stranger.token))
    assert.strictEqual(denied.code, 7)
    const missing = await failure(providers.RegenerateScimToken({ identityProviderUid: provider.uid }, token))
    assert.strictEqual((missing.details[1] as any).fieldViolations[0].field, "etag")
  })

  it("answers every method of every served service: none is UNIMPLEMENTED", async () => {
    const definition = protoLoader.loadSync(files, { includeDirs: [referenceProtos!] })
    const services = Object.entries(definition).flatMap(([name, value]) =>
      Object.values(value).every((method) => typeof method === "object" && method !== null && "path" in method)
        ? [[name, Object.values(value).map((method) => (method as { originalName: string }).originalName)] as const]
        : []
    )
    assert.isAtLeast(services.length, 14)
    for (const [name, methods] of services) {
      const service = clients.service(name)
      for (const method of methods) {
        // An empty request from a caller who holds nothing here: refused, but never for want of the method.
        const answer = await service[method]({}, stranger.token).then(
          () => 0,
          (failure: { code: number }) => failure.code
        )
        assert.notStrictEqual(answer, 12, `${name}/${method}`)
      }
    }
    // CheckAccountAssociation answers from the association it is asked about: here one that names no cloud.
    const accounts = clients.service(`${iam}.AccountAssociationsService`)
    await accounts.CreateAccountAssociation({ parent: owner.org, accountAssociation: { name: "checked" } }, owner.token)
    const checked = await accounts.CheckAccountAssociation(
      { uid: owner.org, providerType: "ACCOUNT_PROVIDER_TYPE_AMAZON" },
      owner.token
    )
    const twin = await rest(
      "POST",
      `/iam/v2beta1/accountAssociations/${owner.org}:checkAccountAssociation`,
      owner.token,
      {
        providerType: "ACCOUNT_PROVIDER_TYPE_AMAZON"
      }
    )
    assert.deepStrictEqual(checked, { ...twin.body })
    assert.deepStrictEqual(twin.body, {
      status: "CHECK_STATUS_NOT_READY",
      reason: "not configured",
      message: "the association names no AWS account"
    })
  })

  it("exchanges tokens through SecurityTokenService as /sts does", async () => {
    const sts = clients.service("chainguard.platform.oidc.SecurityTokenService")
    const workload = await server.runtime.runPromise(
      Effect.gen(function*() {
        return yield* (yield* Identities.Identities).create(Principal.system, owner.org, {
          name: "ci",
          claimMatch: { issuer: oidc.issuer.url!, subject: "repo:acme/app" }
        })
      }).pipe(Effect.orDie)
    )
    const upstream = await oidc.issuer.buildToken({
      scopesOrTransform: (_, payload) => Object.assign(payload, { sub: "repo:acme/app", aud: server.url })
    })
    const exchanged = await sts.Exchange({ aud: [server.url], identity: workload.uid }, upstream)
    assert.match(exchanged.token, /^ey/)
    assert.ok(Number(exchanged.expiry.seconds) > Date.now() / 1000)
    const verified = await server.runtime.runPromise(
      Effect.flatMap(TokenIssuer.TokenIssuer, (issuer) => issuer.verify(exchanged.token))
    )
    assert.strictEqual(verified.identity, workload.uid)
    const refused = await failure(sts.Exchange({ aud: [server.url], identity: workload.uid }, "not-a-token"))
    const restRefused = await restFailure(
      "POST",
      `/sts/exchange?aud=${encodeURIComponent(server.url)}&identity=${workload.uid}`,
      "not-a-token"
    )
    assert.deepStrictEqual(comparable(refused), comparable(restRefused))
    // An unknown capability is named; a narrowed exchange carries its narrowing, as REST's does.
    const unknownCap = await failure(sts.Exchange({ aud: [server.url], identity: workload.uid, cap: ["x"] }, upstream))
    assert.strictEqual(unknownCap.code, 3)
    assert.match(JSON.stringify(unknownCap.details), /"field":"cap"/)
    const narrowed = await sts.Exchange(
      { aud: [server.url], identity: workload.uid, cap: ["CAP_IAM_GROUPS_LIST"], scopes: [owner.org] },
      await oidc.issuer.buildToken({
        scopesOrTransform: (_, payload) => Object.assign(payload, { sub: "repo:acme/app", aud: server.url })
      })
    )
    const narrowedClaims = JSON.parse(Buffer.from(narrowed.token.split(".")[1]!, "base64url").toString())
    assert.deepStrictEqual([narrowedClaims.cap, narrowedClaims.scopes], [["groups.list"], [owner.org]])

    const refresh = await server.runtime.runPromise(
      Effect.flatMap(RefreshTokens.RefreshTokens, (tokens) => tokens.issue(owner.identity as never, server.url))
    )
    const pair = await sts.ExchangeRefreshToken(
      { aud: [server.url], cap: ["groups.list"], scopes: [owner.org] },
      refresh.token
    )
    assert.match(pair.token.token, /^ey/)
    const refreshedClaims = JSON.parse(Buffer.from(pair.token.token.split(".")[1]!, "base64url").toString())
    assert.deepStrictEqual([refreshedClaims.cap, refreshedClaims.scopes], [["groups.list"], [owner.org]])
    assert.notStrictEqual(pair.refreshToken.token, refresh.token)
    // Reuse revokes the family: REST then finds the same token revoked.
    const reused = await failure(sts.ExchangeRefreshToken({ aud: [server.url] }, refresh.token))
    const restReused = await restFailure("POST", "/sts/exchange_refresh_token", refresh.token)
    assert.deepStrictEqual([reused.code, reused.message], [restReused.code, restReused.message])
    assert.strictEqual((await failure(sts.ExchangeRefreshToken({}, pair.refreshToken.token))).code, 16)
  })

  it("describes itself through server reflection, enough for a generic tool to call it", async () => {
    const definition = protoLoader.loadSync("grpc/reflection/v1/reflection.proto", {
      includeDirs: [join(import.meta.dirname, "..", "..", "api", "proto")]
    })
    const Reflection = (grpc.loadPackageDefinition(definition) as any).grpc.reflection.v1.ServerReflection
    const reflection = new Reflection(`127.0.0.1:${new URL(server.url).port}`, grpc.credentials.createInsecure())
    const stream = reflection.ServerReflectionInfo()
    const ask = (request: object) =>
      new Promise<any>((resolve) => {
        stream.once("data", resolve)
        stream.write(request)
      })
    const services = (await ask({ listServices: "" })).listServicesResponse.service.map((s: { name: string }) => s.name)
    assert.includeMembers(services, [
      `${iam}.GroupsService`,
      "chainguard.platform.oidc.SecurityTokenService",
      "grpc.reflection.v1.ServerReflection"
    ])
    const files =
      (await ask({ fileContainingSymbol: `${iam}.GroupsService` })).fileDescriptorResponse.fileDescriptorProto
    const unknown = await ask({ fileContainingSymbol: "nowhere.Service" })
    assert.strictEqual(unknown.errorResponse.errorCode, 5)
    stream.end()
    reflection.close()

    // What a generic tool does next: build the types from the descriptors alone, and call.
    // ext/descriptor adds Root.fromDescriptor at run time; its typings do not say so.
    const root: protobuf.Root = (protobuf.Root as any).fromDescriptor(
      descriptor.FileDescriptorSet.create({
        file: files.map((bytes: Buffer) => descriptor.FileDescriptorProto.decode(bytes))
      })
    )
    const Request = root.lookupType(`${iam}.ListGroupsRequest`)
    const Response = root.lookupType(`${iam}.ListGroupsResponse`)
    const generic = new grpc.Client(`127.0.0.1:${new URL(server.url).port}`, grpc.credentials.createInsecure())
    const metadata = new grpc.Metadata()
    metadata.set("authorization", `Bearer ${owner.token}`)
    const answer = await new Promise<any>((resolve, reject) =>
      generic.makeUnaryRequest(
        `/${iam}.GroupsService/ListGroups`,
        (request: object) => Buffer.from(Request.encode(Request.fromObject(request)).finish()),
        (bytes: Buffer) => Response.toObject(Response.decode(bytes), { longs: String }),
        { uidp: { inRoot: true } },
        metadata,
        (error, value) => (error === null ? resolve(value) : reject(error))
      )
    )
    generic.close()
    assert.include(answer.groups.map((g: { name: string }) => g.name), "acme")
  })

  it(
    "refuses messages over 1 MiB, compressed or not, and ends their streams at once",
    { timeout: 20_000 },
    async () => {
      const groups = clients.service(`${iam}.GroupsService`)
      const big = await failure(groups.ListGroups({ name: "x".repeat(2 * 1024 * 1024) }, owner.token))
      assert.strictEqual(big.code, 8)
      assert.match(big.message, /larger than configured readMaxBytes 1048576/)

      /** A raw gRPC call of one frame: its trailers, and how long until the stream closed. */
      const raw = (frame: Buffer, headers: Record<string, string> = {}) =>
        new Promise<{ trailers: Record<string, unknown>; millis: number }>((resolve, reject) => {
          const started = Date.now()
          const session = http2.connect(server.url)
          session.on("error", reject)
          const stream = session.request({
            ":method": "POST",
            ":path": `/${iam}.GroupsService/ListGroups`,
            "content-type": "application/grpc",
            te: "trailers",
            authorization: `Bearer ${owner.token}`,
            ...headers
          })
          let trailers: Record<string, unknown> = {}
          stream.on("trailers", (t) => (trailers = t))
          stream.on("response", (h) => (trailers = { ...h, ...trailers }))
          stream.on("error", () => undefined)
          stream.resume()
          stream.once("close", () => {
            resolve({ trailers, millis: Date.now() - started })
            session.close()
          })
          stream.end(frame)
        })
      const framed = (payload: Buffer, compressed: 0 | 1) => {
        const frame = Buffer.alloc(5 + payload.length)
        frame[0] = compressed
        frame.writeUInt32BE(payload.length, 1)
        payload.copy(frame, 5)
        return frame
      }
      // 4 MiB sent, most of it never read: the answer comes, and the stream ends without waiting for the rest.
      const unread = await raw(framed(Buffer.alloc(4 * 1024 * 1024, 0x41), 0))
      assert.strictEqual(unread.trailers["grpc-status"], "8")
      assert.isBelow(unread.millis, 5_000)
      // 64 KiB of gzip that would inflate to 64 MiB.
      const bomb = await raw(framed(gzipSync(Buffer.alloc(64 * 1024 * 1024)), 1), { "grpc-encoding": "gzip" })
      assert.strictEqual(bomb.trailers["grpc-status"], "8")
      assert.match(String(bomb.trailers["grpc-message"]), /after decompression/)
    }
  )
})
