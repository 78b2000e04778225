/**
 * People sign in (docs/api.md §10) against a real OpenID provider (`oidc-provider`): the browser flow to a loopback
 * callback, the headless flow through the verification page, invites and organizations' providers, refresh and
 * revocation; and every attack the flows must refuse.
 */
import {
  ExternalGroupRoleMappings,
  GroupInvites,
  Groups,
  IdentityProviders,
  Principal,
  Role,
  RoleBindings
} from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import {
  Browser,
  confirmDevice,
  formOf,
  freePort,
  loginWith,
  postForm,
  startCallback,
  startProvider,
  startServer
} from "./signInSupport.js"

let provider: Awaited<ReturnType<typeof startProvider>>
let server: Awaited<ReturnType<typeof startServer>>
let callback: Awaited<ReturnType<typeof startCallback>>

beforeAll(async () => {
  const port = await freePort()
  provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
  server = await startServer(port, { login: loginWith(provider) })
  callback = await startCallback()
}, 30_000)

afterAll(async () => {
  await server?.close()
  await provider?.close()
  await callback?.close()
})

const run = <A, E>(effect: Effect.Effect<A, E, any>) => server.runtime.runPromise(effect as Effect.Effect<A, E, never>)

const signInUrl = (params: Record<string, string>) =>
  `${server.url}/oauth?${new URLSearchParams({ exit: "redirect", redirect: callback.url, ...params })}`

/** A whole browser sign-in as `login`: the URL the callback listener received. */
const signIn = async (login: string, params: Record<string, string> = {}, browser = new Browser()) => {
  const visit = await browser.visit(signInUrl(params), { login, provider: provider.issuer })
  assert.strictEqual(visit.url.split("?")[0], callback.url, visit.text)
  return new URL(visit.url)
}

const api = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } })

const json = async (response: Response | Promise<Response>): Promise<any> => (await response).json()

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())

/**
 * An organization `name` whose own provider (the test's, asked for the `groups` claim) maps the provider's group
 * `group` to the built-in role `role` at the organization: its uid and the mapping's.
 */
const mappedOrganization = (name: string, group: string, role: string) =>
  run(Effect.gen(function*() {
    const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name })
    const idp = yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
      name: "corporate",
      defaultRole: Role.builtInByName("viewer")!.uid,
      oidc: {
        issuer: provider.issuer,
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        additionalScopes: ["groups"],
        groupsClaim: "groups"
      }
    })
    const mapping = yield* (yield* ExternalGroupRoleMappings.ExternalGroupRoleMappings).create(
      Principal.system,
      idp.uid,
      {
        externalGroupId: group,
        roleUid: Role.builtInByName(role)!.uid
      }
    )
    return { org: org.uid, mapping: mapping.uid }
  }))

