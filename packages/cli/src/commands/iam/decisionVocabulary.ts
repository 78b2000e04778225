/**
 * `arbor iam decision-vocabulary get|set <organization>`: the words of an application's AuthZEN requests in the
 * organization's terms, which its decision point (`/authzen/<organization uid>`) reads them in (docs/api.md §14).
 */
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { parse, stringify } from "yaml"
import { UsageError } from "../../Failure.js"
import * as Help from "../../Help.js"
import { common, connect, print, resolveGroup } from "../shared.js"

const organization = Args.text({ name: "organization" }).pipe(
  Args.withDescription("the organization: its name or uid")
)

/** `arbor iam decision-vocabulary`. */
export const decisionVocabulary = Command.make("decision-vocabulary").pipe(
  Command.withDescription(
    "An organization's decision vocabulary: its applications' subject types, action names and resource types."
  ),
  Help.withSubcommands([
    Command.make("get", { ...common, organization }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const uid = yield* resolveGroup(client, flags.organization)
        const { actions, resources, subjects } = yield* client.decisionVocabularies.get({ path: { uid } })
        yield* print(stringify({ subjects, actions, resources }).trimEnd())
      })).pipe(Command.withDescription(
        "Print an organization's decision vocabulary as YAML, as set takes it. " +
          "Example: arbor iam decision-vocabulary get acme > vocabulary.yaml"
      )),
    Command.make(
      "set",
      {
        ...common,
        organization,
        file: Options.file("file", { exists: "yes" }).pipe(
          Options.withAlias("f"),
          Options.withDescription("the vocabulary: YAML or JSON with subjects, actions and resources")
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const payload: unknown = yield* Effect.try({
            try: () => parse(readFileSync(flags.file, "utf8")),
            catch: (error) => new UsageError({ message: `${flags.file} is not YAML or JSON: ${String(error)}` })
          })
          if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
            return yield* new UsageError({ message: `${flags.file} must hold subjects:, actions: and resources:` })
          }
          const client = yield* connect(flags)
          const uid = yield* resolveGroup(client, flags.organization)
          const set = yield* client.decisionVocabularies.set({
            path: { uid },
            payload
          })
          yield* Effect.sync(() =>
            process.stderr.write(`Set the decision vocabulary of ${flags.organization} (version ${set.version})\n`)
          )
        })
    ).pipe(Command.withDescription(
      "Replace an organization's decision vocabulary with a file's. " +
        "Example: arbor iam decision-vocabulary set acme -f vocabulary.yaml"
    ))
  ])
)
