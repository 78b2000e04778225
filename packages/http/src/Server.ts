/**
 * The standalone server: the engine over the configured store, the HTTP API with its error middleware, OpenAPI
 * at `/openapi.json` and a reference page at `/docs`, on Node's HTTP server.
 */
import type { Store } from "@arbor/core"
import { Arbor, MemoryStore, Secrets, Settings, TokenIssuer, Uid } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import { HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import { join } from "node:path"
import { Api } from "./Api.js"
import * as Authentication from "./Authentication.js"
import * as Bootstrap from "./Bootstrap.js"
import * as DataDir from "./DataDir.js"
import * as Docs from "./Docs.js"
import * as ErrorMiddleware from "./ErrorMiddleware.js"
import * as Handlers from "./Handlers.js"
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
    Layer.provide(Layer.succeed(TokenIssuer.TokenSettings, { issuer: config.authUrl, audience: config.baseUrl }))
  )
  return Layer.mergeAll(Arbor.layer, tokens).pipe(
    Layer.provideMerge(store),
    Layer.provide(memory ? Secrets.layerEphemeral : DataDir.secretsLayer(config.dataDir)),
    Layer.provide(settings),
    Layer.provide(Layer.effectDiscard(DataDir.ensure(config.dataDir)))
  )
}

/** The HTTP application over an engine: API, middleware, OpenAPI document and reference page. */
export const http = (config: ServerConfig) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
    Layer.provide(Docs.layer),
    Layer.provide(ErrorMiddleware.layer(config.errorDomain)),
    Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(Handlers.layer), Layer.provide(Authentication.layer)))
  )

/** The whole server, bootstrapped, listening on the configured host and port. */
export const layer = (config: ServerConfig) =>
  http(config).pipe(
    Layer.provide(Layer.effectDiscard(Bootstrap.run(config))),
    Layer.provide(engine(config)),
    Layer.provide(NodeHttpServer.layer(createServer, { port: config.port, host: config.host }))
  )
