/**
 * The standalone server: the engine over the configured store, the HTTP API with its error middleware, OpenAPI
 * at `/openapi.json` and a reference page at `/docs`, on Node's HTTP server.
 */
import { Api } from "@arbor/api/Api"
import { render } from "@arbor/api/ErrorBody"
import {
  AccountAssociationCheck,
  AccountAssociationChecks,
  Arbor,
  Authentication as EngineAuthentication,
  Errors,
  Events,
  Fairness,
  IdentityProviders,
  MemoryStore,
  RefreshTokens,
  Secrets,
  Settings,
  SignIn,
  SignIns,
  Store,
  Sts,
  TokenIssuer,
  Uid
} from "@arbor/core"
import { PostgresStore } from "@arbor/store-postgres"
import type { Migrations } from "@arbor/store-sql"
import { SqliteStore } from "@arbor/store-sqlite"
import {
  FileSystem,
  HttpApiBuilder,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpRouter,
  HttpServer
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type { IncomingMessage, Server as NodeServer, ServerResponse } from "node:http"
import { hostname } from "node:os"
import { join } from "node:path"
import * as Authentication from "./Authentication.js"
import * as Bootstrap from "./Bootstrap.js"
import * as Console from "./Console.js"
import * as DataDir from "./DataDir.js"
import * as Deliveries from "./Deliveries.js"
import * as Docs from "./Docs.js"
import * as EventStream from "./EventStream.js"
import * as Grpc from "./Grpc.js"
import * as Handlers from "./Handlers.js"
import * as Listener from "./Listener.js"
import * as Metrics from "./Metrics.js"
import * as Middleware from "./Middleware.js"
import * as KnownParameters from "./middleware/KnownParameters.js"
import * as RequestLimits from "./RequestLimits.js"
import * as ScimRoutes from "./ScimRoutes.js"
import * as Seed from "./Seed.js"
import type { ServerConfig } from "./ServerConfig.js"
import * as SignInRoutes from "./SignInRoutes.js"
import * as Tracing from "./Tracing.js"

/**
 * Where the configured store keeps what every server on it must share: on PostgreSQL the signing keys and the
 * page-token key live in the database itself; on SQLite in the data directory beside it; in memory nowhere.
 */
const storage = (config: ServerConfig): {
  readonly store: Layer.Layer<Store.Store, Migrations.SchemaTooNew | Migrations.OpenFailed>
  readonly signingKeys: Layer.Layer<TokenIssuer.SigningKeys, never, Store.Store>
  readonly secrets: Layer.Layer<Secrets.Secrets, never, Store.Store>
} => {
  switch (config.store) {
    case "memory":
      return {
        store: MemoryStore.layer,
        signingKeys: TokenIssuer.SigningKeys.layerMemory,
        secrets: Secrets.layerEphemeral
      }
    case "postgres":
      return {
        store: PostgresStore.layer({ url: config.databaseUrl!, maxConnections: config.databasePool }),
        signingKeys: TokenIssuer.SigningKeys.layerStore,
        secrets: Secrets.layerStore(
          Redacted.value(config.secretsKey!),
          config.retiredSecretsKeys.map(Redacted.value)
        )
      }
    case "sqlite":
      return {
        store: SqliteStore.layer({ filename: join(config.dataDir, DataDir.files.database) }),
        signingKeys: DataDir.signingKeysLayer(config.dataDir),
        secrets: DataDir.secretsLayer(config.dataDir, {
          current: config.secretsKey,
          retired: config.retiredSecretsKeys
        })
      }
  }
}

/**
 * `store`, its operations timed (`Metrics.timedStore`) and, when `ARBOR_DECISION_STALENESS` is set, its decisions
 * allowed to lag other servers' writes by at most that long (`Store.withBoundedStaleness`).
 */
const served = <E>(store: Layer.Layer<Store.Store, E>, staleness: Duration.Duration | undefined) =>
  Layer.effect(Store.Store, Effect.map(Store.Store, Metrics.timedStore)).pipe(
    Layer.provide(staleness === undefined ? store : Store.layerBoundedStaleness(staleness).pipe(Layer.provide(store)))
  )

/** The engine and the token issuer over the configured store. */
export const engine = (config: ServerConfig) => {
  const { secrets, signingKeys, store } = storage(config)
  const settings = Layer.succeed(Settings.Settings, {
    allowLoopbackHttpIssuers: config.allowLoopbackIssuers,
    allowLoopbackSinks: config.allowLoopbackSinks,
    platformAdmins: config.platformAdmins.filter(Uid.isUid),
    apiUrl: config.baseUrl
  })
  const tokens = TokenIssuer.TokenIssuer.Default.pipe(
    Layer.provide(signingKeys),
    Layer.provide(
      Layer.succeed(TokenIssuer.TokenSettings, {
        issuer: config.authUrl,
        audience: config.baseUrl,
        audiences: config.audiences
      })
    )
  )
  return Layer.mergeAll(
    SignIns.SignIns.Default,
    AccountAssociationChecks.AccountAssociationChecks.Default,
    EngineAuthentication.Authentication.Default
  ).pipe(
    Layer.provideMerge(Layer.merge(Sts.Sts.Default, RefreshTokens.RefreshTokens.Default)),
    Layer.provide(Layer.succeed(AccountAssociationCheck.CloudEndpoints, config.cloudEndpoints)),
    Layer.provide(Layer.succeed(SignIn.LoginSettings, {
      provider: config.login,
      ownCallbacks: [Console.addressOf(config.baseUrl)]
    })),
    Layer.provideMerge(Arbor.layer),
    Layer.provideMerge(tokens),
    Layer.provide(secrets),
    Layer.provideMerge(served(store, config.decisionStaleness)),
    Layer.provide(settings),
    Layer.provide(Layer.effectDiscard(DataDir.ensure(config.dataDir, { database: config.store === "sqlite" })))
  )
}

/**
 * The HTTP application over an engine: API, middleware, OpenAPI document and reference page, ready for
 * `HttpApiBuilder.serve` (or `HttpApiBuilder.toWebHandler`, to mount it in another server).
 */
export const app = (config: ServerConfig) =>
  Layer.mergeAll(
    // Paths are matched exactly as sent (`RequestLimits` folds their duplicate slashes), and queries never are. A
    // parameter (a uid, its slashes folded in) is as long as the request target may be: the router's own limit (100
    // characters) would answer a deep uid with "no route".
    HttpRouter.setRouterConfig({
      caseSensitive: true,
      ignoreDuplicateSlashes: false,
      maxParamLength: RequestLimits.maxUrlBytes
    }),
    HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
    Docs.layer,
    Console.layer({ signInProvider: config.login !== undefined }),
    SignInRoutes.layer({ ...config, consoleUrl: Console.addressOf(config.baseUrl) }),
    ScimRoutes.layer({ baseUrl: config.baseUrl, requestsPerMinute: config.scimRequestsPerMinute }),
    Metrics.layer(config.metricsToken, config.clientAddressHeader),
    Middleware.layer(config.errorDomain).pipe(Layer.provide(Grpc.layer(config.errorDomain))),
    // Once for every request: the framework's own limit on bodies it reads, behind `RequestLimits`.
    Layer.succeed(HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(RequestLimits.maxBodyBytes)))
  ).pipe(
    Layer.provideMerge(
      HttpApiBuilder.api(Api).pipe(
        Layer.provide(Handlers.layer),
        Layer.provide(Layer.mergeAll(Authentication.layer, Authentication.upstreamLayer, KnownParameters.layer))
      )
    )
  )

