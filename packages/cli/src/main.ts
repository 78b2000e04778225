#!/usr/bin/env node
/**
 * The `arbor` executable: runs the command line, prints a failure's message (never a stack trace) on stderr, and
 * exits with its code (0 ok, 1 error, 2 usage, 3 not logged in, 4 permission denied, 5 not found).
 */
import { CliConfig, Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { arbor } from "./Cli.js"
import * as Failure from "./Failure.js"

/** Help shows the commands' own options and descriptions, not the library's built-in ones or its type notes. */
const helpConfig = CliConfig.layer({ showBuiltIns: false, showTypes: false })

const cli = Command.run(arbor, { name: "arbor", version: "0.1.0" })

const program = Effect.suspend(() => cli(process.argv)).pipe(
  Effect.catchAll((error) =>
    Effect.sync(() => {
      // @effect/cli has shown what was wrong with the command line already.
      if (ValidationError.isValidationError(error)) {
        process.exitCode = 2
        return
      }
      process.stderr.write(`arbor: ${Failure.describe(error)}\n`)
      process.exitCode = Failure.exitCode(error)
    })
  ),
  Effect.provide(Layer.mergeAll(NodeContext.layer, NodeHttpClient.layerUndici, helpConfig))
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
