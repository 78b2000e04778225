/**
 * The OpenAPI document tells the truth: live responses of every kind (lists, resources, errors of each code, v1)
 * validate against the schema it gives for their operation and status, with the engine in memory and on
 * PostgreSQL (the whole API served from each). And /docs works offline: the page and
 * every asset it references come from this server.
 */
import { deviceCodeGrant as deviceGrant } from "@arbor/api/OAuth"
import { assert, describe, it } from "@effect/vitest"
import Ajv2020 from "ajv/dist/2020.js"
import * as Effect from "effect/Effect"
import * as jose from "jose"
import type { Reply } from "./support.js"
import { call, member, stores, testServer, testServerOn } from "./support.js"

interface Operation {
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema: unknown }> }>
}

/** The operation of the document that `method path` reaches: literal paths before `{uid}` ones. */
const operationOf = (doc: any, method: string, path: string): Operation | undefined => {
  const templates = Object.keys(doc.paths).sort((a, b) => Number(a.includes("{")) - Number(b.includes("{")))
  for (const template of templates) {
    const pattern = new RegExp(`^${template.replace(/\{uid\}/, ".+")}$`)
    if (pattern.test(path.split("?")[0]!)) return doc.paths[template][method.toLowerCase()]
  }
  return undefined
}

describe("OpenAPI", () => {
  it.scopedLive.each(stores)(
    "live responses validate against the document's schemas (%s)",
    (store) =>
      Effect.gen(function*() {
        const doc = (yield* call("GET", "/openapi.json")).body
        assert.strictEqual(doc.openapi, "3.1.0")
        const ajv = new (Ajv2020 as any)({
          strict: false,
          allErrors: true,
          formats: { "date-time": /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ }
        })
        ajv.addSchema({ ...doc, $id: "openapi" })
        const { org, token } = yield* member("acme")
        const checked = new Set<string>()
        const check = (method: string, path: string, reply: Reply) => {
          const operation = operationOf(doc, method, path)
          assert.isDefined(operation, `${method} ${path} is documented`)
          const response = operation!.responses[String(reply.status)]
          assert.isDefined(response, `${method} ${path} documents status ${reply.status}`)
          const schema = response!.content?.["application/json"]?.schema
          if (schema === undefined) {
            assert.strictEqual(reply.text, "", `${method} ${path} ${reply.status} has no body`)
            return
          }
          const validate = ajv.compile(
            JSON.parse(JSON.stringify(schema).replaceAll("\"#/components/", "\"openapi#/components/"))
          )
          assert.isTrue(
            validate(reply.body),
            `${method} ${path} ${reply.status}: ${JSON.stringify(validate.errors)}\n${reply.text}`
          )
          checked.add(`${reply.status}`)
        }
        const send = (method: string, path: string, body?: unknown) =>
          Effect.tap(
            call(method, path, { token, ...(body === undefined ? {} : { body }) }),
            (reply) => check(method, path, reply)
          )

        const team = (yield* send("POST", `/iam/v2beta1/groups/${org}`, { name: "team", description: "d" })).body
        yield* send("GET", `/iam/v2beta1/groups?uidp.descendants_of=${org}&page_size=1`)
        yield* send("GET", `/iam/v2beta1/groups/${team.uid}`)
        yield* send("PATCH", `/iam/v2beta1/groups/${team.uid}`, { description: "e" })
        const identity = (yield* send("POST", `/iam/v2beta1/identities/${team.uid}`, {
          name: "ci",
          claimMatch: { issuer: "https://i.example", subject: "s" }
        })).body
        const viewer = (yield* send("GET", "/iam/v2beta1/roles?name=viewer")).body.roles[0]
        const binding = (yield* send("POST", `/iam/v2beta1/roleBindings/${team.uid}`, {
          identityUid: identity.uid,
          roleUid: viewer.uid
        }))
          .body
        yield* send("GET", `/iam/v2beta1/roleBindings/${binding.uid}`)
        yield* send("POST", `/iam/v2beta1/identityProviders/${team.uid}`, {
          name: "sso",
          defaultRole: viewer.uid,
          oidc: { issuer: "https://login.example", clientId: "c", clientSecret: "s" }
        })
        yield* send("POST", `/iam/v2beta1/accountAssociations/${team.uid}`, {
          name: "aws",
          amazon: { account: "123456789012" }
        })
        yield* send("POST", `/iam/v2beta1/groupInvites/${team.uid}`, { roleUid: viewer.uid, email: "a@example.com" })
        yield* send("GET", "/iam/v2beta1/groupInvites")
        const repo = (yield* send("POST", `/registry/v1/repos/${team.uid}`, { name: "nginx" })).body
        yield* send("POST", `/registry/v1/tags/${repo.id}`, { name: "latest" })
        yield* send("GET", `/registry/v2beta1/tags?uidp.children_of=${repo.id}`)
        yield* send("GET", "/registry/v2beta1/repos")
        yield* send("GET", "/vulnerabilities/v2beta1/advisories?query=x")
        yield* send("GET", `/iam/v1/groups?id=${team.uid}`)
        yield* send("PUT", `/iam/v1/groups/${team.uid}`, { name: "team2" })
        yield* send("GET", "/iam/v1/roles")
        // Errors of each code.
        yield* send("POST", `/iam/v2beta1/groups/${org}`, { name: "BAD" })
        yield* send("GET", `/iam/v2beta1/groups/${org}/0123456789abcdef`)
        yield* send("POST", `/iam/v2beta1/groups/${org}`, { name: "team2" })
        yield* send("DELETE", `/iam/v2beta1/groups/${team.uid}`)
        yield* send("POST", "/iam/v2beta1/groups", { name: "other" })
        yield* send("DELETE", `/iam/v2beta1/roleBindings/${binding.uid}`)
        const unauthenticated = yield* call("GET", "/iam/v2beta1/groups")
        check("GET", "/iam/v2beta1/groups", unauthenticated)
        assert.strictEqual(unauthenticated.headers["www-authenticate"], "Bearer")
        // The token exchange, with an offline (static-key) identity, and its discovery documents.
        const { privateKey, publicKey } = yield* Effect.promise(() =>
          jose.generateKeyPair("ES256", { extractable: true })
        )
        const publicJwk = yield* Effect.promise(() => jose.exportJWK(publicKey))
        const offline = (yield* send("POST", `/iam/v2beta1/identities/${org}`, {
          name: "offline",
          staticKeys: {
            issuer: "https://offline.invalid",
            subject: "job",
            issuerKeys: JSON.stringify({ keys: [publicJwk] })
          }
        })).body
        const upstream = yield* Effect.promise(() =>
          new jose.SignJWT({ aud: "http://localhost:8080" }).setProtectedHeader({ alg: "ES256" })
            .setIssuer("https://offline.invalid").setSubject("job").setIssuedAt().setExpirationTime("5m").sign(
              privateKey
            )
        )
        const exchange = (bearer: string | undefined, aud = "http://localhost:8080") => {
          const path = `/sts/exchange?aud=${encodeURIComponent(aud)}&identity=${offline.uid}`
          return Effect.tap(
            call("GET", path, bearer === undefined ? {} : { token: bearer }),
            (r) => check("GET", path, r)
          )
        }
        assert.strictEqual((yield* exchange(upstream)).status, 200)
        assert.strictEqual((yield* exchange(token)).status, 403)
        assert.strictEqual((yield* exchange(undefined)).status, 401)
        assert.strictEqual((yield* exchange(upstream, "https://elsewhere.invalid")).status, 400)
        check("GET", "/.well-known/openid-configuration", yield* call("GET", "/.well-known/openid-configuration"))
        check("GET", "/.well-known/jwks.json", yield* call("GET", "/.well-known/jwks.json"))
        check("GET", "/healthz", yield* call("GET", "/healthz"))
        check("GET", "/readyz", yield* call("GET", "/readyz"))
        // The sign-in endpoints, which speak OAuth: form bodies in, OAuth's JSON out.
        const form = (path: string, body: string) =>
          Effect.tap(
            call("POST", path, { raw: body, contentType: "application/x-www-form-urlencoded" }),
            (r) => check("POST", path, r)
          )
        yield* form("/oauth/device/code", "create_refresh_token=true")
        assert.strictEqual((yield* form("/oauth/token", "grant_type=password")).status, 400)
        assert.strictEqual(
          (yield* form("/oauth/token", `grant_type=${encodeURIComponent(deviceGrant)}&device_code=x`)).status,
          400
        )
        assert.strictEqual((yield* form("/oauth/revoke", "token=unknown")).status, 200)
        assert.includeMembers([...checked], ["200", "400", "401", "403", "404", "409"])
      }).pipe(Effect.provide(testServerOn(store)))
  )

  it.scopedLive("reads like a reference: every operation written up, each parameter once and typed, no conflict on a read", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/openapi.json")).body
      const operations = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
        Object.entries(item).map(([method, operation]: [string, any]) => ({ path, method, operation }))
      )
      for (const { method, operation, path } of operations) {
        const where = `${method.toUpperCase()} ${path}`
        assert.isAtLeast(operation.summary?.length ?? 0, 8, `${where} has a summary`)
        assert.notMatch(operation.summary, /one of|below a group/i, `${where}: a written summary`)
        assert.isAtLeast(operation.description?.length ?? 0, 20, `${where} has a description`)
        const names = (operation.parameters ?? []).map((p: { name: string }) => p.name)
        assert.deepStrictEqual(names, [...new Set(names)], `${where}: each parameter once`)
        assert.notInclude(names.join(","), "pageSize", `${where}: parameters in snake_case only`)
        for (const parameter of operation.parameters ?? []) {
          assert.isAbove(parameter.description?.length ?? 0, 0, `${where} ${parameter.name} is described`)
        }
        if (method === "get") assert.notProperty(operation.responses, "409", `${where}: a read never conflicts`)
      }
      const pageSize = doc.paths["/iam/v2beta1/groups"].get.parameters.find((p: any) => p.name === "page_size")
      assert.strictEqual(pageSize.schema.type, "integer")
      assert.property(doc.paths["/iam/v2beta1/groups/{uid}"].post.responses, "409")
      // The sign-in endpoints the README uses.
      for (const path of ["/oauth", "/oauth/device/code", "/oauth/token", "/oauth/revoke"]) {
        assert.property(doc.paths, path)
      }
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("/docs serves the reference page and every asset it references, from this server", () =>
    Effect.gen(function*() {
      const page = yield* call("GET", "/docs")
      assert.strictEqual(page.status, 200)
      assert.match(page.headers["content-type"]!, /^text\/html/)
      // Same-origin with the console: under a strict policy, never framed.
      const policy = page.headers["content-security-policy"] ?? ""
      for (
        const directive of ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]
      ) {
        assert.include(policy, directive)
      }
      assert.notInclude(policy, "unsafe-eval")
      assert.strictEqual(page.headers["x-frame-options"], "DENY")
      const references = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
      assert.isAtLeast(references.length, 3)
      for (const reference of references) {
        assert.match(reference, /^\/[^/]/, `${reference} is served by this server`)
        const asset = yield* call("GET", reference)
        assert.strictEqual(asset.status, 200, reference)
        assert.isAbove(asset.text.length, 0, reference)
      }
      const init = yield* call("GET", "/docs/init.js")
      assert.include(init.text, "/openapi.json")
      assert.include(init.text, "validatorUrl: null")
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("a browser at the server's address is sent to the console; an API client is told where to go", () =>
    Effect.gen(function*() {
      const browser = yield* call("GET", "/", {
        headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" }
      })
      assert.strictEqual(browser.status, 303)
      assert.strictEqual(browser.headers["location"], "/console/")
      for (const accept of [undefined, "application/json"]) {
        const client = yield* call("GET", "/", accept === undefined ? {} : { headers: { accept } })
        assert.strictEqual(client.status, 200, String(accept))
        assert.deepInclude(client.body, { docs: "/docs", openapi: "/openapi.json", console: "/console/" })
        // Each of them is there.
        for (const path of ["/docs", "/openapi.json"]) assert.strictEqual((yield* call("GET", path)).status, 200)
      }
      assert.strictEqual((yield* call("GET", "/nowhere")).status, 404)
    }).pipe(Effect.provide(testServer())))
})
