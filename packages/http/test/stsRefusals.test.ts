/**
 * What the token exchange refuses, one case per test: malformed, forged, expired or foreign tokens, misbehaving
 * issuers (small loopback servers, or names under `.invalid`), addresses a caller could aim inside, and claims that
 * are not strictly what they must be; every refusal taking the same minimum time.
 */
import type { ClaimMatch } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as jose from "jose"
import { createServer, type Server } from "node:http"
import type { OAuth2Server } from "oauth2-mock-server"
import {
  api,
  assumable,
  capture,
  denied,
  exchange,
  github,
  githubMatch,
  json,
  now,
  offline,
  provider,
  rogueIssuer,
  selfSigned,
  server,
  tokenOf
} from "./stsSupport.js"
import { call, testConfig, testServer, tokenFor } from "./support.js"

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

  it.scopedLive("a token just past its exp: the leeway is for iat and nbf only", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* refused((oidc) => tokenOf(oidc, github({ exp: now() - 5 }))), "TOKEN_EXPIRED")
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
