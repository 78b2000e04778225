/** `arbor iam terms`: the legal documents a group accepts, and those it and the groups above it have accepted. */
import { Wire } from "@arbor/api"
import type { TermsAcceptance } from "@arbor/core/TermsAcceptance"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import { allPages, common, connect, limit, output, printRows, resolveGroup, time } from "../shared.js"

const acceptanceShape: Output.Shape<TermsAcceptance> = {
  json: Wire.TermsAcceptance,
  columns: [
    { heading: "DOCUMENT", value: (a) => a.docId },
    { heading: "ACCEPTED BY", value: (a) => a.acceptedBy },
    { heading: "GROUP", value: (a) => a.orgUid },
    { heading: "ACCEPTED", value: (a) => time(a.createTime) }
  ]
}

const group = Options.text("group").pipe(
  Options.withDescription("the group (a uid or a path of names, such as acme)")
)

/** `arbor iam terms`. */
export const terms = Command.make("terms").pipe(
  Command.withDescription("Terms: the legal documents each group has accepted."),
  Help.withSubcommands([
    Command.make(
      "accept",
      {
        ...common,
        output,
        group,
        documents: Args.text({ name: "document-id" }).pipe(
          Args.withDescription("the id of a document to accept (tos.v1); several may follow"),
          Args.atLeast(1)
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const uid = yield* resolveGroup(client, flags.group)
          yield* client.terms.accept({ path: { uid }, payload: { documentIds: flags.documents } })
          // What the group has accepted of those, as recorded (when, and by whom, if accepted before).
          const accepted = yield* allPages(
            (urlParams) => client.terms.list({ path: { uid }, urlParams }),
            (page) => page.termsAcceptances,
            {},
            Option.none()
          )
          yield* printRows(
            accepted.filter((a) => a.orgUid === uid && flags.documents.includes(a.docId)),
            acceptanceShape,
            flags.output
          )
        })
    ).pipe(Command.withDescription(
      "Accept legal documents for a group; one it has accepted stays as it was. Example: arbor iam terms accept tos.v1 --group acme"
    )),
    Command.make("list", { ...common, output, limit, group }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const uid = yield* resolveGroup(client, flags.group)
        const accepted = yield* allPages(
          (urlParams) => client.terms.list({ path: { uid }, urlParams }),
          (page) => page.termsAcceptances,
          {},
          flags.limit
        )
        yield* printRows(accepted, acceptanceShape, flags.output)
      })).pipe(Command.withDescription(
        "List the documents a group and the groups above it have accepted. Example: arbor iam terms list --group acme/platform"
      ))
  ])
)