describe("the browser flow", () => {
  it("signs a person in: an API token and a refresh token on the loopback callback, a root identity of theirs", async () => {
    const landed = await signIn("ada", { create_refresh_token: "true" })
    const token = landed.searchParams.get("token")!
    const refresh = landed.searchParams.get("refresh_token")!
    assert.isString(token)
    assert.isString(refresh)
    const claims = claimsOf(token)
    assert.strictEqual(claims.email, "ada@example.com")
    assert.deepStrictEqual(claims.act, { iss: provider.issuer, sub: "sub-ada" })
    const me = await api(`/iam/v2beta1/identities/${claims.sub}`, token)
    assert.strictEqual(me.status, 200)
    const identity = await json(me)
    assert.deepStrictEqual(
      [identity.name, identity.email, identity.claimMatch],
      ["ada", "ada@example.com", { issuer: provider.issuer, subject: "sub-ada" }]
    )
    // A new person holds nothing.
    const groups = await json(api("/iam/v2beta1/groups", token))
    assert.deepStrictEqual(groups.groups, [])
    // The refresh token gives a new API token, once.
    const refreshed = await fetch(`${server.url}/sts/exchange_refresh_token`, {
      method: "POST",
      headers: { authorization: `Bearer ${refresh}` }
    })
    assert.strictEqual(refreshed.status, 200)
    const body = await json(refreshed)
    assert.strictEqual(claimsOf(body.token.token).sub, claims.sub)
    // Signing in again finds the same identity.
    assert.strictEqual(claimsOf((await signIn("ada")).searchParams.get("token")!).sub, claims.sub)
  })

  it("joins an organization through an invite; an invite for another email, or used up, is refused", async () => {
    const { code, org } = await run(Effect.gen(function*() {
      const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "invited" })
      const invite = yield* (yield* GroupInvites.GroupInvites).create(Principal.system, org.uid, {
        roleUid: Role.builtInByName("viewer")!.uid,
        email: "grace@example.com",
        singleUse: true
      })
      return { code: invite.code!, org: org.uid }
    }))
    const elsewhere = await signIn("eve", { invite: code })
    assert.isNull(elsewhere.searchParams.get("token"))
    assert.strictEqual(elsewhere.searchParams.get("status_code"), "400")
    assert.match(elsewhere.searchParams.get("error")!, /another email/)
    const joined = await signIn("grace", { invite: code })
    const token = joined.searchParams.get("token")!
    const groups = await json(api("/iam/v2beta1/groups", token))
    assert.deepStrictEqual(groups.groups.map((g: { uid: string }) => g.uid), [org])
    const again = await signIn("grace", { invite: code })
    assert.match(again.searchParams.get("error")!, /already been used/)
  })

  it("through an organization's provider, its group mappings give their roles for the session only", async () => {
    const { mapping, org } = await mappedOrganization("mapped-org", "eng", "owner")
    const createFolder = (token: string, name: string) =>
      api(`/iam/v2beta1/groups/${org}`, token, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name })
      })
    // An engineer: the mapping's owner role, for this token; nothing is bound beyond the default viewer.
    const engineer = await signIn("eng-ann", { idp_id: "mapped-org", create_refresh_token: "true" })
    const token = engineer.searchParams.get("token")!
    assert.deepStrictEqual(claimsOf(token).mappings, [mapping])
    assert.strictEqual((await createFolder(token, "built")).status, 200)
    const bound = await run(
      Effect.flatMap(RoleBindings.RoleBindings, (b) => b.list(Principal.system, { identity: claimsOf(token).sub }))
    )
    assert.deepStrictEqual(bound.items.map((b) => b.role.name), ["viewer"])
    // No refresh token with mapped roles (DECISIONS §15): a token it refreshed would silently lose them.
    assert.isNull(engineer.searchParams.get("refresh_token"))
    // Someone of another group gets nothing of it, and the refresh token asked for.
    const salesLanded = await signIn("sales-bob", { idp_id: "mapped-org", create_refresh_token: "true" })
    const sales = salesLanded.searchParams.get("token")!
    assert.isUndefined(claimsOf(sales).mappings)
    assert.isString(salesLanded.searchParams.get("refresh_token"))
    assert.strictEqual((await createFolder(sales, "sold")).status, 403)
    // A deleted mapping gives nothing from the next call on, to tokens that named it too.
    await run(Effect.flatMap(
      ExternalGroupRoleMappings.ExternalGroupRoleMappings,
      (m) => m.delete(Principal.system, mapping)
    ))
    assert.strictEqual((await createFolder(token, "after")).status, 403)
  })

  it("through an organization's identity provider, binds its default role at the first sign-in", async () => {
    const org = await run(Effect.gen(function*() {
      const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "okta-org" })
      yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
        name: "corporate",
        defaultRole: Role.builtInByName("viewer")!.uid,
        oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret }
      })
      return org.uid
    }))
    const landed = await signIn("linus", { idp_id: "okta-org" })
    const token = landed.searchParams.get("token")!
    const groups = await json(api("/iam/v2beta1/groups", token))
    assert.deepStrictEqual(groups.groups.map((g: { uid: string }) => g.uid), [org])
    const bindings = await run(
      Effect.flatMap(RoleBindings.RoleBindings, (b) => b.list(Principal.system, { descendantsOf: org }))
    )
    assert.deepStrictEqual(bindings.items.map((b) => b.identity.uid), [claimsOf(token).sub])
    // Unknown organizations are reported to the callback.
    const unknown = await new Browser().load(signInUrl({ idp_id: "nowhere" }))
    assert.strictEqual(unknown.status, 302)
    assert.strictEqual(new URL(unknown.headers.get("location")!).searchParams.get("status_code"), "404")
  })

  it("takes the email from the userinfo endpoint of a provider whose ID tokens do not carry it", async () => {
    const small = await startProvider(`${server.url}/oauth/callback`, { claimsInIdToken: false })
    try {
      await run(Effect.gen(function*() {
        const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "small-tokens" })
        yield* (yield* IdentityProviders.IdentityProviders).create(Principal.system, org.uid, {
          name: "small",
          defaultRole: Role.builtInByName("viewer")!.uid,
          oidc: { issuer: small.issuer, clientId: small.clientId, clientSecret: small.clientSecret }
        })
      }))
      const browser = new Browser()
      const params = new URLSearchParams({ exit: "redirect", redirect: callback.url, idp_id: "small-tokens" })
      const landed = new URL(
        (await browser.visit(`${server.url}/oauth?${params}`, {
          login: "turing",
          provider: small.issuer
        })).url
      )
      // Recorded from userinfo; an organization's provider's word on an email stays out of tokens (docs/api.md §10).
      const token = landed.searchParams.get("token")!
      const me = await json(api(`/iam/v2beta1/identities/${claimsOf(token).sub}`, token))
      assert.strictEqual(me.emailUnverified, "turing@example.com")
      assert.isUndefined(claimsOf(token).email)
    } finally {
      await small.close()
    }
  })

  it("refuses every callback that is not loopback, on an error page, never redirecting", async () => {
    for (
      const target of [
        "https://evil.example/cb",
        "http://localhost.evil.example:9000/cb",
        "javascript:alert(1)",
        "http://localhost/no-port",
        "//evil.example/cb"
      ]
    ) {
      const visit = await new Browser().load(signInUrl({ redirect: target }))
      assert.strictEqual(visit.status, 400, target)
      assert.isNull(visit.headers.get("location"), target)
      assert.match(visit.headers.get("content-security-policy")!, /default-src 'none'/)
      assert.include(visit.text, "must be a loopback address")
      assert.notInclude(visit.text, "<script")
    }
  })

  it("the console's sign-in returns to the console only, the token in the fragment, whatever redirect says", async () => {
    const browser = new Browser()
    const landed = await browser.visit(
      `${server.url}/oauth?${new URLSearchParams({ exit: "console", redirect: "https://evil.example/cb" })}`,
      {
        login: "console-person",
        provider: provider.issuer,
        stopBefore: (url) => url.startsWith(`${server.url}/console/`)
      }
    )
    const url = new URL(landed.url)
    assert.strictEqual(`${url.origin}${url.pathname}`, `${server.url}/console/`)
    assert.strictEqual(url.search, "", "nothing in the query, which servers and logs see")
    const token = new URLSearchParams(url.hash.slice(1)).get("token")!
    assert.strictEqual((await api("/iam/v2beta1/groups", token)).status, 200)
    // A console address on another host is not the server's own: refused like any callback that is not loopback.
    const elsewhere = await new Browser().load(signInUrl({ redirect: "https://evil.example/console/" }))
    assert.strictEqual(elsewhere.status, 400)
    assert.isNull(elsewhere.headers.get("location"))
  })

  it("refuses a callback without the browser's login cookie (login CSRF), and a replayed one", async () => {
    // The attacker runs a sign-in of their own up to the provider's answer…
    const attacker = new Browser()
    const answer = await attacker.visit(signInUrl({}), {
      login: "mallory",
      provider: provider.issuer,
      stopBefore: (url) => url.startsWith(`${server.url}/oauth/callback`)
    })
    // …and has the victim's browser (without the attacker's cookie) deliver it.
    const victim = await new Browser().load(answer.url)
    assert.strictEqual(victim.status, 400)
    assert.isNull(victim.headers.get("location"))
    assert.include(victim.text, "belongs to no sign-in")

    // A delivered callback works once; the same state and code again are refused.
    const browser = new Browser()
    const first = await browser.visit(signInUrl({}), {
      login: "ada",
      provider: provider.issuer,
      stopBefore: (url) => url.startsWith(`${server.url}/oauth/callback`)
    })
    const cookie = browser.cookies("127.0.0.1").get("arbor_login")!
    const delivered = await browser.load(first.url)
    assert.strictEqual(delivered.status, 302)
    assert.isNotNull(new URL(delivered.headers.get("location")!).searchParams.get("token"))
    const replayed = await browser.load(first.url, undefined, { cookie: `arbor_login=${cookie}` })
    assert.strictEqual(replayed.status, 400)
    assert.isNull(replayed.headers.get("location"))
  })

  it("refuses an ID token with another nonce, and a code redeemed with the wrong PKCE verifier", async () => {
    for (const [param, value] of [["nonce", "not-the-one-arbor-chose"], ["code_challenge", "A".repeat(43)]] as const) {
      const browser = new Browser()
      const start = await browser.load(signInUrl({}))
      const authorization = new URL(start.headers.get("location")!)
      authorization.searchParams.set(param, value)
      const landed = await browser.visit(authorization.href, { login: "ada", provider: provider.issuer })
      const url = new URL(landed.url)
      assert.strictEqual(url.origin + url.pathname, callback.url, param)
      assert.isNull(url.searchParams.get("token"), param)
      assert.strictEqual(url.searchParams.get("status_code"), "403", param)
    }
  })

  it("refuses a callback whose iss names another provider than the one the sign-in went to (RFC 9207 mix-up)", async () => {
    const browser = new Browser()
    const answer = await browser.visit(signInUrl({}), {
      login: "ada",
      provider: provider.issuer,
      stopBefore: (url) => url.startsWith(`${server.url}/oauth/callback`)
    })
    const delivered = new URL(answer.url)
    assert.strictEqual(delivered.searchParams.get("iss"), provider.issuer)
    delivered.searchParams.set("iss", "https://other-provider.invalid")
    const landed = await browser.load(delivered.href)
    const to = new URL(landed.headers.get("location")!)
    assert.strictEqual(to.origin + to.pathname, callback.url)
    assert.isNull(to.searchParams.get("token"))
    assert.strictEqual(to.searchParams.get("status_code"), "403")
  })

  it("is listed in the discovery documents as a generic client reads them: no authorization endpoint it cannot use", async () => {
    const endpoints = {
      issuer: server.url,
      token_endpoint: `${server.url}/oauth/token`,
      device_authorization_endpoint: `${server.url}/oauth/device/code`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      grant_types_supported: [deviceGrant, "urn:ietf:params:oauth:grant-type:token-exchange"],
      response_types_supported: []
    }
    for (const path of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
      const discovery = await json(fetch(`${server.url}${path}`))
      assert.deepInclude(discovery, endpoints, path)
      assert.notProperty(discovery, "authorization_endpoint", path)
    }
  })
})

