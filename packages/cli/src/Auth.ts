/**
 * Signing in and holding tokens (docs/api.md §8, §10): a workload's token exchange, a person's headless (device)
 * or browser (loopback callback) sign-in, and the API token handed out on demand, refreshed before it expires with
 * the refresh token (people) or exchanged again from the token file (workloads).
 */
import { Api, OAuth } from "@arbor/api"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { CommandFailed, NotLoggedIn, UsageError } from "./Failure.js"
import type { Endpoints } from "./Where.js"
import * as Where from "./Where.js"

/** How long before its expiry a token is replaced rather than used. */
export const renewBefore = Duration.minutes(1)

/** How long a browser sign-in waits for the person. */
export const browserTimeout = Duration.minutes(5)

/** What a JWT says, unverified: for display and expiry only. */
export const claimsOf = (token: string): Record<string, unknown> => {
  try {
    return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"))
  } catch {
    return {}
  }
}

const expiresWithin = (token: string, margin: Duration.Duration) =>
  Effect.map(DateTime.now, (now) => {
    const exp = claimsOf(token).exp
    return typeof exp !== "number" || exp * 1000 - now.epochMillis <= Duration.toMillis(margin)
  })

/** How a workload signed in: what to exchange again when its API token expires. */
const Workload = Schema.parseJson(Schema.Struct({ identity: Schema.String, identityToken: Schema.String }))

/** The workload's own token as the cache keeps it: the file's contents when it names a file, else the token. */
const readIdentityToken = (pathOrToken: string) =>
  Effect.try({
    try: () => existsSync(pathOrToken) ? readFileSync(pathOrToken, "utf8").trim() : pathOrToken.trim(),
    catch: () => new CommandFailed({ message: `cannot read the identity token ${pathOrToken}` })
  })

/** All of standard input, trimmed. */
const readStdin = Effect.async<string, CommandFailed>((resume) => {
  const chunks: Array<Buffer> = []
  process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk))
  process.stdin.once("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8").trim())))
  process.stdin.once("error", (e) => resume(Effect.fail(new CommandFailed({ message: `cannot read stdin: ${e}` }))))
})

/**
 * Where `--identity-token` says the workload's token is: a file (kept, so that the token is read again when it is
 * renewed) or `-`, standard input (the token itself is kept, in the private cache). Never the token itself: a
 * command line is visible to every user of the machine.
 */
const identityTokenSource = (source: string) =>
  Effect.gen(function*() {
    if (source === "-") {
      const token = yield* readStdin
      if (token === "") return yield* new UsageError({ message: "--identity-token -: standard input held no token" })
      return { token, kept: token }
    }
    if (!existsSync(source)) {
      return yield* new UsageError({
        message: "--identity-token names a file holding the token, or - to read it from standard input " +
          "(a token on the command line would be visible to every user of this machine)"
      })
    }
    return { token: yield* readIdentityToken(source), kept: source }
  })

/** The token service's typed client, with a bearer token when given. */
const tokenService = (where: Endpoints, bearer?: string) =>
  HttpApiClient.make(Api.Api, {
    baseUrl: where.issuer,
    ...(bearer === undefined ? {} : { transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(bearer)) })
  })

/** What narrows an API token (docs/api.md §8): capabilities, and groups (with those below them). */
export interface Narrowing {
  readonly capabilities: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
}

const narrowingParams = (narrowing?: Narrowing) =>
  narrowing === undefined ? {} : { cap: narrowing.capabilities, scope: narrowing.scopes }

/** Exchanges a workload's token for an API token of `identity`, narrowed when `narrowing` says so. */
const exchange = (where: Endpoints, identity: string, identityToken: string, narrowing?: Narrowing) =>
  Effect.flatMap(
    tokenService(where, identityToken),
    (client) => client.sts.exchange({ urlParams: { aud: where.api, identity, ...narrowingParams(narrowing) } })
  )

/** Posts an OAuth form to the token service and reads its JSON answer. */
const postForm = (where: Endpoints, path: string, form: Record<string, string | undefined>) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(
      HttpClientRequest.post(`${where.issuer}${path}`).pipe(
        HttpClientRequest.bodyUrlParams(
          Object.fromEntries(Object.entries(form).filter(([, v]) => v !== undefined)) as Record<string, string>
        )
      )
    )).pipe(
      Effect.flatMap((response) => Effect.map(response.json, (body) => ({ status: response.status, body }))),
      Effect.scoped
    )

/** The sign-in options a person may give. */
export interface PersonLogin {
  readonly idp?: string | undefined
  readonly invite?: string | undefined
}

const save = (where: Endpoints, token: string, refreshToken?: string) =>
  Effect.sync(() => {
    const cache = Where.cache(where.api)
    cache.write("token", token)
    if (refreshToken !== undefined) cache.write("refresh-token", refreshToken)
  })

