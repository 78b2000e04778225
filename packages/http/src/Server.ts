/**
 * The standalone server: the engine over the configured store, the HTTP API with its error middleware, OpenAPI
 * at `/openapi.json` and a reference page at `/docs`, on Node's HTTP server.
 */
import { Api } from "@arbor/api/Api"
import type { Store } from "@arbor/core"
import { Arbor, MemoryStore, Secrets, Settings, Sts, TokenIssuer, Uid } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import { HttpApiBuilder, HttpMiddleware, HttpRouter } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type { IncomingMessage, Server as NodeServer, ServerResponse } from "node:http"
import { join } from "node:path"
import * as Authentication from "./Authentication.js"
import * as Bootstrap from "./Bootstrap.js"
import * as DataDir from "./DataDir.js"
import * as Docs from "./Docs.js"
import * as ErrorMiddleware from "./ErrorMiddleware.js"
import * as Handlers from "./Handlers.js"
import * as Listener from "./Listener.js"
import type { ServerConfig } from "./ServerConfig.js"

/** The engine and the token issuer over the configured store, with the data directory's keys. */
export const engine = (config: ServerConfig) => {
  const memory = config.store === "memory"
  const store: Layer.Layer<Store.Store, SqliteStore.SchemaTooNew | SqliteStore.OpenFailed> = memory
    ? MemoryStore.layer
    : SqliteStore.layer({ filename: join(config.dataDir, DataDir.files.database) })
  const settings = Layer.succeed(Settings.Settings, {
    allowLoopbackHttpIssuers: config.allowLoopbackIssuers,
    platformAdmins: config.platformAdmins.filter(Uid.isUid)
  })
  const tokens = TokenIssuer.TokenIssuer.Default.pipe(
    Layer.provide(memory ? TokenIssuer.SigningKeys.layerMemory : DataDir.signingKeysLayer(config.dataDir)),
    Layer.provide(
      Layer.succeed(TokenIssuer.TokenSettings, {
        issuer: config.authUrl,
        audience: config.baseUrl,
        audiences: config.audiences
      })
    )
  )
  return Sts.Sts.Default.pipe(
    Layer.provideMerge(Arbor.layer),
    Layer.provideMerge(tokens),
    Layer.provideMerge(store),
    Layer.provide(memory ? Secrets.layerEphemeral : DataDir.secretsLayer(config.dataDir)),
    Layer.provide(settings),
    Layer.provide(Layer.effectDiscard(DataDir.ensure(config.dataDir)))
  )
}

/**
 * The HTTP application over an engine: API, middleware, OpenAPI document and reference page, ready for
 * `HttpApiBuilder.serve` (or `HttpApiBuilder.toWebHandler`, to mount it in another server).
 */
export const app = (config: ServerConfig) =>
  Layer.mergeAll(
    // Paths are matched exactly as sent (`RequestLimits` folds their duplicate slashes), and queries never are.
    HttpRouter.setRouterConfig({ caseSensitive: true, ignoreDuplicateSlashes: false }),
    HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
    Docs.layer,
    ErrorMiddleware.layer(config.errorDomain)
  ).pipe(
    Layer.provideMerge(
      HttpApiBuilder.api(Api).pipe(
        Layer.provide(Handlers.layer),
        Layer.provide(Layer.merge(Authentication.layer, Authentication.upstreamLayer))
      )
    )
  )

/**
 * The HTTP application served on the ambient HTTP server. Request spans are off: the standalone server exports no
 * traces, and a span per request costs a fifth of its throughput.
 */
export const http = (config: ServerConfig) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(app(config)),
    HttpMiddleware.withTracerDisabledWhen(() => true)
  )

/** How long shutdown waits for in-flight requests before closing their connections. */
export const drainMillis = 10_000

/**
 * Stops accepting connections and waits until every open request has been answered (at most `drainMillis`), so
 * that shutdown never cuts a request off; runs before anything else is released.
 */
const drain = (server: NodeServer) =>
  Layer.scopedDiscard(Effect.addFinalizer(() =>
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
  ))

/** The answer to requests that arrive while the server is still starting: 503, google.rpc UNAVAILABLE. */
const starting = (_: IncomingMessage, response: ServerResponse) => {
  response.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
  response.end(JSON.stringify({
    code: 14,
    message: "Unavailable: the server is starting",
    details: [{
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "STARTING",
      domain: "arbor",
      metadata: {}
    }]
  }))
}

/**
 * Keeps the signing keys current: every minute takes up a rotation made by the admin command and rotates a key
 * older than the configured age.
 */
const keyMaintenance = (config: ServerConfig) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const tokens = yield* TokenIssuer.TokenIssuer
    yield* tokens.rotateIfOlderThan(config.keyRotation).pipe(
      Effect.tap((rotated) => rotated ? Effect.logInfo("signing key rotated") : Effect.void),
      Effect.repeat(Schedule.spaced("1 minute")),
      Effect.forkScoped
    )
  }))

/**
 * The whole server, bootstrapped, listening on the configured host and port. The engine is ready before the port
 * opens; requests that arrive before the API is attached get 503; shutdown drains requests first.
 */
export const layer = (config: ServerConfig) => {
  const server = Listener.make({ maxConnections: config.maxConnections, errorDomain: config.errorDomain })
  server.on("request", starting)
  const attached = Layer.effectDiscard(Effect.sync(() => server.off("request", starting)))
  return Layer.mergeAll(drain(server), attached, keyMaintenance(config)).pipe(
    Layer.provide(http(config)),
    Layer.provide(NodeHttpServer.layer(() => server, { port: config.port, host: config.host })),
    Layer.provide(Layer.effectDiscard(Effect.zipRight(
      Bootstrap.run(config),
      DataDir.writeServerAddresses(config.dataDir, {
        baseUrl: config.baseUrl,
        authUrl: config.authUrl,
        audiences: config.audiences
      })
    ))),
    Layer.provide(engine(config))
  )
}
