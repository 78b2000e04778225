/**
 * What the sign-in tests run against: a real OpenID provider (`oidc-provider`, with its development login and
 * consent pages) on loopback, the server on a port known before it starts (providers need its callback address),
 * a loopback listener standing in for the command-line client's callback, and a browser made of `fetch` with a
 * cookie jar that follows redirects and submits the provider's forms.
 */
import { NodeHttpServer } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import Provider from "oidc-provider"
import * as Listener from "../src/Listener.js"
import * as Server from "../src/Server.js"
import type { ServerConfig } from "../src/ServerConfig.js"
import { quiet, testConfig } from "./support.js"

/** A free port on 127.0.0.1. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/**
 * A person the provider knows: any login works, and this is what it says of them. Their groups (the `groups` claim,
 * for the `groups` scope) are the words of their login before the last: `eng-ops-ann` is in `eng` and `ops`.
 */
export const account = (login: string) => ({
  sub: `sub-${login}`,
  email: `${login}@example.com`,
  email_verified: !login.startsWith("unverified"),
  name: login,
  groups: login.split("-").slice(0, -1)
})

/**
 * An OpenID provider on loopback with one confidential client whose redirect URI is `redirectUri`. Its ID tokens
 * carry the email and name (and the groups, when the `groups` scope is asked for), as Google's do, unless
 * `claimsInIdToken` is false: then only its userinfo endpoint has them.
 */
