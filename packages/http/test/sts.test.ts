/**
 * The token exchange against a real, independent OIDC provider (oauth2-mock-server) on loopback, with GitHub
 * Actions, GitLab CI and Kubernetes token shapes (../shared/data/oidc-claims.md); the rejection matrix of the STS
 * issue, one case per test; key rotation. Misbehaving issuers are small loopback servers; a "remote" issuer is a
 * name under `.invalid`, so nothing leaves the machine even if a guard failed.
 */
import type { ClaimMatch } from "@arbor/core"
import { Groups, Identities, Principal, Role, RoleBindings, TokenIssuer } from "@arbor/core"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Schedule from "effect/Schedule"
import * as jose from "jose"
import { createServer, type Server, type ServerResponse } from "node:http"
import { OAuth2Server } from "oauth2-mock-server"
import * as oauth from "oauth4webapi"
import * as Bootstrap from "../src/Bootstrap.js"
import { call, testConfig, testServer, tokenFor } from "./support.js"

const config = testConfig()
const api = config.baseUrl
const viewer = Role.builtInByName("viewer")!.uid
const now = () => Math.floor(Date.now() / 1000)

/** Every request's log annotations, to find the reason a 403 keeps from the caller. */
const logged: Array<Record<string, unknown>> = []
const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations }) => {
    logged.push(Object.fromEntries(annotations))
  })
)
const server = testServer(config).pipe(Layer.provide(capture))

/** An OIDC provider on 127.0.0.1 with an RS256 key, stopped with the scope. */
const provider = Effect.acquireRelease(
  Effect.promise(async () => {
    const oidc = new OAuth2Server()
    await oidc.issuer.keys.generate("RS256")
    await oidc.start(0, "127.0.0.1")
    return oidc
  }),
  (oidc) => Effect.promise(() => oidc.stop())
)

/** A token of `oidc` with these claims (a claim set to undefined is left out) and header members. */
const tokenOf = (
  oidc: OAuth2Server,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {}
) =>
  Effect.promise(() =>
    oidc.issuer.buildToken({
      scopesOrTransform: (h, payload) => {
        Object.assign(payload, claims)
        Object.assign(h, header)
      }
    })
  )

/** The claims the GitHub Actions docs show, for a job in environment `prod`. */
const github = (claims: Record<string, unknown> = {}) => ({
  sub: "repo:octo-org/octo-repo:environment:prod",
  aud: "https://github.com/octo-org",
  jti: "example-id",
  environment: "prod",
  ref: "refs/heads/main",
  ref_type: "branch",
  repository: "octo-org/octo-repo",
  repository_id: "74",
  repository_owner: "octo-org",
  repository_owner_id: "65",
  repository_visibility: "private",
  actor: "octocat",
  workflow: "example-workflow",
  job_workflow_ref: "octo-org/octo-automation/.github/workflows/oidc.yml@refs/heads/main",
  event_name: "workflow_dispatch",
  runner_environment: "github-hosted",
  ...claims
})

const githubMatch = (issuer: string): ClaimMatch.ClaimMatch => ({
  issuer,
  subject: "repo:octo-org/octo-repo:environment:prod",
  audience: "https://github.com/octo-org",
  claims: { repository_owner: "octo-org" },
  claimPatterns: { job_workflow_ref: "octo-org/octo-automation/\\.github/workflows/[^@]+@refs/heads/main" }
})

/** An organization with a folder, an identity in the folder with `claimMatch`, bound to viewer there. */
const assumable = (input: { readonly claimMatch?: ClaimMatch.ClaimMatch; readonly staticKeys?: object }) =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const org = yield* groups.createRoot(Principal.system, { name: `org-${Math.random().toString(36).slice(2)}` })
    const folder = yield* groups.create(Principal.system, org.uid, { name: "ci" })
    const identity = yield* (yield* Identities.Identities).create(Principal.system, folder.uid, {
      name: "deployer",
      ...input
    } as never)
    yield* (yield* RoleBindings.RoleBindings).create(Principal.system, folder.uid, {
      identityUid: identity.uid,
      roleUid: viewer
    })
    return { org: org.uid, folder: folder.uid, identity: identity.uid }
  }).pipe(Effect.orDie)

