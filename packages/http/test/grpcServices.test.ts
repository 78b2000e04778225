/**
 * gRPC's custom services and methods against their REST twins (verified organizations, READMEs, group mappings,
 * terms, own metadata, SCIM), and no served method answering UNIMPLEMENTED.
 */
import { AuditTrail, Groups, Identities, Principal, Repos, Role, TokenIssuer } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as protoLoader from "@grpc/proto-loader"
import * as Effect from "effect/Effect"
import { clients, iam, owner, registry, rest, server, stranger, useGrpcServer } from "./grpcServer.js"
import { clientProtos, clientProtosNamed, comparable, failure, files } from "./grpcSupport.js"
import { member } from "./support.js"

describe(
  `gRPC, by an independent client on ${clientProtosNamed}: custom methods`,
  () => {
    useGrpcServer()

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
      assert.strictEqual(
        (await rest("DELETE", `/iam/v2beta1/identityProviders/${provider.body.uid}`, token)).status,
        200
      )
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

    it("answers every method of every served service: none is UNIMPLEMENTED, nor INTERNAL or UNKNOWN for an empty request", async () => {
      const definition = protoLoader.loadSync(files, { includeDirs: [clientProtos] })
      const services = Object.entries(definition).flatMap(([name, value]) =>
        Object.values(value).every((method) => typeof method === "object" && method !== null && "path" in method)
          ? [[name, Object.values(value).map((method) => (method as { originalName: string }).originalName)] as const]
          : []
      )
      assert.isAtLeast(services.length, 14)
      for (const [name, methods] of services) {
        const service = clients.service(name)
        for (const method of methods) {
          // An empty request from a caller who holds nothing here, and from one who holds everything: refused (or
          // answered), but never for want of the method, nor as a fault of the server's.
          for (const caller of [stranger, owner]) {
            const answer = await service[method]({}, caller.token).then(
              () => 0,
              (failure: { code: number; details?: string }) => failure.code
            )
            assert.notInclude([2, 12, 13], answer, `${name}/${method} as ${caller === owner ? "owner" : "stranger"}`)
          }
        }
      }
      // CheckAccountAssociation answers from the association it is asked about: here one that names no cloud.
      const accounts = clients.service(`${iam}.AccountAssociationsService`)
      await accounts.CreateAccountAssociation(
        { parent: owner.org, accountAssociation: { name: "checked" } },
        owner.token
      )
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
  }
)