/**
 * The HTTP application served on the ambient HTTP server, with `tracing` (default: OTLP when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set). Without it the tracer is off, for requests and the engine's operations
 * alike: a span per request costs a fifth of the server's throughput.
 */
export const http = (config: ServerConfig, tracing?: Layer.Layer<never>) => {
  const traced = tracing !== undefined || config.otlpEndpoint !== undefined
  return HttpApiBuilder.serve().pipe(
    Layer.provide(app(config)),
    // Webhook deliveries run wherever the API is served: every server takes its share.
    Layer.merge(Deliveries.layer({
      source: config.baseUrl,
      allowLoopback: config.allowLoopbackSinks,
      // No two running servers share a host name and an address; a restarted one takes its own leases back at once.
      ...(config.port === 0 ? {} : { holder: `${hostname()} ${config.host}:${config.port}` })
    })),
    HttpMiddleware.withTracerDisabledWhen(() => !traced),
    Layer.provide(traced ? tracing ?? Tracing.layerOtlp(config.otlpEndpoint) : Layer.setTracerEnabled(false)),
    // Shutdown ends the watch streams before it waits for open requests (`drain`).
    Layer.provideMerge(EventStream.layer(EventStream.limitsFor(config.maxConnections), config.errorDomain)),
    // No busy request keeps the others from being read for more than a few milliseconds.
    Layer.provide(Fairness.layer)
  )
}

/** How long shutdown waits for in-flight requests before closing their connections. */
export const drainMillis = 10_000

/**
 * Ends the watch streams, stops accepting connections and waits until every open request has been answered (at most
 * `drainMillis`), so that shutdown never cuts a request off; runs before anything else is released.
 */
