#!/usr/bin/env node
/**
 * The `arbor` executable: runs the command line, prints a failure's message (never a stack trace) on stderr, and
 * exits with its code (0 ok, 1 error, 2 usage, 3 not logged in, 4 permission denied, 5 not found). Help, a word
 * that names no command, and the flags every command takes are handled first (see Help).
 */
import { CliConfig, Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { arbor } from "./Cli.js"
import * as Failure from "./Failure.js"
import * as Help from "./Help.js"

const version = "0.1.0"

/** Flags every command takes, each with a value: accepted before the command's words too. */
const globalFlags = new Set(["--api", "--issuer"])

/** `args` with global flags given before the command's words moved after them, where @effect/cli reads them. */
const hoistGlobalFlags = (args: ReadonlyArray<string>): Array<string> => {
  const hoisted: Array<string> = []
  const rest = [...args]
  while (rest.length > 0 && rest[0]!.startsWith("--")) {
    const flag = rest[0]!.split("=")[0]!
    if (!globalFlags.has(flag)) break
    hoisted.push(...rest.splice(0, rest[0]!.includes("=") ? 1 : 2))
  }
  return [...rest, ...hoisted]
}

/**
 * What the command line asks before any command runs: help (exit 0), or a word that names no command (exit 2);
 * undefined when it is for @effect/cli to run.
 */
const beforeRunning = (args: ReadonlyArray<string>): number | undefined => {
  const { command, path, rest } = Help.find("arbor", arbor, args)
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(Help.render(path, command, Help.layoutOf(process.stdout)))
    return 0
  }
  const names = Help.subcommandNames(command)
  if (names === undefined) return undefined
  const word = rest[0]
  if (word === undefined) {
    process.stdout.write(Help.render(path, command, Help.layoutOf(process.stdout)))
    return 0
  }
  if (word.startsWith("-")) return undefined
  const suggestion = Help.closest(word, names)
  process.stderr.write(
    `arbor: '${word}' is not a command of '${path.join(" ")}'${
      suggestion === undefined ? "" : `; did you mean '${suggestion}'?`
    } (${path.join(" ")} --help lists them)\n`
  )
  return 2
}

const cli = Command.run(arbor, { name: "arbor", version })

const program = Effect.suspend(() => {
  const args = hoistGlobalFlags(process.argv.slice(2))
  const answered = beforeRunning(args)
  if (answered !== undefined) return Effect.sync(() => (process.exitCode = answered))
  return cli([...process.argv.slice(0, 2), ...args])
}).pipe(
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
  Effect.provide(
    Layer.mergeAll(
      NodeContext.layer,
      NodeHttpClient.layerUndici,
      CliConfig.layer({ showBuiltIns: false, showTypes: false })
    )
  )
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