export const startProvider = async (redirectUri: string, options: { readonly claimsInIdToken?: boolean } = {}) => {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const client = { clientId: "arbor", clientSecret: `secret-${Math.random().toString(36).slice(2)}` }
  const provider = new Provider(issuer, {
    clients: [{
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code"],
      response_types: ["code"]
    }],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    conformIdTokenClaims: options.claimsInIdToken === false,
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ ...account(id.replace(/^sub-/, "")), sub: id }) }),
    cookies: { keys: ["sign-in tests"] },
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600 }
  })
  const server = provider.listen(port, "127.0.0.1")
  await new Promise<void>((resolve) => server.once("listening", () => resolve()))
  return {
    issuer,
    ...client,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** A loopback listener standing in for the client's callback: it records every request's URL. */
export const startCallback = async () => {
  const seen: Array<URL> = []
  const server = createServer((request: IncomingMessage, response) => {
    seen.push(new URL(request.url ?? "/", `http://127.0.0.1:${(server.address() as AddressInfo).port}`))
    response.writeHead(200, { "content-type": "text/plain" }).end("You can close this window.")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/callback`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The server, in process, on `port`, with its engine's services for setting up data. */
export const startServer = async (port: number, overrides: Partial<ServerConfig>) => {
  const config = testConfig({
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    authUrl: `http://127.0.0.1:${port}`,
    ...overrides
  })
  const layer = Server.http(config).pipe(
    Layer.provideMerge(Server.engine(config)),
    Layer.provide(quiet),
    Layer.provide(NodeHttpServer.layer(() => Listener.make(config), { port, host: "127.0.0.1" }))
  )
  const runtime = ManagedRuntime.make(layer)
  await runtime.runPromise(Effect.void)
  return { url: config.baseUrl, config, runtime, close: () => runtime.dispose() }
}

/** The server's own provider setting for `provider`. */
export const loginWith = (provider: { issuer: string; clientId: string; clientSecret: string }) => ({
  issuer: provider.issuer,
  clientId: provider.clientId,
  clientSecret: Redacted.make(provider.clientSecret),
  scopes: []
})

/** One response as the browser saw it. */
export interface Visit {
  readonly url: string
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

const attributes = (tag: string) =>
  Object.fromEntries([...tag.matchAll(/([a-zA-Z_:-]+)="([^"]*)"/g)].map((m) => [m[1]!, decodeHtml(m[2]!)]))

const decodeHtml = (text: string) =>
  text.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(
    /&amp;/g,
    "&"
  )

/** The first form of a page: where it posts and its fields with their values. */
export const formOf = (visit: Visit) => {
  const form = /<form([^>]*)>([\s\S]*?)<\/form>/i.exec(visit.text)
  if (form === null) return undefined
  const attrs = attributes(form[1]!)
  const fields: Record<string, string> = {}
  for (const input of form[2]!.matchAll(/<input([^>]*)>/gi)) {
    const a = attributes(input[1]!)
    if (a.name !== undefined) fields[a.name] = a.value ?? ""
  }
  return {
    action: new URL(attrs.action ?? visit.url, visit.url).href,
    method: (attrs.method ?? "get").toLowerCase(),
    fields,
    /** The values of its buttons, in the page's order (the first is what Enter submits). */
    buttons: [...form[2]!.matchAll(/<button([^>]*)>/gi)].flatMap((b) => attributes(b[1]!).value ?? [])
  }
}

/** A browser without a screen: a cookie jar per host, redirects followed by hand. */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>()

  /** Cookies it holds for `host`. */
  cookies(host: string): ReadonlyMap<string, string> {
    return this.jar.get(host) ?? new Map()
  }

  /** Loads one URL (GET, or POST of a form), keeping the cookies it sets; follows nothing. */
  async load(url: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<Visit> {
    const host = new URL(url).hostname
    const cookie = [...this.cookies(host)].map(([k, v]) => `${k}=${v}`).join("; ")
    const response = await fetch(url, {
      method: form === undefined ? "GET" : "POST",
      redirect: "manual",
      headers: {
        ...(cookie === "" ? {} : { cookie }),
        ...(form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
        ...headers
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() })
    })
    for (const set of response.headers.getSetCookie()) {
      const [pair = "", ...attrs] = set.split(";").map((s) => s.trim())
      const eq = pair.indexOf("=")
      const cookies = this.jar.get(host) ?? new Map<string, string>()
      this.jar.set(host, cookies)
      const expired = attrs.some((a) => /^max-age=0$/i.test(a) || /^expires=thu, 01 jan 1970/i.test(a))
      if (expired) cookies.delete(pair.slice(0, eq))
      else cookies.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    return { url, status: response.status, headers: response.headers, text: await response.text() }
  }

  /**
   * Goes to `url` and on: follows redirects, submits the provider's login (as `login`) and consent forms, and stops
   * at the first page that is not the provider's, or just before a URL `stopBefore` accepts.
   */
  async visit(
    url: string,
    options: { readonly login: string; readonly provider: string; readonly stopBefore?: (url: string) => boolean }
  ): Promise<Visit> {
    let next: { url: string; form?: Record<string, string> } = { url }
    for (let step = 0; step < 30; step++) {
      if (options.stopBefore?.(next.url) === true) return { url: next.url, status: 0, headers: new Headers(), text: "" }
      const visit = await this.load(next.url, next.form)
      const location = visit.headers.get("location")
      if (visit.status >= 300 && visit.status < 400 && location !== null) {
        next = { url: new URL(location, visit.url).href }
        continue
      }
      const form = new URL(visit.url).origin === options.provider ? formOf(visit) : undefined
      if (form === undefined || form.method !== "post") return visit
      next = { url: form.action, form: { ...form.fields, login: `sub-${options.login}`, password: "any" } }
    }
    throw new Error(`too many steps from ${url}`)
  }
}

/** POSTs a form to `url`. */
export const postForm = (url: string, fields: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString()
  })

/**
 * A person confirms a device's code at its verification address and is sent on towards the provider: the address
 * of the provider's sign-in, as the confirmation's link gives it. `via` rewrites the server's addresses (another
 * server behind the same load balancer).
 */
export const confirmDevice = async (browser: Browser, address: string, via: (url: string) => string = (u) => u) => {
  const confirm = formOf(await browser.load(via(address)))!
  const next = await browser.load(via(confirm.action), { ...confirm.fields, action: "approve" })
  return decodeHtml(/<a class="button" href="([^"]+)"/.exec(next.text)![1]!)
}
