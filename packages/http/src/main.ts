/**
 * `pnpm start`: the standalone server. Configuration from the environment (see ServerConfig), JSON logs, one line
 * per request; SIGTERM and SIGINT stop it after in-flight requests finish. A start that fails says why in one line
 * on stderr (see Startup).
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logs from "./Logs.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"
import * as Startup from "./Startup.js"

/** Where the server is asked to listen, read alone, so that even a configuration error can name it. */
const listening = Config.all({ host: ServerConfig.host, port: ServerConfig.port }).pipe(
  Effect.orElseSucceed(() => ({ host: "127.0.0.1", port: 8080 }))
)

const program = Effect.gen(function*() {
  const config = yield* ServerConfig.config
  yield* Effect.logInfo("starting").pipe(
    Effect.annotateLogs({
      address: `http://${config.host}:${config.port}`,
      store: config.store,
      dataDir: config.dataDir
    })
  )
  return yield* Layer.launch(Server.layer(config)).pipe(Effect.onInterrupt(() => Effect.logInfo("stopped")))
}).pipe(
  Effect.tapErrorCause((cause) => Effect.flatMap(listening, (at) => Startup.report(cause, at)))
)

NodeRuntime.runMain(program.pipe(Effect.provide(Logs.layer)), {
  disablePrettyLogger: true,
  disableErrorReporting: true
})
