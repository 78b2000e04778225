/**
 * `pnpm start`: the standalone server. Configuration from the environment (see ServerConfig), JSON logs, one line
 * per request; SIGTERM and SIGINT stop it after in-flight requests finish.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logs from "./Logs.js"
import * as Server from "./Server.js"
import * as ServerConfig from "./ServerConfig.js"

const program = Effect.gen(function*() {
  const config = yield* ServerConfig.config
  yield* Effect.logInfo("starting").pipe(
    Effect.annotateLogs({
      address: `http://${config.host}:${config.port}`,
      store: config.store,
      dataDir: config.dataDir
    })
  )
  return yield* Layer.launch(Server.layer(config))
})

NodeRuntime.runMain(program.pipe(Effect.provide(Logs.layer)), { disablePrettyLogger: true })
