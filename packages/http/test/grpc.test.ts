/**
 * gRPC on the server's port, checked by an independent client (`grpcSupport`: grpc-js on the reference protos):
 * every resource's methods against their REST twins on the same data, twelve folders down too.
 */
import { Role } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { clients, iam, owner, registry, rest, useGrpcServer } from "./grpcServer.js"
import { clientProtosNamed, comparable, failure, referenceProtos, without } from "./grpcSupport.js"

it.runIf(process.env.CI !== undefined && referenceProtos === undefined)("CI has the reference protos", () => {
  assert.fail("ARBOR_TEST_PROTOS must name the reference protos' folder in CI (.ci/run sets it)")
})

describe(
  `gRPC, by an independent client on ${clientProtosNamed}: resources`,
  () => {
    useGrpcServer()

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
      const folder = await groups.CreateGroup(
        { parent: owner.org, group: { name: "platform", description: "d" } },
        token
      )
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
          [
            () => identities.GetIdentity({ uid: workload.uid }, token),
            `/iam/v2beta1/identities/${workload.uid}`,
            [],
            []
          ],
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
  }
)
