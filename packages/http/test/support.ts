import { AccountAssociationCheck, Groups, Identities, Principal, Role, RoleBindings, TokenIssuer } from "@arbor/core"
import { HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import { mkdtempSync } from "node:fs"
import { createServer, get } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import * as Bootstrap from "../src/Bootstrap.js"
import * as Listener from "../src/Listener.js"
import * as Server from "../src/Server.js"
import type { ServerConfig } from "../src/ServerConfig.js"

/** A server configuration for tests: in memory, loopback issuers allowed. */
export const testConfig = (overrides: Partial<ServerConfig> = {}): ServerConfig => ({
  port: 0,
  host: "127.0.0.1",
  dataDir: mkdtempSync(join(tmpdir(), "arbor-http-")),
  store: "memory",
  databaseUrl: undefined,
  databasePool: 10,
  baseUrl: "http://localhost:8080",
  authUrl: "http://localhost:8080",
  orgName: "default",
  errorDomain: "iam.arbor.dev",
  bootstrapIssuer: undefined,
  bootstrapSubject: undefined,
  platformAdmins: [],
  audiences: [],
  keyRotation: Duration.days(30),
  eventsRetention: Duration.days(90),
  allowLoopbackIssuers: true,
  allowLoopbackSinks: true,
  maxConnections: 1000,
  scimRequestsPerMinute: 600,
  cloudEndpoints: AccountAssociationCheck.CloudEndpoints.defaultValue(),
  login: undefined,
  otlpEndpoint: undefined,
  metricsToken: undefined,
  clientAddressHeader: undefined,
  // One key for every test server, so that servers sharing a database open each other's sealed secrets.
  secretsKey: Redacted.make(new Uint8Array(32).fill(7)),
  retiredSecretsKeys: [],
  ...overrides
})

/** The default logger, for warnings and errors only: a test's output is not buried under request lines. */
export const quiet = Logger.replace(
  Logger.defaultLogger,
  Logger.filterLogLevel(Logger.defaultLogger, LogLevel.greaterThanEqual(LogLevel.Warning))
)

/**
 * A real server listening on 127.0.0.1 (a random port) behind the standalone server's listener, its engine, and an
 * HTTP client aimed at it.
 */
export const testServer = (config: ServerConfig = testConfig(), listener: Partial<Listener.Options> = {}) =>
  Server.http(config).pipe(
    Layer.provideMerge(Server.engine(config)),
    Layer.provide(quiet),
    Layer.provideMerge(
      HttpServer.layerTestClient.pipe(
        Layer.provide(NodeHttpClient.layerWithoutAgent),
        Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
        Layer.provideMerge(
          NodeHttpServer.layer(() => Listener.make({ ...config, ...listener }), { port: 0, host: "127.0.0.1" })
        )
      )
    )
  )

/**
 * A server as `pnpm start` runs one, on SQLite in a fresh directory: bootstrapped (the organization `default`, the
 * bootstrap token in `<directory>/.arbor`), on a random loopback port, stopped with the scope. Its directory and URL.
 */
export const startedLikePnpmStart = Effect.gen(function*() {
  const cwd = mkdtempSync(join(tmpdir(), "arbor-started-"))
  const config = testConfig({ store: "sqlite", dataDir: join(cwd, ".arbor") })
  const server = yield* Layer.build(
    Server.http(config).pipe(
      Layer.provide(Layer.effectDiscard(Bootstrap.run(config))),
      Layer.provideMerge(Server.engine(config)),
      Layer.provide(quiet),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    )
  )
  const address = (yield* Effect.provide(HttpServer.HttpServer, server)).address
  return { cwd, url: address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "" }
})

/** The stores a test server may run on. */
export const stores = ["memory", "postgres"] as const

/** A test server with the engine in memory, or on a new database of the tests' PostgreSQL server. */
export const testServerOn = (store: typeof stores[number]) =>
  store === "memory"
    ? testServer()
    : Layer.unwrapEffect(Effect.map(freshDatabase, (url) =>
      testServer(testConfig({ store: "postgres", databaseUrl: Redacted.make(url), databasePool: 4 }))))

/** A response, its body parsed when it is JSON. */
export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly body: any
}

