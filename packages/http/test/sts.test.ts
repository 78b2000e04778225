/**
 * The token exchange against a real, independent OIDC provider (oauth2-mock-server) on loopback, with GitHub
 * Actions, GitLab CI and Kubernetes token shapes (../shared/data/oidc-claims.md); the rejection matrix of the STS
 * issue, one case per test; key rotation. Misbehaving issuers are small loopback servers; a "remote" issuer is a
 * name under `.invalid`, so nothing leaves the machine even if a guard failed.
 *
 * Here what the exchange grants and RFC 8693 at the token endpoint; its refusals in `stsRefusals.test.ts`.
 */
import { Identities, Principal, Role, RoleBindings, TokenIssuer } from "@arbor/core"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as jose from "jose"
import * as oauth from "oauth4webapi"
import * as Bootstrap from "../src/Bootstrap.js"
import {
  api,
  assumable,
  config,
  denied,
  exchange,
  github,
  githubMatch,
  offline,
  provider,
  server,
  tokenOf
} from "./stsSupport.js"
import { call, testConfig, testServer, tokenFor } from "./support.js"

describe("token exchange", () => {
  it.scopedLive("a GitHub Actions token assumes its identity; the API token reaches exactly as far as its bindings", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { folder, identity, org } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      const upstream = yield* tokenOf(oidc, github())
      const reply = yield* exchange(upstream, identity)
      assert.strictEqual(reply.status, 200, reply.text)
      const { expiry, token } = reply.body
      assert.strictEqual(Date.parse(expiry), jose.decodeJwt(token).exp! * 1000)
      assert.approximately(Date.parse(expiry) - Date.now(), 3600_000, 60_000)

      // The token is ours, verifiable by anyone from the published discovery document and keys.
      const discovery = (yield* call("GET", "/.well-known/openid-configuration")).body
      assert.strictEqual(discovery.issuer, config.authUrl)
      const jwks = (yield* call("GET", "/.well-known/jwks.json")).body
      const verified = yield* Effect.promise(() =>
        jose.jwtVerify(token, jose.createLocalJWKSet(jwks), { issuer: discovery.issuer, audience: api })
      )
      assert.strictEqual(verified.payload.sub, identity)
      assert.deepStrictEqual(verified.payload.act, {
        iss: oidc.issuer.url,
        sub: "repo:octo-org/octo-repo:environment:prod",
        aud: "https://github.com/octo-org"
      })

      // Viewer in the folder: reads there, nothing above or beside it, no writes.
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${folder}`, { token })).status, 200)
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${org}`, { token })).status, 403)
      const listed = (yield* call("GET", "/iam/v2beta1/groups", { token })).body
      assert.deepStrictEqual(listed.groups.map((g: { uid: string }) => g.uid), [folder])
      const created = yield* call("POST", `/iam/v2beta1/groups/${folder}`, { token, body: { name: "x" } })
      assert.strictEqual(created.status, 403)

      // The identity records the exchange, within a moment.
      const identities = yield* Identities.Identities
      const seen = yield* identities.get(Principal.system, identity).pipe(
        Effect.filterOrFail((i) => i.lastSeenTime.epochMillis > i.createTime.epochMillis),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("2 seconds")))
      )
      assert.isAtMost(seen.lastSeenTime.epochMillis, Date.now())
    }).pipe(Effect.provide(server)))

  it.scopedLive("cap and scope narrow the API token to those capabilities in those groups; narrowing never widens", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { folder, identity, org } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      // The identity is also an owner of the whole organization: the token is narrowed well below that.
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org, {
        identityUid: identity,
        roleUid: Role.builtInByName("owner")!.uid
      }).pipe(Effect.orDie)
      const upstream = yield* tokenOf(oidc, github())
      const narrowed = (query: string) =>
        call("GET", `/sts/exchange?aud=${encodeURIComponent(api)}&identity=${identity}&${query}`, { token: upstream })
      const reply = yield* narrowed(`cap=groups.list&cap=CAP_IAM_GROUPS_LIST&scope=${folder}`)
      assert.strictEqual(reply.status, 200, reply.text)
      const token = reply.body.token as string
      const claims = jose.decodeJwt(token)
      assert.deepStrictEqual([claims.cap, claims.scopes], [["groups.list"], [folder]])
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${folder}`, { token })).status, 200)
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${org}`, { token })).status, 403)
      const listed = (yield* call("GET", "/iam/v2beta1/groups", { token })).body
      assert.deepStrictEqual(listed.groups.map((g: { uid: string }) => g.uid), [folder])
      assert.strictEqual(
        (yield* call("POST", `/iam/v2beta1/groups/${folder}`, { token, body: { name: "x" } })).status,
        403
      )
      assert.strictEqual((yield* call("GET", "/iam/v2beta1/identities", { token })).body.identities.length, 0)

      // A capability or a group the identity does not hold is not gained: the token holds only what both allow.
      const viewerOnly = yield* (yield* RoleBindings.RoleBindings).list(Principal.system, { identity }).pipe(
        Effect.orDie
      )
      // Another owner keeps the organization (it never loses its last one).
      const keeper = yield* (yield* Identities.Identities).create(Principal.system, org, {
        name: "keeper",
        claimMatch: { issuer: "https://issuer.invalid", subject: "keeper" }
      }).pipe(Effect.orDie)
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org, {
        identityUid: keeper.uid,
        roleUid: Role.builtInByName("owner")!.uid
      }).pipe(Effect.orDie)
      for (const binding of viewerOnly.items.filter((b) => b.role.name === "owner")) {
        yield* (yield* RoleBindings.RoleBindings).delete(Principal.system, binding.uid).pipe(Effect.orDie)
      }
      const wider = (yield* narrowed(`cap=groups.create&cap=groups.list&scope=${org}`)).body.token as string
      assert.strictEqual(
        (yield* call("POST", `/iam/v2beta1/groups/${folder}`, { token: wider, body: { name: "y" } })).status,
        403
      )
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${org}`, { token: wider })).status, 403)
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${folder}`, { token: wider })).status, 200)

      // Unknown capabilities and malformed groups are named.
      const refused = yield* narrowed("cap=groups.fly&scope=acme")
      assert.strictEqual(refused.status, 400)
      assert.sameMembers(
        refused.body.details.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest")).fieldViolations
          .map((v: { field: string }) => v.field),
        ["cap", "scopes"]
      )
    }).pipe(Effect.provide(server)))

  it.scopedLive("a read that starts after an exchange answered sees its lastSeenTime, before and after the write", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { identity, org } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      const owner = yield* (yield* Identities.Identities).create(Principal.system, org, {
        name: "owner",
        claimMatch: { issuer: "https://issuer.invalid", subject: "owner" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org, {
        identityUid: owner.uid,
        roleUid: Role.builtInByName("owner")!.uid
      })
      const token = yield* tokenFor(owner.uid)
      for (let round = 0; round < 3; round++) {
        const before = Date.now()
        assert.strictEqual((yield* exchange(yield* tokenOf(oidc, github()), identity)).status, 200)
        const got = (yield* call("GET", `/iam/v2beta1/identities/${identity}`, { token })).body
        assert.isAtLeast(Date.parse(got.lastSeenTime), before, `round ${round}: get`)
        const listed = (yield* call("GET", `/iam/v2beta1/identities?uidp.ids=${identity}`, { token })).body
        assert.strictEqual(listed.identities[0].lastSeenTime, got.lastSeenTime, `round ${round}: list`)
        yield* Effect.sleep("1100 millis")
      }
    }).pipe(Effect.provide(server)))

  it.scopedLive("a GitLab CI token assumes an identity by subject pattern, audience and claims of any type", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { folder, identity } = yield* assumable({
        claimMatch: {
          issuer: oidc.issuer.url!,
          subjectPattern: "project_path:my-group/my-project:ref_type:branch:ref:[a-z0-9-]+",
          audience: "https://vault.example.com",
          claims: { namespace_path: "my-group", runner_id: "1", ref_protected: "false" },
          claimPatterns: { user_email: ".+@example\\.com" }
        }
      })
      const upstream = yield* tokenOf(oidc, {
        sub: "project_path:my-group/my-project:ref_type:branch:ref:feature-branch-1",
        aud: "https://vault.example.com",
        jti: "235b3a54-b797-45c7-ae9a-f72d7bc6ef5b",
        namespace_id: "72",
        namespace_path: "my-group",
        project_path: "my-group/my-project",
        user_email: "sample-user@example.com",
        ref: "feature-branch-1",
        ref_type: "branch",
        ref_protected: "false",
        runner_id: 1,
        groups_direct: ["mygroup/mysubgroup"]
      })
      const reply = yield* exchange(upstream, identity, "POST")
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${folder}`, { token: reply.body.token })).status, 200)
    }).pipe(Effect.provide(server)))

  it.scopedLive("a Kubernetes token assumes an identity by nested claims, with this server in its audiences", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { identity } = yield* assumable({
        claimMatch: {
          issuer: oidc.issuer.url!,
          subject: "system:serviceaccount:kube-system:coredns",
          claims: { "kubernetes.io.namespace": "kube-system", "kubernetes.io.serviceaccount.name": "coredns" }
        }
      })
      const claims = {
        sub: "system:serviceaccount:kube-system:coredns",
        aud: ["https://kubernetes.default.svc", config.authUrl],
        "kubernetes.io": {
          namespace: "kube-system",
          serviceaccount: { name: "coredns", uid: "a087d5a0-e1dd-43ec-93ac-f13d89cd13af" },
          pod: { name: "coredns-69cbfb9798-jv9gn", uid: "778a530c-b3f4-47c0-9cd5-ab018fb64f33" }
        }
      }
      assert.strictEqual((yield* exchange(yield* tokenOf(oidc, claims), identity)).status, 200)
      // Without this server among its audiences the token is for someone else.
      const elsewhere = yield* tokenOf(oidc, { ...claims, aud: ["https://kubernetes.default.svc"] })
      assert.strictEqual(denied(yield* exchange(elsewhere, identity), identity), "CLAIM_MISMATCH")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a static-key identity is assumed offline, with the keys it holds", () =>
    Effect.gen(function*() {
      const { identity, upstream } = yield* offline()
      assert.strictEqual((yield* exchange(upstream, identity)).status, 200)
    }).pipe(Effect.provide(server)))

  it.scopedLive("the bootstrap identity is assumable when ARBOR_BOOTSTRAP_ISSUER and _SUBJECT are set", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const bootstrapped = testConfig({
        bootstrapIssuer: oidc.issuer.url!,
        bootstrapSubject: "repo:acme/infra:ref:refs/heads/main"
      })
      yield* Effect.gen(function*() {
        const org = (yield* Bootstrap.run(bootstrapped))!
        const admin = (yield* (yield* Identities.Identities).list(Principal.system, { name: "bootstrap-admin" }))
          .items[0]!
        const upstream = yield* tokenOf(oidc, { sub: "repo:acme/infra:ref:refs/heads/main", aud: bootstrapped.authUrl })
        const reply = yield* exchange(upstream, admin.uid)
        assert.strictEqual(reply.status, 200, reply.text)
        const created = yield* call("POST", `/iam/v2beta1/groups/${org}`, {
          token: reply.body.token,
          body: { name: "x" }
        })
        assert.strictEqual(created.status, 200)
      }).pipe(Effect.provide(testServer(bootstrapped)))
    }).pipe(Effect.orDie))

  it.scopedLive("a key rotation publishes the new key at once, which signs only later; earlier tokens keep working", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { folder, identity } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      const before = (yield* exchange(yield* tokenOf(oidc, github()), identity)).body.token
      const kid = yield* (yield* TokenIssuer.TokenIssuer).rotate
      const after = (yield* exchange(yield* tokenOf(oidc, github()), identity)).body.token
      assert.strictEqual(jose.decodeProtectedHeader(after).kid, jose.decodeProtectedHeader(before).kid)
      assert.notStrictEqual(jose.decodeProtectedHeader(before).kid, kid)
      for (const token of [before, after]) {
        assert.strictEqual((yield* call("GET", `/iam/v2beta1/groups/${folder}`, { token })).status, 200)
      }
      const kids = (yield* call("GET", "/.well-known/jwks.json")).body.keys.map((k: { kid: string }) => k.kid)
      assert.sameMembers(kids, [jose.decodeProtectedHeader(before).kid, kid])
    }).pipe(Effect.provide(server)))
})

describe("RFC 8693 at the token endpoint", () => {
  it.scopedLive("a generic client exchanges its token for the same API token; errors are RFC 6749's", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { folder, identity } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      const exchanged = (fields: Record<string, string>) =>
        call("POST", "/oauth/token", {
          raw: new URLSearchParams({
            grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
            ...fields
          }).toString(),
          contentType: "application/x-www-form-urlencoded"
        })
      const subject = yield* tokenOf(oidc, github())
      const jwt = "urn:ietf:params:oauth:token-type:jwt"
      const ok = yield* exchanged({ subject_token: subject, subject_token_type: jwt, identity })
      assert.strictEqual(ok.status, 200, JSON.stringify(ok.body))
      assert.deepInclude(ok.body, { issued_token_type: jwt, token_type: "Bearer" })
      assert.isAbove(ok.body.expires_in, 3500)
      assert.strictEqual(ok.headers["cache-control"], "no-store")
      assert.strictEqual(jose.decodeJwt(ok.body.access_token).sub, identity)
      assert.strictEqual(
        (yield* call("GET", `/iam/v2beta1/groups/${folder}`, { token: ok.body.access_token })).status,
        200
      )
      const errorOf = (reply: { status: number; body: any }) => [reply.status, reply.body.error]
      assert.deepStrictEqual(
        errorOf(yield* exchanged({ subject_token: subject, subject_token_type: jwt })),
        [400, "invalid_request"],
        "no identity"
      )
      assert.deepStrictEqual(
        errorOf(yield* exchanged({ subject_token: subject, identity })),
        [400, "invalid_request"],
        "no subject_token_type"
      )
      assert.deepStrictEqual(
        errorOf(yield* exchanged({ subject_token: subject, subject_token_type: "urn:x:saml2", identity })),
        [400, "invalid_request"],
        "a subject token type that is not a JWT's"
      )
      assert.deepStrictEqual(
        errorOf(
          yield* exchanged({
            subject_token: subject,
            subject_token_type: jwt,
            identity,
            audience: "https://elsewhere.invalid"
          })
        ),
        [400, "invalid_target"],
        "an audience not served"
      )
      // RFC 8693 §2.1: an actor token is processed or refused; `resource` must agree with `audience`.
      const actorToken = { subject_token: subject, subject_token_type: jwt, identity, actor_token: subject }
      const asActor = yield* exchanged({ ...actorToken, actor_token_type: jwt })
      assert.deepStrictEqual(errorOf(asActor), [400, "invalid_request"], "an actor token")
      assert.include(asActor.body.error_description, "actor_token")
      assert.deepStrictEqual(
        errorOf(yield* exchanged({ subject_token: subject, subject_token_type: jwt, identity, resource: api })),
        [200, undefined],
        "resource alone names the audience"
      )
      assert.deepStrictEqual(
        errorOf(
          yield* exchanged({
            subject_token: subject,
            subject_token_type: jwt,
            identity,
            audience: api,
            resource: "https://elsewhere.invalid"
          })
        ),
        [400, "invalid_target"],
        "resource and audience that disagree"
      )
      assert.deepStrictEqual(
        errorOf(
          yield* exchanged({
            subject_token: yield* tokenOf(oidc, github({ repository_owner: "someone-else" })),
            subject_token_type: jwt,
            identity
          })
        ),
        [400, "invalid_grant"],
        "a token the identity does not match"
      )
      const discovery = (yield* call("GET", "/.well-known/oauth-authorization-server")).body
      assert.include(discovery.grant_types_supported, "urn:ietf:params:oauth:grant-type:token-exchange")
    }).pipe(Effect.provide(server)))

  it.scopedLive("oauth4webapi, a generic client, finds the token endpoint by RFC 8414 discovery and exchanges there", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { folder, identity } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      const subject = yield* tokenOf(oidc, github())
      // The server answers at its configured URL; here that is its loopback port.
      const { port } = (yield* HttpServer.HttpServer).address as HttpServer.TcpAddress
      const options = {
        [oauth.allowInsecureRequests]: true,
        [oauth.customFetch]: <M extends string, B extends URLSearchParams | undefined>(
          url: string,
          init: oauth.CustomFetchOptions<M, B>
        ) =>
          fetch(url.replace(api, `http://127.0.0.1:${port}`), {
            method: init.method,
            headers: init.headers,
            redirect: init.redirect,
            ...(init.body === undefined ? {} : { body: init.body })
          })
      }
      const issuer = new URL(api)
      const client = { client_id: "generic-client" }
      const result = yield* Effect.promise(async () => {
        const metadata = await oauth.processDiscoveryResponse(
          issuer,
          await oauth.discoveryRequest(issuer, { ...options, algorithm: "oauth2" })
        )
        const answer = await oauth.genericTokenEndpointRequest(
          metadata,
          client,
          oauth.None(),
          "urn:ietf:params:oauth:grant-type:token-exchange",
          { subject_token: subject, subject_token_type: "urn:ietf:params:oauth:token-type:jwt", identity },
          options
        )
        return { metadata, tokens: await oauth.processGenericTokenEndpointResponse(metadata, client, answer) }
      })
      assert.strictEqual(result.metadata.token_endpoint, `${api}/oauth/token`)
      assert.strictEqual(result.tokens.token_type, "bearer")
      assert.strictEqual(jose.decodeJwt(result.tokens.access_token).sub, identity)
      assert.strictEqual(
        (yield* call("GET", `/iam/v2beta1/groups/${folder}`, { token: result.tokens.access_token })).status,
        200
      )
      // A refusal reaches the client as RFC 6749's error, which the library reads.
      const refused = yield* Effect.promise(async () => {
        const answer = await oauth.genericTokenEndpointRequest(
          result.metadata,
          client,
          oauth.None(),
          "urn:ietf:params:oauth:grant-type:token-exchange",
          { subject_token: "not-a-token", subject_token_type: "urn:ietf:params:oauth:token-type:jwt", identity },
          options
        )
        return oauth.processGenericTokenEndpointResponse(result.metadata, client, answer).then(
          () => undefined,
          (error: unknown) => error
        )
      })
      assert.instanceOf(refused, oauth.ResponseBodyError)
      assert.strictEqual((refused as oauth.ResponseBodyError).error, "invalid_grant")
    }).pipe(Effect.provide(server)))
})