const form = (path: string, fields: Record<string, string>) => postForm(`${server.url}${path}`, fields)

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

describe("the headless flow", () => {
  it("signs a person in through the verification page; the client polls for its tokens", async () => {
    const authorization = await json(form("/oauth/device/code", { create_refresh_token: "true" }))
    assert.match(authorization.user_code, /^[A-Z]{4}-[A-Z]{4}$/)
    assert.deepInclude(authorization, {
      verification_uri: `${server.url}/oauth/device`,
      verification_uri_complete: `${server.url}/oauth/device?user_code=${authorization.user_code}`,
      expires_in: 600,
      interval: 5
    })
    const browser = new Browser()
    const page = await browser.load(authorization.verification_uri_complete)
    assert.strictEqual(page.status, 200)
    assert.include(page.text, authorization.user_code)
    const link = await confirmDevice(browser, authorization.verification_uri_complete)
    const done = await browser.visit(link, { login: "hopper", provider: provider.issuer })
    assert.strictEqual(done.status, 200)
    assert.include(done.text, "You are signed in")
    const tokens = await json(form("/oauth/token", { grant_type: deviceGrant, device_code: authorization.device_code }))
    assert.strictEqual(tokens.token_type, "Bearer")
    assert.strictEqual(claimsOf(tokens.access_token).email, "hopper@example.com")
    assert.isString(tokens.refresh_token)
    // The device code works once.
    const again = await form("/oauth/token", { grant_type: deviceGrant, device_code: authorization.device_code })
    assert.strictEqual((await json(again)).error, "invalid_grant")
    // Revoking the refresh token (RFC 7009) ends it.
    assert.strictEqual((await form("/oauth/revoke", { token: tokens.refresh_token })).status, 200)
    const revoked = await fetch(`${server.url}/sts/exchange_refresh_token`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.refresh_token}` }
    })
    assert.strictEqual(revoked.status, 401)
  })

  it("through an organization's provider, the polled token carries the mappings of the person's groups", async () => {
    const { mapping } = await mappedOrganization("mapped-devices", "ops", "editor")
    const authorization = await json(form("/oauth/device/code", { idp_id: "mapped-devices" }))
    const browser = new Browser()
    const link = await confirmDevice(browser, authorization.verification_uri_complete)
    assert.include((await browser.visit(link, { login: "ops-dora", provider: provider.issuer })).text, "signed in")
    const tokens = await json(form("/oauth/token", { grant_type: deviceGrant, device_code: authorization.device_code }))
    assert.deepStrictEqual(claimsOf(tokens.access_token).mappings, [mapping])
  })

  it("answers a client that polls too fast with slow_down, and an unknown code with invalid_grant", async () => {
    const authorization = await json(form("/oauth/device/code", {}))
    const poll = () => json(form("/oauth/token", { grant_type: deviceGrant, device_code: authorization.device_code }))
    assert.strictEqual((await poll()).error, "authorization_pending")
    assert.strictEqual((await poll()).error, "slow_down")
    const unknown = await form("/oauth/token", { grant_type: deviceGrant, device_code: "nope" })
    assert.strictEqual(unknown.status, 400)
    assert.strictEqual((await json(unknown)).error, "invalid_grant")
    const unsupported = await form("/oauth/token", { grant_type: "password" })
    assert.strictEqual((await json(unsupported)).error, "unsupported_grant_type")
  })

  it("answers the token endpoint's malformed requests as RFC 6749 §5.2 says: invalid_request", async () => {
    const errorOf = async (body: string) => {
      const response = await fetch(`${server.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body
      })
      return [response.status, ((await response.json()) as { error: string }).error]
    }
    const grant = `grant_type=${encodeURIComponent(deviceGrant)}`
    assert.deepStrictEqual(await errorOf(""), [400, "invalid_request"], "no grant_type")
    assert.deepStrictEqual(await errorOf("device_code=abc"), [400, "invalid_request"], "no grant_type, a code")
    assert.deepStrictEqual(await errorOf(grant), [400, "invalid_request"], "no device_code")
    assert.deepStrictEqual(await errorOf(`${grant}&device_code=`), [400, "invalid_request"], "an empty device_code")
    assert.deepStrictEqual(
      await errorOf(`${grant}&device_code=a&device_code=b`),
      [400, "invalid_request"],
      "device_code twice"
    )
    assert.deepStrictEqual(await errorOf(`${grant}&${grant}&device_code=a`), [400, "invalid_request"], "grant twice")
    assert.deepStrictEqual(await errorOf(`${grant}&device_code=nope`), [400, "invalid_grant"], "not a device code")
  })

  it("refuses a confirmation posted from elsewhere (no page cookie), and tells of a wrong code", async () => {
    const authorization = await json(form("/oauth/device/code", {}))
    const forged = await new Browser().load(`${server.url}/oauth/device`, {
      user_code: authorization.user_code,
      csrf: "guessed",
      action: "approve"
    })
    assert.strictEqual(forged.status, 400)
    assert.notInclude(forged.text, "Continue")
    const wrong = await new Browser().load(`${server.url}/oauth/device?user_code=BBBB-BBBB`)
    assert.strictEqual(wrong.status, 404)
    assert.include(wrong.text, "not valid or has expired")
    // The person refuses: the client is denied.
    const browser = new Browser()
    const page = await browser.load(authorization.verification_uri_complete)
    const confirm = formOf(page)!
    const refused = await browser.load(confirm.action, { ...confirm.fields, action: "deny" })
    assert.include(refused.text, "will not be signed in")
    const denied = await form("/oauth/token", { grant_type: deviceGrant, device_code: authorization.device_code })
    assert.strictEqual((await json(denied)).error, "access_denied")
  })
})