const drain = (server: NodeServer) =>
  Layer.scopedDiscard(Effect.flatMap(EventStream.Watches, (watches) =>
    Effect.addFinalizer(() =>
      Effect.zipRight(
        watches.end,
        Effect.async<void>((resume) => {
          if (!server.listening) return resume(Effect.void)
          const idle = setInterval(() => server.closeIdleConnections(), 50)
          const deadline = setTimeout(() => server.closeAllConnections(), drainMillis)
          server.close(() => {
            clearInterval(idle)
            clearTimeout(deadline)
            resume(Effect.void)
          })
          server.closeIdleConnections()
        })
      )
    )))

/** The answer to requests that arrive while the server is still starting: 503, google.rpc UNAVAILABLE. */
const starting = (domain: string) => {
  const { body, headers, status } = render(
    new Errors.Unavailable({ description: "the server is starting", reason: "STARTING" }),
    domain
  )
  const text = JSON.stringify(body)
  return (_: IncomingMessage, response: ServerResponse) => {
    response.writeHead(status, { ...headers, "content-type": "application/json", "retry-after": "1" })
    response.end(text)
  }
}

/** How often the server looks after its signing keys (`keyMaintenance`): a minute. */
export class KeyMaintenanceInterval extends Context.Reference<KeyMaintenanceInterval>()(
  "@arbor/http/Server/KeyMaintenanceInterval",
  { defaultValue: (): Duration.Duration => Duration.minutes(1) }
) {}

/**
 * Keeps the signing keys current: every `KeyMaintenanceInterval` takes up a rotation made by the admin command and
 * rotates a key older than the configured age; a round that fails (the store out of reach) is logged, and the next
 * one runs.
 */
const keyMaintenance = (config: ServerConfig) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const tokens = yield* TokenIssuer.TokenIssuer
    const interval = yield* KeyMaintenanceInterval
    yield* tokens.rotateIfOlderThan(config.keyRotation).pipe(
      Effect.tap((rotated) => rotated ? Effect.logInfo("signing key rotated") : Effect.void),
      // A store out of reach a while skips a round, and the next one tries again.
      Effect.catchAll((error) => Effect.logWarning("keeping the signing keys current failed", error)),
      Effect.repeat(Schedule.spaced(interval)),
      Effect.forkScoped
    )
  }))

/**
 * Keeps the change log within its retention: every hour (and at start) removes the entries older than it, counting
 * them in `arbor_change_log_pruned_total`. Every server does; what one removed, the others find gone.
 */
const logRetention = (config: ServerConfig) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const events = yield* Events.Events
    yield* Effect.gen(function*() {
      const removed = yield* events.prune(Date.now() - Duration.toMillis(config.eventsRetention))
      yield* Metrics.recordPruned(removed)
      if (removed > 0) yield* Effect.logInfo(`removed ${removed} change-log entries older than the retention`)
    }).pipe(
      Effect.catchAll((error) => Effect.logWarning("pruning the change log failed", error)),
      Effect.repeat(Schedule.spaced("1 hour")),
      Effect.forkScoped
    )
  }))

/**
 * The whole server, bootstrapped, listening on the configured host and port. The port opens first, answering 503
 * until the API is attached, so that a start that cannot listen (a port in use) fails before it opens the store or
 * bootstraps anything; shutdown drains requests first.
 */
export const layer = (config: ServerConfig) => {
  const server = Listener.make({ maxConnections: config.maxConnections, errorDomain: config.errorDomain })
  const answerStarting = starting(config.errorDomain)
  server.on("request", answerStarting)
  const attached = Layer.effectDiscard(Effect.gen(function*() {
    server.off("request", answerStarting)
    const address = (yield* HttpServer.HttpServer).address
    const listening = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : address.path
    yield* Effect.logInfo(
      `listening on ${listening}: the console at ${config.baseUrl}/console/, the API reference at ${config.baseUrl}/docs`
    ).pipe(
      Effect.annotateLogs({ address: listening, baseUrl: config.baseUrl })
    )
  }))
  return Layer.mergeAll(drain(server), attached, keyMaintenance(config), logRetention(config)).pipe(
    Layer.provide(http(config)),
    Layer.provide(Layer.effectDiscard(Effect.zipRight(
      Effect.zipRight(
        Effect.zipRight(Bootstrap.run(config), Seed.run(config)),
        Effect.flatMap(IdentityProviders.IdentityProviders, (providers) => providers.sealStoredSecrets)
      ),
      DataDir.writeServerAddresses(config.dataDir, {
        baseUrl: config.baseUrl,
        authUrl: config.authUrl,
        audiences: config.audiences
      })
    ))),
    Layer.provide(engine(config)),
    Layer.provide(NodeHttpServer.layer(() => server, { port: config.port, host: config.host }))
  )
}