/** Where the output for a person goes: stderr, so that stdout keeps only results. */
const tell = (text: string) => Effect.sync(() => process.stderr.write(`${text}\n`))

/** Exchanges a workload's token now, and keeps how to exchange again (`kept`: its file, or the token itself). */
const exchangeAndKeep = (where: Endpoints, identity: string, token: string, kept: string) =>
  Effect.gen(function*() {
    const exchanged = yield* exchange(where, identity, token)
    Where.cache(where.api).write("workload", JSON.stringify({ identity, identityToken: kept }))
    yield* save(where, exchanged.token)
    return exchanged.token
  })

/** Signs a workload in with its token from `source`: a file, or `-` for standard input. */
export const loginWorkload = (where: Endpoints, identity: string, source: string) =>
  Effect.flatMap(identityTokenSource(source), ({ kept, token }) => exchangeAndKeep(where, identity, token, kept))

/** What the server says of a sign-in's parameters, in the flags a person gave them as (`idp_id` is `--idp`). */
const inFlags = (message: string | undefined) => message?.replace(/\bidp_id\b/g, "--idp")

/** Signs a person in without a browser on this machine (RFC 8628): prints where to go, then polls. */
export const loginHeadless = (where: Endpoints, options: PersonLogin) =>
  Effect.gen(function*() {
    const started = yield* postForm(where, OAuth.paths.deviceAuthorization, {
      audience: where.api,
      create_refresh_token: "true",
      idp_id: options.idp,
      invite: options.invite
    })
    if (started.status !== 200) {
      return yield* new CommandFailed({
        message: inFlags((started.body as { error_description?: string }).error_description) ??
          "the sign-in could not start"
      })
    }
    const device = yield* Schema.decodeUnknown(OAuth.DeviceAuthorization)(started.body)
    yield* tell(`To sign in, open ${device.verification_uri} and enter the code ${device.user_code}`)
    yield* tell(`(or open ${device.verification_uri_complete})`)
    let interval = device.interval
    for (;;) {
      yield* Effect.sleep(Duration.seconds(interval))
      const polled = yield* postForm(where, OAuth.paths.token, {
        grant_type: OAuth.deviceCodeGrant,
        device_code: device.device_code
      })
      if (polled.status === 200) {
        const tokens = yield* Schema.decodeUnknown(OAuth.TokenResponse)(polled.body)
        yield* save(where, tokens.access_token, tokens.refresh_token)
        return tokens.access_token
      }
      const refused = yield* Schema.decodeUnknown(OAuth.ErrorResponse)(polled.body)
      if (refused.error === "slow_down") interval += 5
      else if (refused.error !== "authorization_pending") {
        return yield* new CommandFailed({ message: `sign-in failed: ${refused.error_description ?? refused.error}` })
      }
    }
  })

/** Opens `url` in the system browser; false when there is none to open. */
const openBrowser = (url: string) =>
  Effect.async<boolean>((resume) => {
    const command = process.env.BROWSER || (process.platform === "darwin" ? "open" : "xdg-open")
    execFile(command, [url], (error) => resume(Effect.succeed(error === null)))
  })

/** Signs a person in with a browser: a loopback listener receives the tokens the server redirects back with. */
export const loginBrowser = (where: Endpoints, options: PersonLogin) =>
  Effect.gen(function*() {
    const server = createServer()
    yield* Effect.async<void>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    })
    const port = (server.address() as AddressInfo).port
    // Any process on this machine can reach the listener: only the request carrying this sign-in's state is its end.
    const state = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")
    // Answered from the moment the server listens, before the browser opens: a request that came first would hang.
    const received = yield* Deferred.make<URL>()
    server.on("request", (request, response) => {
      const url = new URL(request.url ?? "/", `http://127.0.0.1:${port}`)
      if (url.pathname !== "/callback") return response.writeHead(404).end()
      if (url.searchParams.get("state") !== state) {
        return response.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end(
          "This is not the sign-in this command started."
        )
      }
      const failed = url.searchParams.get("error")
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(
        failed === null ? "Signed in. You can close this window." : `Sign-in failed: ${failed}`
      )
      Deferred.unsafeDone(received, Exit.succeed(url))
    })
    const address = new URL(`${where.issuer}${OAuth.paths.authorization}`)
    for (
      const [key, value] of Object.entries({
        exit: "redirect",
        redirect: `http://127.0.0.1:${port}/callback?state=${state}`,
        audience: where.api,
        create_refresh_token: "true",
        idp_id: options.idp,
        invite: options.invite
      })
    ) if (value !== undefined) address.searchParams.set(key, value)
    if (!(yield* openBrowser(address.href))) yield* tell(`Open this address in a browser to sign in:\n${address.href}`)
    else yield* tell(`Your browser has been opened to sign in. If it has not, open:\n${address.href}`)
    const callback = yield* Deferred.await(received).pipe(
      Effect.timeoutFail({
        duration: browserTimeout,
        onTimeout: () => new CommandFailed({ message: "nobody signed in within 5 minutes" })
      }),
      Effect.ensuring(Effect.sync(() => server.close()))
    )
    const token = callback.searchParams.get("token")
    if (token === null) {
      return yield* new CommandFailed({
        message: `sign-in failed: ${inFlags(callback.searchParams.get("error") ?? undefined) ?? "no token"}`
      })
    }
    yield* save(where, token, callback.searchParams.get("refresh_token") ?? undefined)
    return token
  })