describe("a device's sign-in is decided once", () => {
  it("the first approval stands: a second sign-in through the same code, finishing later, changes nothing", async () => {
    const authorization = await json(form("/oauth/device/code", {}))
    const attacker = new Browser()
    const attackerLink = await confirmDevice(attacker, authorization.verification_uri_complete)
    const victim = new Browser()
    const victimLink = await confirmDevice(victim, authorization.verification_uri_complete)
    const approved = await victim.visit(victimLink, { login: "victim", provider: provider.issuer })
    assert.include(approved.text, "You are signed in")
    const late = await attacker.visit(attackerLink, { login: "attacker", provider: provider.issuer })
    assert.notInclude(late.text, "You are signed in")
    assert.include(late.text, "already approved or refused")
    const tokens = await json(form("/oauth/token", { grant_type: deviceGrant, device_code: authorization.device_code }))
    assert.strictEqual(claimsOf(tokens.access_token).email, "victim@example.com")
  })

  it("a refusal stands: a sign-in through the same code, finishing after it, is not approved", async () => {
    const authorization = await json(form("/oauth/device/code", {}))
    const attacker = new Browser()
    const attackerLink = await confirmDevice(attacker, authorization.verification_uri_complete)
    const victim = new Browser()
    const confirm = formOf(await victim.load(authorization.verification_uri_complete))!
    assert.include((await victim.load(confirm.action, { ...confirm.fields, action: "deny" })).text, "will not be")
    const late = await attacker.visit(attackerLink, { login: "attacker", provider: provider.issuer })
    assert.notInclude(late.text, "You are signed in")
    const denied = await json(form("/oauth/token", { grant_type: deviceGrant, device_code: authorization.device_code }))
    assert.strictEqual(denied.error, "access_denied")
  })
})

