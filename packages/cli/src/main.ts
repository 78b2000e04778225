#!/usr/bin/env node
/**
 * The `arbor` executable: runs the command line, prints a failure's message (never a stack trace) on stderr, and
 * exits with its code (0 ok, 1 error, 2 usage, 3 not logged in, 4 permission denied, 5 not found). Help, a word
 * that names no command, and the flags every command takes are handled first (see Help).
 */
import { CliConfig, Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { arbor } from "./Cli.js"
import * as Failure from "./Failure.js"
import * as Help from "./Help.js"

const version = "0.1.0"

const cli = Command.run(arbor, { name: "arbor", version })

/** Where a person reads how to use the command they typed. */
const helpOf = (path: ReadonlyArray<string>) => `(${path.join(" ")} --help)`

/** What was wrong with a command line, as @effect/cli words it, in a sentence of ours. */
const usage = (error: ValidationError.ValidationError, path: ReadonlyArray<string>) => {
  const said = "error" in error ? Help.plain(error.error).trim() : ""
  const what = said
    .replace(/^Expected to find option: '(.+)'$/s, "missing $1")
    .replace(/^Missing argument (<.+>)$/s, "missing $1")
    .replace(/^Received unknown argument: '(.+)'$/s, "'$1' is not an option or argument of this command")
    .replace(/^Expected one of the following cases: (.+)$/s, (_, cases: string) => {
      const choices = cases.replace(/\s+/g, " ").trim().split(", ")
      const flag = Help.choiceFlag(arbor, "arbor", path, choices)
      return `${flag ?? "a value"} must be one of ${choices.join(", ")}`
    })
    .replace(/ is not a integer/, " is not an integer")
    .replace(/\s+/g, " ")
  return `arbor: ${what === "" ? "the command line is not understood" : what} ${helpOf(path)}\n`
}

/**
 * Commands whose exit code 2 says "there are changes" (`arbor diff`, as terraform plan -detailed-exitcode): any
 * failure of theirs, a command line not understood included, exits 1, so that a CI job never reads an error as a
 * change to apply.
 */
const changesExitTwo: ReadonlySet<string> = new Set(["arbor diff"])

const program = Effect.suspend(() => {
  const prepared = Help.prepare({
    program: "arbor",
    root: arbor,
    args: process.argv.slice(2),
    // Flags every command takes: accepted before the command's words too.
    globalFlags: new Set(["--api", "--issuer"])
  })
  if ("exitCode" in prepared) {
    const misused = prepared.exitCode === 2 && changesExitTwo.has(prepared.path?.join(" ") ?? "")
    return Effect.sync(() => (process.exitCode = misused ? 1 : prepared.exitCode))
  }
  return cli([...process.argv.slice(0, 2), ...prepared.args]).pipe(
    // @effect/cli would print what was wrong with the command line in its words; it is said once, below.
    (run) =>
      Effect.flatMap(Effect.console, (console) => Effect.withConsole(run, { ...console, error: () => Effect.void })),
    Effect.catchAll((error) =>
      Effect.sync(() => {
        const detailed = changesExitTwo.has(prepared.path.join(" "))
        if (ValidationError.isValidationError(error)) {
          process.stderr.write(usage(error, prepared.path))
          process.exitCode = detailed ? 1 : 2
          return
        }
        // A command's own usage errors point at its help as @effect/cli's do.
        const help = error instanceof Failure.UsageError ? ` ${helpOf(prepared.path)}` : ""
        process.stderr.write(`arbor: ${Failure.describe(error)}${help}\n`)
        const code = Failure.exitCode(error)
        process.exitCode = detailed && code === 2 ? 1 : code
      })
    )
  )
}).pipe(
  Effect.provide(
    Layer.mergeAll(
      NodeContext.layer,
      NodeHttpClient.layer,
      CliConfig.layer({ showBuiltIns: false, showTypes: false })
    )
  )
)

NodeRuntime.runMain(program, { disablePrettyLogger: true })