/** Sends a request to the test server. */
export const call = (
  method: string,
  path: string,
  options: {
    readonly token?: string
    readonly body?: unknown
    readonly raw?: string
    readonly contentType?: string
    readonly headers?: Record<string, string>
  } = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method as "GET")(path)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.body)
    if (options.raw !== undefined) {
      request = HttpClientRequest.bodyText(request, options.raw, options.contentType ?? "application/json")
    }
    for (const [k, v] of Object.entries(options.headers ?? {})) request = HttpClientRequest.setHeader(request, k, v)
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, headers: response.headers, text, body } as Reply
  }).pipe(Effect.scoped, Effect.orDie)

/** An API token for an identity. */
export const tokenFor = (identityUid: string) =>
  Effect.flatMap(
    TokenIssuer.TokenIssuer,
    (issuer) =>
      Effect.map(issuer.mint(identityUid as never, { iss: "https://tests.invalid", sub: "tests" }), (m) => m.token)
  )

/** An organization with an identity holding `role` there (or at `at`), and that identity's token. */
export const member = (orgName: string, role = "owner", at?: (org: string) => string) =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const orgs = yield* groups.list(Principal.system, { inRoot: true, name: orgName })
    const org = orgs.items[0] ?? (yield* groups.createRoot(Principal.system, { name: orgName }))
    const identity = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
      name: `${role} ${Math.random().toString(36).slice(2, 8)}`,
      claimMatch: { issuer: "https://issuer.example.com", subject: `${orgName}-${role}` }
    })
    yield* (yield* RoleBindings.RoleBindings).create(Principal.system, at?.(org.uid) ?? org.uid, {
      identityUid: identity.uid,
      roleUid: Role.builtInByName(role)!.uid
    })
    return { org: org.uid, identity: identity.uid, token: yield* tokenFor(identity.uid) }
  }).pipe(Effect.orDie)

/** A REST call by `fetch` to `base` as `token`: its status and parsed JSON body (undefined when empty). */
export const fetchJson = async (base: string, method: string, path: string, token: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: text === "" ? undefined : JSON.parse(text)
  }
}

/** One Server-Sent Events message. */
interface Message {
  readonly id: string
  readonly event: string
  readonly data: any
}

/**
 * Opens a watch and reads messages until `count` have come (comments skipped); then leaves. Node's own client, whose
 * connection ends with the request (fetch may keep a spare connection open, which would hold the server's close).
 */
export const watch = (
  url: string,
  token: string,
  count: number,
  headers: Record<string, string> = {}
): Promise<{ status: number; contentType: string | undefined; messages: Array<Message> }> =>
  new Promise((resolve, reject) => {
    const messages: Array<Message> = []
    const request = get(url, { headers: { authorization: `Bearer ${token}`, ...headers } }, (response) => {
      const done = () => {
        clearTimeout(deadline)
        request.destroy()
        resolve({ status: response.statusCode!, contentType: response.headers["content-type"], messages })
      }
      const deadline = setTimeout(done, 10_000)
      if (response.statusCode !== 200) {
        response.resume().on("end", done)
        return
      }
      let buffer = ""
      response.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const fields: Record<string, string> = Object.fromEntries(
            buffer.slice(0, end).split("\n").filter((line) => !line.startsWith(":")).map((line) => {
              const colon = line.indexOf(": ")
              return [line.slice(0, colon), line.slice(colon + 2)]
            })
          )
          buffer = buffer.slice(end + 2)
          if (fields.id !== undefined) {
            messages.push({ id: fields.id, event: fields.event ?? "", data: JSON.parse(fields.data ?? "null") })
          }
        }
        if (messages.length >= count) done()
      })
    })
    request.on("error", (error) => {
      if (messages.length < count) reject(error)
    })
  })

/** Strings that break what reads them carelessly: empty, escapes, dots, stars, a uid too long, NUL, huge. */
export const junk = FastCheck.oneof(
  FastCheck.string({ maxLength: 40 }),
  FastCheck.constantFrom(
    "",
    "%",
    "%2F",
    "..",
    "*",
    "0".repeat(41),
    "A".repeat(40),
    "\u0000",
    "null",
    "[]",
    "{}",
    "-1",
    "1e309",
    "é",
    "💥",
    "a".repeat(5000)
  )
)