describe("several servers on one PostgreSQL database", () => {
  it("a sign-in begun on one server completes on another, as behind a load balancer", async () => {
    const url = Redacted.make(await Effect.runPromise(freshDatabase))
    const [portA, portB] = [await freePort(), await freePort()]
    const authUrl = `http://127.0.0.1:${portA}`
    const shared = { store: "postgres" as const, databaseUrl: url, databasePool: 2, baseUrl: authUrl, authUrl }
    const op = await startProvider(`${authUrl}/oauth/callback`)
    const a = await startServer(portA, { ...shared, login: loginWith(op) })
    const b = await startServer(portB, { ...shared, login: loginWith(op) })
    try {
      const browser = new Browser()
      const params = new URLSearchParams({ exit: "redirect", redirect: callback.url, create_refresh_token: "true" })
      const answer = await browser.visit(`${a.url}/oauth?${params}`, {
        login: "shared",
        provider: op.issuer,
        stopBefore: (to) => to.startsWith(`${authUrl}/oauth/callback`)
      })
      const atB = await browser.load(answer.url.replace(authUrl, b.url))
      const landed = new URL(atB.headers.get("location")!)
      const token = landed.searchParams.get("token")!
      // Minted by B, it works on A; the refresh token rotates on A.
      assert.strictEqual(
        (await fetch(`${a.url}/iam/v2beta1/groups`, { headers: { authorization: `Bearer ${token}` } })).status,
        200
      )
      const refreshed = await fetch(`${a.url}/sts/exchange_refresh_token`, {
        method: "POST",
        headers: { authorization: `Bearer ${landed.searchParams.get("refresh_token")}` }
      })
      assert.strictEqual(refreshed.status, 200)
      // A device authorized on A is approved through B and collected from A.
      const authorization = await json(postForm(`${a.url}/oauth/device/code`))
      const link = await confirmDevice(
        browser,
        authorization.verification_uri_complete,
        (to) => to.replace(authUrl, b.url)
      )
      const done = await browser.visit(link, {
        login: "shared",
        provider: op.issuer,
        stopBefore: (to) => to.startsWith(`${authUrl}/oauth/callback`)
      })
      assert.include((await browser.load(done.url.replace(authUrl, b.url))).text, "You are signed in")
      const tokens = await json(
        postForm(`${a.url}/oauth/token`, { grant_type: deviceGrant, device_code: authorization.device_code })
      )
      assert.strictEqual(claimsOf(tokens.access_token).sub, claimsOf(token).sub)
    } finally {
      await a.close()
      await b.close()
      await op.close()
    }
  }, 60_000)
})

