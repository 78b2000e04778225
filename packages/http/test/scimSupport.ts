/**
 * What the SCIM tests share (`scim*.test.ts`): each file's server with its OpenID provider, SCIM and REST requests,
 * a person's sign-in, and an organization whose identity provider has SCIM provisioning on.
 */
import { IdentityProviders, Principal, Role } from "@arbor/core"
import * as Effect from "effect/Effect"
import { afterAll, assert, beforeAll } from "vitest"
import { Browser, freePort, loginWith, startCallback, startProvider, startServer } from "./signInSupport.js"
import { member } from "./support.js"

export let provider: Awaited<ReturnType<typeof startProvider>>
export let server: Awaited<ReturnType<typeof startServer>>
export let callback: Awaited<ReturnType<typeof startCallback>>

/** Requests a SCIM token may make a minute on this server. */
export const perMinute = 40

/** Starts a test file's server, with its OpenID provider and a sign-in callback, stopped when its tests end. */
export const useScimServer = () => {
  beforeAll(async () => {
    const port = await freePort()
    provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
    server = await startServer(port, { login: loginWith(provider), scimRequestsPerMinute: perMinute })
    callback = await startCallback()
  }, 30_000)

  afterAll(async () => {
    await server?.close()
    await provider?.close()
    await callback?.close()
  })
}

export const run = <A, E>(effect: Effect.Effect<A, E, any>) =>
  server.runtime.runPromise(effect as Effect.Effect<A, E, never>)

/** What a request answered: its status, headers and parsed body. */
export interface Answer {
  readonly status: number
  readonly headers: globalThis.Headers
  readonly body: any
}

/** A request to the server as `token`: JSON unless `contentType` says otherwise. */
export const request = async (
  method: string,
  path: string,
  token: string,
  body?: unknown,
  contentType = "application/json"
): Promise<Answer> => {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": contentType })
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) }
}

/** A SCIM request as the clients send them: `application/scim+json`. */
export const scim = (method: string, path: string, token: string, body?: unknown): Promise<Answer> =>
  request(method, path, token, body, "application/scim+json")

export const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())

/** A browser sign-in of `login` through organization `org`'s provider: the callback's parameters. */
export const signIn = async (login: string, org: string) => {
  const query = new URLSearchParams({
    exit: "redirect",
    redirect: callback.url,
    idp_id: org,
    create_refresh_token: "true"
  })
  const visit = await new Browser().visit(`${server.url}/oauth?${query}`, { login, provider: provider.issuer })
  return new URL(visit.url).searchParams
}

export const refresh = (token: string) =>
  fetch(`${server.url}/sts/exchange_refresh_token`, { method: "POST", headers: { authorization: `Bearer ${token}` } })

/**
 * An organization `name` with the test provider as its identity provider and two owners; provisioning enabled over
 * REST by the first: the owner's token, the provider's uid, its SCIM endpoint and token.
 */
export const provisionedOrganization = async (name: string) => {
  const owner = await run(member(name, "owner"))
  await run(member(name, "owner"))
  const idp = await run(
    Effect.flatMap(IdentityProviders.IdentityProviders, (providers) =>
      providers.create(Principal.system, owner.org, {
        name: "corporate",
        defaultRole: Role.builtInByName("viewer")!.uid,
        oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret }
      }))
  )
  const path = `/iam/v2beta1/identityProviders/${idp.uid}`
  const generated = await request("POST", `${path}:generateScimToken`, owner.token, {})
  assert.strictEqual(generated.status, 200, JSON.stringify(generated.body))
  const enabled = await request("POST", `${path}:setScimEnabled`, owner.token, {
    enabled: true,
    etag: generated.body.etag
  })
  assert.strictEqual(enabled.status, 200, JSON.stringify(enabled.body))
  return {
    owner,
    idp: idp.uid,
    token: generated.body.token as string,
    users: `/scim/v2/${idp.uid}/Users`,
    endpointUrl: generated.body.endpointUrl as string
  }
}
