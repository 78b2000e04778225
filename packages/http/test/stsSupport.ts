/**
 * What the token exchange's tests share (`sts*.test.ts`): the server with its request log captured, an OIDC provider
 * of workloads on loopback, tokens of the shapes real CI systems issue, an exchange, and misbehaving issuers.
 */
import type { ClaimMatch } from "@arbor/core"
import { Groups, Identities, Principal, Role, RoleBindings } from "@arbor/core"
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as jose from "jose"
import { createServer, type Server, type ServerResponse } from "node:http"
import { OAuth2Server } from "oauth2-mock-server"
import { call, testConfig, testServer } from "./support.js"

export const config = testConfig()
export const api = config.baseUrl
export const viewer = Role.builtInByName("viewer")!.uid
export const now = () => Math.floor(Date.now() / 1000)

/** Every request's log annotations, to find the reason a 403 keeps from the caller. */
export const logged: Array<Record<string, unknown>> = []
export const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations }) => {
    logged.push(Object.fromEntries(annotations))
  })
)
export const server = testServer(config).pipe(Layer.provide(capture))

/** An OIDC provider on 127.0.0.1 with an RS256 key, stopped with the scope. */
export const provider = Effect.acquireRelease(
  Effect.promise(async () => {
    const oidc = new OAuth2Server()
    await oidc.issuer.keys.generate("RS256")
    await oidc.start(0, "127.0.0.1")
    return oidc
  }),
  (oidc) => Effect.promise(() => oidc.stop())
)

/** A token of `oidc` with these claims (a claim set to undefined is left out) and header members. */
export const tokenOf = (
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
export const github = (claims: Record<string, unknown> = {}) => ({
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

export const githubMatch = (issuer: string): ClaimMatch.ClaimMatch => ({
  issuer,
  subject: "repo:octo-org/octo-repo:environment:prod",
  audience: "https://github.com/octo-org",
  claims: { repository_owner: "octo-org" },
  claimPatterns: { job_workflow_ref: "octo-org/octo-automation/\\.github/workflows/[^@]+@refs/heads/main" }
})

/** An organization with a folder, an identity in the folder with `claimMatch`, bound to viewer there. */
export const assumable = (input: { readonly claimMatch?: ClaimMatch.ClaimMatch; readonly staticKeys?: object }) =>
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

export const exchange = (token: string | undefined, identity: string, method = "GET", aud = api) =>
  call(
    method,
    `/sts/exchange?aud=${encodeURIComponent(aud)}&identity=${identity}`,
    token === undefined ? {} : { token }
  )

/** Asserts the one 403 every failed exchange gets, and returns the reason the server logged for it. */
export const denied = (
  reply: { status: number; body: any; headers: Readonly<Record<string, string>> },
  identity: string
) => {
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
export const rogueIssuer = (routes: (base: string) => Record<string, (res: ServerResponse) => void>) =>
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

export const json = (body: unknown) => (res: ServerResponse) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))

/** A token signed by a key of our own, claiming `iss`: for issuers whose keys are never reached. */
export const selfSigned = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
  Effect.promise(async () => {
    const { privateKey } = await jose.generateKeyPair("RS256")
    return new jose.SignJWT({ sub: "s", aud: api, iat: now(), exp: now() + 600, ...claims })
      .setProtectedHeader({ alg: "RS256", kid: "k", ...header })
      .sign(privateKey)
  })

/** An identity with static keys of an offline issuer (trusted until `expirationTime`), and a token it signed. */
export const offline = (expirationTime?: string) =>
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