describe("the README", () => {
  /** The README's headless sign-in script, running: what it printed so far, the address it shows, how it ends. */
  const headless = async () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const section = readme.slice(readme.indexOf("## People: signing in"))
    const script = [...section.matchAll(/```sh\n([\s\S]*?)```/g)][1]![1]!
    const field = /^field\(\) .*$/m.exec(readme)![0]
    const shell = spawn("bash", ["-euo", "pipefail", "-c", `${field}\n${script}`], {
      env: { ...process.env, ARBOR: server.url }
    })
    let out = ""
    shell.stdout.on("data", (chunk) => (out += chunk))
    shell.stderr.on("data", (chunk) => (out += chunk))
    const exited = new Promise<number | null>((resolve) => shell.on("exit", resolve))
    while (!/Open (\S+) and sign in/.test(out)) await new Promise((resolve) => setTimeout(resolve, 50))
    return { out: () => out, address: /Open (\S+) and sign in/.exec(out)![1]!, exited }
  }

  it("signs a person in with the headless flow as written", async () => {
    const { address, exited, out } = await headless()
    const browser = new Browser()
    await browser.visit(await confirmDevice(browser, address), { login: "readme", provider: provider.issuer })
    assert.strictEqual(await exited, 0, out())
    assert.include(out(), "{\"groups\":[]")
  }, 30_000)

  it("the headless flow as written stops when the person refuses, saying so", async () => {
    const { address, exited, out } = await headless()
    const browser = new Browser()
    const confirm = formOf(await browser.load(address))!
    // The page's first button signs in (what Enter does); refusing is the second.
    assert.deepStrictEqual([...confirm.buttons], ["approve", "deny"])
    await browser.load(confirm.action, { ...confirm.fields, action: "deny" })
    assert.strictEqual(await exited, 1, out())
    assert.include(out(), "Not signed in: access_denied")
  }, 30_000)
})