const exchange = (token: string | undefined, identity: string, method = "GET", aud = api) =>
  call(
    method,
    `/sts/exchange?aud=${encodeURIComponent(aud)}&identity=${identity}`,
    token === undefined ? {} : { token }
  )

/** Asserts the one 403 every failed exchange gets, and returns the reason the server logged for it. */
const denied = (reply: { status: number; body: any; headers: Readonly<Record<string, string>> }, identity: string) => {
  assert.strictEqual(reply.status, 403)
  assert.deepStrictEqual(reply.body, {
    code: 7,
    message: `Permission 'identity.assume' denied on resource '${identity}' (or it might not exist)`,
    details: [{
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "PERMISSION_DENIED",
      domain: "iam.arbor.dev",
      metadata: { capability: "identity.assume", resource: identity }
    }]
  })
  const line = logged.find((l) => l.requestId === reply.headers["x-request-id"])
  return String(line?.denied ?? "").split(":")[0]
}

/** A loopback server whose routes answer as `routes` says; a route may never answer. */
const rogueIssuer = (routes: (base: string) => Record<string, (res: ServerResponse) => void>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly base: string; readonly server: Server }>((resume) => {
      const server = createServer((req, res) => {
        const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
        const route = routes(base)[req.url ?? ""]
        if (route === undefined) {
          res.writeHead(404).end()
        } else {
          route(res)
        }
      })
      server.listen(
        0,
        "127.0.0.1",
        () =>
          resume(Effect.succeed({ base: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server }))
      )
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const json = (body: unknown) => (res: ServerResponse) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))

/** A token signed by a key of our own, claiming `iss`: for issuers whose keys are never reached. */
const selfSigned = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
  Effect.promise(async () => {
    const { privateKey } = await jose.generateKeyPair("RS256")
    return new jose.SignJWT({ sub: "s", aud: api, iat: now(), exp: now() + 600, ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "k", ...header })
      .sign(privateKey)
  })