/**
 * A valid API token: `ARBOR_TOKEN` when set (an API token from elsewhere, such as the bootstrap token), else the
 * cached one while it lasts, else one refreshed (a person) or exchanged again from the token file (a workload);
 * NotLoggedIn when there is none of these.
 */
export const token = (where: Endpoints) =>
  Effect.gen(function*() {
    const given = process.env.ARBOR_TOKEN
    if (given !== undefined && given.trim() !== "") return given.trim()
    const cache = Where.cache(where.api)
    const cached = cache.read("token")
    if (cached !== undefined && !(yield* expiresWithin(cached, renewBefore))) return cached
    const refresh = cache.read("refresh-token")
    if (refresh !== undefined) {
      const client = yield* tokenService(where, refresh)
      const refreshed = yield* client.sts.exchangeRefreshToken({ urlParams: { aud: where.api } }).pipe(
        Effect.catchTag("Unauthenticated", () =>
          new NotLoggedIn({ message: "your sign-in has expired; run arbor auth login" }))
      )
      yield* save(where, refreshed.token.token, refreshed.refreshToken.token)
      return refreshed.token.token
    }
    const workload = cache.read("workload")
    if (workload !== undefined) {
      const { identity, identityToken } = yield* Schema.decodeUnknown(Workload)(workload)
      return yield* exchangeAndKeep(where, identity, yield* readIdentityToken(identityToken), identityToken)
    }
    return yield* new NotLoggedIn({ message: `not logged in to ${where.api}; run arbor auth login` })
  })

/**
 * A new API token holding only `narrowing`'s capabilities in its groups (and below), never more than the signed-in
 * identity holds: exchanged from the refresh token (a person; the refresh token is replaced as on every refresh) or
 * the workload's token. It is not cached: the cached token keeps the identity's whole power for other commands.
 */
export const narrowedToken = (where: Endpoints, narrowing: Narrowing) =>
  Effect.gen(function*() {
    const cache = Where.cache(where.api)
    const refresh = cache.read("refresh-token")
    if (refresh !== undefined) {
      const client = yield* tokenService(where, refresh)
      const refreshed = yield* client.sts.exchangeRefreshToken({
        urlParams: { aud: where.api, ...narrowingParams(narrowing) }
      }).pipe(
        Effect.catchTag("Unauthenticated", () =>
          new NotLoggedIn({ message: "your sign-in has expired; run arbor auth login" }))
      )
      cache.write("refresh-token", refreshed.refreshToken.token)
      return refreshed.token.token
    }
    const workload = cache.read("workload")
    if (workload !== undefined) {
      const { identity, identityToken } = yield* Schema.decodeUnknown(Workload)(workload)
      const exchanged = yield* exchange(where, identity, yield* readIdentityToken(identityToken), narrowing)
      return exchanged.token
    }
    return yield* new NotLoggedIn({
      message: `narrowing needs a sign-in to ${where.api} (a token from ARBOR_TOKEN cannot be narrowed); ` +
        "run arbor auth login"
    })
  })

/** Signs out: revokes the refresh token (if any) and forgets every token of this API. */
export const logout = (where: Endpoints) =>
  Effect.gen(function*() {
    const cache = Where.cache(where.api)
    const refresh = cache.read("refresh-token")
    const revoked = refresh === undefined
      ? false
      : yield* postForm(where, OAuth.paths.revocation, { token: refresh }).pipe(
        Effect.as(true),
        Effect.orElseSucceed(() => false)
      )
    const loggedIn = existsSync(cache.dir)
    yield* Effect.sync(() => rmSync(cache.dir, { recursive: true, force: true }))
    yield* tell(
      !loggedIn
        ? `You were not logged in to ${where.api}.`
        : refresh === undefined
        ? `Logged out of ${where.api}: its tokens are forgotten.`
        : revoked
        ? `Logged out of ${where.api}: its tokens are forgotten and the refresh token is revoked.`
        : `Logged out of ${where.api}: its tokens are forgotten; the server could not be reached to revoke the ` +
          "refresh token, which expires by itself."
    )
  })