/** An identity with static keys of an offline issuer (trusted until `expirationTime`), and a token it signed. */
const offline = (expirationTime?: string) =>
  Effect.gen(function*() {
    const { privateKey, publicKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256", { extractable: true }))
    const publicJwk = { ...(yield* Effect.promise(() => jose.exportJWK(publicKey))), kid: "offline-1" }
    const { identity } = yield* assumable({
      staticKeys: {
        issuer: "https://offline.invalid",
        subject: "build-42",
        issuerKeys: JSON.stringify({ keys: [publicJwk] }),
        ...(expirationTime === undefined ? {} : { expirationTime })
      }
    })
    const upstream = yield* Effect.promise(() =>
      new jose.SignJWT({ aud: config.authUrl }).setProtectedHeader({ alg: "ES256", kid: "offline-1" })
        .setIssuer("https://offline.invalid").setSubject("build-42").setIssuedAt().setExpirationTime("5m")
        .sign(privateKey)
    )
    return { identity, upstream }
  })

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

describe("token exchange refuses", () => {
  /** A GitHub-shaped identity, its provider, and the 403 reason for an exchange of `token`. */
  const refused = (
    make: (oidc: OAuth2Server) => Effect.Effect<string>,
    claimMatch: (oidc: OAuth2Server) => ClaimMatch.ClaimMatch = (oidc) => githubMatch(oidc.issuer.url!)
  ) =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { identity } = yield* assumable({ claimMatch: claimMatch(oidc) })
      // The same identity accepts a proper token: what follows is refused for its one difference.
      assert.strictEqual((yield* exchange(yield* tokenOf(oidc, github()), identity)).status, 200)
      return denied(yield* exchange(yield* make(oidc), identity), identity)
    })

  it.scopedLive("a missing bearer (401)", () =>
    Effect.gen(function*() {
      const reply = yield* exchange(undefined, "0123456789abcdef0123456789abcdef01234567")
      assert.strictEqual(reply.status, 401)
      assert.strictEqual(reply.headers["www-authenticate"], "Bearer")
      assert.strictEqual(reply.body.code, 16)
    }).pipe(Effect.provide(server)))

  it.scopedLive("a malformed bearer (401)", () =>
    Effect.gen(function*() {
      for (const token of ["not-a-jwt", "a.b.c", "e30.e30"]) {
        const reply = yield* exchange(token, "0123456789abcdef0123456789abcdef01234567")
        assert.strictEqual(reply.status, 401, token)
        assert.strictEqual(reply.body.details[0].reason, "MALFORMED_TOKEN")
      }
    }).pipe(Effect.provide(server)))

  it.scopedLive("an audience this server does not serve (400)", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { identity } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      const reply = yield* exchange(yield* tokenOf(oidc, github()), identity, "GET", "https://elsewhere.invalid")
      assert.strictEqual(reply.status, 400)
      assert.strictEqual(reply.body.details[1].fieldViolations[0].field, "aud")
    }).pipe(Effect.provide(server)))

  it.scopedLive("an identity that does not exist, with the same 403 as a mismatch", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { folder } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
      const missing = `${folder}/0123456789abcdef`
      assert.strictEqual(denied(yield* exchange(yield* tokenOf(oidc, github()), missing), missing), "UNKNOWN_IDENTITY")
    }).pipe(Effect.provide(server)))

  it.scopedLive("alg: none", () =>
    Effect.gen(function*() {
      const reason = yield* refused((oidc) =>
        Effect.succeed(
          `${jose.base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${
            jose.base64url.encode(JSON.stringify({ iss: oidc.issuer.url, ...github(), iat: now(), exp: now() + 600 }))
          }.`
        )
      )
      assert.strictEqual(reason, "ALGORITHM_NOT_ALLOWED")
    }).pipe(Effect.provide(server)))

  it.scopedLive("HS256 signed with the issuer's public key", () =>
    Effect.gen(function*() {
      const reason = yield* refused((oidc) =>
        Effect.promise(() => {
          const publicJwk = oidc.issuer.keys.toJSON()[0]!
          return new jose.SignJWT({ ...github(), iat: now(), exp: now() + 600 })
            .setProtectedHeader({ alg: "HS256", kid: publicJwk.kid })
            .setIssuer(oidc.issuer.url!)
            .sign(new TextEncoder().encode(JSON.stringify(publicJwk)))
        })
      )
      assert.strictEqual(reason, "ALGORITHM_NOT_ALLOWED")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a kid the issuer does not publish", () =>
    Effect.gen(function*() {
      const reason = yield* refused((oidc) => selfSigned({ ...github(), iss: oidc.issuer.url }, { kid: "unknown" }))
      assert.strictEqual(reason, "UNKNOWN_KEY")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token signed by another key under a published kid", () =>
    Effect.gen(function*() {
      const reason = yield* refused((oidc) =>
        selfSigned({ ...github(), iss: oidc.issuer.url }, { kid: oidc.issuer.keys.toJSON()[0]!.kid })
      )
      assert.strictEqual(reason, "BAD_SIGNATURE")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token of another issuer", () =>
    Effect.gen(function*() {
      const other = yield* provider
      const reason = yield* refused(() => tokenOf(other, github()))
      assert.strictEqual(reason, "CLAIM_MISMATCH")
    }).pipe(Effect.provide(server)))

  it.scopedLive("an issuer whose discovery document names another issuer", () =>
    Effect.gen(function*() {
      const rogue = yield* rogueIssuer((base) => ({
        "/.well-known/openid-configuration": json({ issuer: `${base}/other`, jwks_uri: `${base}/jwks` })
      }))
      const { identity } = yield* assumable({
        claimMatch: { issuer: rogue.base, subject: "s", audience: api }
      })
      const reason = denied(yield* exchange(yield* selfSigned({ iss: rogue.base }), identity), identity)
      assert.strictEqual(reason, "ISSUER_MISMATCH")
    }).pipe(Effect.provide(server)))

  it.scopedLive("an issuer whose discovery redirects", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const rogue = yield* rogueIssuer(() => ({
        "/.well-known/openid-configuration": (res) =>
          res.writeHead(302, { location: `${oidc.issuer.url}/.well-known/openid-configuration` }).end()
      }))
      const { identity } = yield* assumable({ claimMatch: { issuer: rogue.base, subject: "s", audience: api } })
      const reason = denied(yield* exchange(yield* selfSigned({ iss: rogue.base }), identity), identity)
      assert.strictEqual(reason, "FETCH_FAILED")
    }).pipe(Effect.provide(server)))

  it.scopedLive("an expired token", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* refused((oidc) => tokenOf(oidc, github({ exp: now() - 120 }))), "TOKEN_EXPIRED")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token not yet valid", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* refused((oidc) => tokenOf(oidc, github({ nbf: now() + 300 }))), "TOKEN_NOT_YET_VALID")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token issued in the future", () =>
    Effect.gen(function*() {
      const reason = yield* refused((oidc) => tokenOf(oidc, github({ iat: now() + 300, nbf: undefined })))
      assert.strictEqual(reason, "TOKEN_NOT_YET_VALID")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token without exp", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* refused((oidc) => tokenOf(oidc, github({ exp: undefined }))), "MISSING_CLAIM")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token for another audience", () =>
    Effect.gen(function*() {
      const reason = yield* refused((oidc) => tokenOf(oidc, github({ aud: "https://github.com/other-org" })))
      assert.strictEqual(reason, "CLAIM_MISMATCH")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token of another subject", () =>
    Effect.gen(function*() {
      const reason = yield* refused((oidc) => tokenOf(oidc, github({ sub: "repo:octo-org/octo-repo:environment:dev" })))
      assert.strictEqual(reason, "CLAIM_MISMATCH")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a token whose claim differs from an exact claim or misses a claim pattern", () =>
    Effect.gen(function*() {
      for (
        const claims of [
          { repository_owner: "octo-org-evil" },
          { repository_owner: undefined },
          { job_workflow_ref: "octo-org/octo-automation/.github/workflows/oidc.yml@refs/heads/dev" }
        ]
      ) {
        assert.strictEqual(yield* refused((oidc) => tokenOf(oidc, github(claims))), "CLAIM_MISMATCH")
      }
    }).pipe(Effect.provide(server)))

  it.scopedLive("a subject pattern that matches only a prefix of the subject", () =>
    Effect.gen(function*() {
      const reason = yield* refused(
        (oidc) => tokenOf(oidc, github({ sub: "repo:octo-org/octo-repo:environment:prod:evil" })),
        (
          oidc
        ) => ({
          ...githubMatch(oidc.issuer.url!),
          subject: undefined,
          subjectPattern: "repo:octo-org/octo-repo:environment:prod"
        } as never)
      )
      assert.strictEqual(reason, "CLAIM_MISMATCH")
    }).pipe(Effect.provide(server)))

  it.scopedLive("a static-key identity whose keys have expired", () =>
    Effect.gen(function*() {
      const { identity, upstream } = yield* offline(new Date(Date.now() - 1000).toISOString())
      assert.strictEqual(denied(yield* exchange(upstream, identity), identity), "STATIC_KEYS_EXPIRED")
    }).pipe(Effect.provide(server)))

  it.scopedLive("an API token of this server presented as the upstream token", () =>
    Effect.gen(function*() {
      const reason = yield* Effect.flatMap(provider, (oidc) =>
        Effect.gen(function*() {
          const { identity } = yield* assumable({ claimMatch: githubMatch(oidc.issuer.url!) })
          return denied(yield* exchange(yield* tokenFor(identity), identity), identity)
        }))
      assert.strictEqual(reason, "OWN_TOKEN")
    }).pipe(Effect.provide(server)))

  it.scopedLive("an http:// issuer that is not loopback, without any request to it", () =>
    Effect.gen(function*() {
      const { identity } = yield* assumable({
        claimMatch: { issuerPattern: "http://[a-z.]+\\.invalid", subject: "s", audience: api }
      })
      const reason = denied(yield* exchange(yield* selfSigned({ iss: "http://issuer.invalid" }), identity), identity)
      assert.strictEqual(reason, "INVALID_ISSUER")
    }).pipe(Effect.provide(server)))

  it.scopedLive(
    "a JWKS endpoint that hangs: refused after 5 s, the server answering meanwhile",
    () =>
      Effect.gen(function*() {
        const rogue = yield* rogueIssuer((base) => ({
          "/.well-known/openid-configuration": json({ issuer: base, jwks_uri: `${base}/jwks` }),
          "/jwks": () => {}
        }))
        const { identity } = yield* assumable({ claimMatch: { issuer: rogue.base, subject: "s", audience: api } })
        const started = Date.now()
        const pending = yield* Effect.fork(exchange(yield* selfSigned({ iss: rogue.base }), identity))
        yield* Effect.sleep("500 millis")
        const health = Date.now()
        assert.strictEqual((yield* call("GET", "/healthz")).status, 200)
        assert.isBelow(Date.now() - health, 1000)
        const reply = yield* Fiber.join(pending)
        assert.isAtLeast(Date.now() - started, 4900)
        assert.strictEqual(denied(reply, identity), "TIMEOUT")
      }).pipe(Effect.provide(server)),
    20_000
  )

  it.scopedLive("a JWKS of 10 MB, declared or streamed", () =>
    Effect.gen(function*() {
      const huge = `{"keys":[],"padding":"${"x".repeat(10 * 1024 * 1024)}"}`
      const rogue = yield* rogueIssuer((base) => ({
        "/declared/.well-known/openid-configuration": json({
          issuer: `${base}/declared`,
          jwks_uri: `${base}/jwks-declared`
        }),
        "/streamed/.well-known/openid-configuration": json({
          issuer: `${base}/streamed`,
          jwks_uri: `${base}/jwks-streamed`
        }),
        "/jwks-declared": (res) => res.writeHead(200, { "content-length": huge.length }).end(huge),
        "/jwks-streamed": (res) => {
          res.writeHead(200)
          for (let i = 0; i < huge.length; i += 65536) res.write(huge.slice(i, i + 65536))
          res.end()
        }
      }))
      for (const path of ["declared", "streamed"]) {
        const issuer = `${rogue.base}/${path}`
        const { identity } = yield* assumable({ claimMatch: { issuer, subject: "s", audience: api } })
        const reason = denied(yield* exchange(yield* selfSigned({ iss: issuer }), identity), identity)
        assert.strictEqual(reason, "DOCUMENT_TOO_LARGE")
      }
    }).pipe(Effect.provide(server)))
})

// Each refusal is held to the denial floor: a test of a dozen refusals outlasts vitest's default 5 s on a loaded machine.
describe("token exchange fetches nothing a caller could aim inside", { timeout: 30_000 }, () => {
  /** A loopback server standing for an internal service: counts every connection it receives. */
  const internalService = Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly connections: () => number; readonly server: Server }>((resume) => {
      let connections = 0
      const server = createServer((_, res) => res.end("{}"))
      server.on("connection", () => connections++)
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          port: (server.address() as { port: number }).port,
          connections: () => connections,
          server
        })))
    }),
    ({ server }) => Effect.sync(() => server.close())
  )

  it.scopedLive("an issuer that is not a strict https URL on a public host is refused before any fetch", () =>
    Effect.gen(function*() {
      const internal = yield* internalService
      const port = internal.port
      // A pattern that any issuer matches: only the URL rules stand between the token and a fetch.
      const { identity } = yield* assumable({ claimMatch: { issuerPattern: ".*", subject: "s", audience: api } })
      for (
        const iss of [
          `https://0x7f000001:${port}`,
          `https://2130706433:${port}`,
          `https://127.1:${port}`,
          "https://169.254.169.254",
          "https://10.0.0.1",
          "https://100.64.0.1",
          `http://127.attacker.invalid:${port}`,
          `https://issuer.invalid@127.0.0.1:${port}`,
          `http://localhost:${port}/x?y=/.well-known`,
          `http://localhost:${port}/#`,
          "https://ISSUER.invalid",
          "https://issuer.invalid.",
          `http://127.0.0.1:${port}/a/../b`
        ]
      ) {
        const reason = denied(yield* exchange(yield* selfSigned({ iss }), identity), identity)
        assert.strictEqual(reason, "INVALID_ISSUER", iss)
      }
      assert.strictEqual(internal.connections(), 0)
    }).pipe(Effect.provide(server)))

  it.scopedLive("without loopback allowed, loopback issuers are refused too", () =>
    Effect.gen(function*() {
      const internal = yield* internalService
      const { identity } = yield* assumable({ claimMatch: { issuerPattern: ".*", subject: "s", audience: api } })
      for (
        const iss of [
          `http://127.0.0.1:${internal.port}`,
          `https://127.0.0.1:${internal.port}`,
          `https://[::1]:${internal.port}`,
          `https://[::ffff:127.0.0.1]:${internal.port}`,
          `https://localhost:${internal.port}`
        ]
      ) {
        const reason = denied(yield* exchange(yield* selfSigned({ iss }), identity), identity)
        assert.strictEqual(reason, "INVALID_ISSUER", iss)
      }
      assert.strictEqual(internal.connections(), 0)
    }).pipe(Effect.provide(testServer(testConfig({ allowLoopbackIssuers: false })).pipe(Layer.provide(capture)))))

  it.scopedLive("a jwks_uri on an internal address is refused", () =>
    Effect.gen(function*() {
      const internal = yield* internalService
      for (
        const jwks of [
          "http://10.0.0.1/jwks",
          "https://169.254.169.254/latest/meta-data",
          "https://[fd00::1]/jwks",
          `https://user@localhost:${internal.port}/jwks`,
          "file:///etc/passwd"
        ]
      ) {
        const rogue = yield* rogueIssuer((base) => ({
          "/.well-known/openid-configuration": json({ issuer: base, jwks_uri: jwks })
        }))
        const { identity } = yield* assumable({ claimMatch: { issuer: rogue.base, subject: "s", audience: api } })
        const reason = denied(yield* exchange(yield* selfSigned({ iss: rogue.base }), identity), identity)
        assert.strictEqual(reason, "INSECURE_URL", jwks)
      }
      assert.strictEqual(internal.connections(), 0)
    }).pipe(Effect.provide(server)))
})

describe("token exchange, strict claims and timing", () => {
  it.scopedLive("a sub that is not a string, or an aud that is not strings, is refused", () =>
    Effect.gen(function*() {
      const oidc = yield* provider
      const { identity } = yield* assumable({
        claimMatch: { issuer: oidc.issuer.url!, subjectPattern: ".*", audiencePattern: ".*" }
      })
      for (const claims of [{ sub: ["x", "y"] }, { sub: 42 }, { aud: [api, 7] }, { aud: { x: api } }]) {
        const reason = denied(
          yield* exchange(yield* tokenOf(oidc, { sub: "x", aud: api, ...claims }), identity),
          identity
        )
        assert.strictEqual(reason, "INVALID_CLAIM", JSON.stringify(claims))
      }
      assert.strictEqual(
        (yield* exchange(yield* tokenOf(oidc, { sub: "x", aud: [api, "other"] }), identity)).status,
        200
      )
    }).pipe(Effect.provide(server)))

  it.scopedLive("every refusal takes the same minimum time: an unknown identity answers no sooner than a mismatch", () =>
    Effect.gen(function*() {
      const { identity } = yield* assumable({ claimMatch: { issuer: "https://issuer.invalid", subject: "s" } })
      const unknown = `${identity.slice(0, -16)}ffffffffffffffff`
      for (const target of [identity, unknown]) {
        const token = yield* selfSigned({ iss: "https://other.invalid" })
        const started = performance.now()
        const reply = yield* exchange(token, target)
        assert.strictEqual(reply.status, 403)
        assert.isAtLeast(performance.now() - started, 49, target)
      }
    }).pipe(Effect.provide(server)))
})
