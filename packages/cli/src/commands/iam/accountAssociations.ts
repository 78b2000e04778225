/** `arbor iam account-associations`: the cloud accounts a group trusts, one per group, named by its group. */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import type { AccountAssociation } from "@arbor/core/AccountAssociation"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import {
  common,
  connect,
  description,
  given,
  nameArg,
  output,
  parent,
  print,
  printRows,
  resolveGroup
} from "../shared.js"
import * as Resource from "./resource.js"

const associationShape: Output.Shape<AccountAssociation> = {
  json: Wire.AccountAssociation.v2,
  columns: [
    { heading: "NAME", value: (a) => a.name },
    { heading: "GROUP", value: (a) => a.uid },
    { heading: "AMAZON", value: (a) => a.amazon?.account ?? "" },
    { heading: "GOOGLE", value: (a) => a.google?.projectId ?? "" },
    { heading: "AZURE", value: (a) => a.azure?.tenantId ?? "" }
  ]
}

const associationResource = Resource.make({
  query: Resources.accountAssociations.query,
  shape: associationShape,
  list: (client, urlParams) => client.accountAssociations.list({ urlParams }),
  items: (page) => page.accountAssociations,
  get: (client, uid) => client.accountAssociations.get({ path: { uid } }),
  delete: (client, uid) => client.accountAssociations.delete({ path: { uid } }),
  ref: { name: "group", description: "the group's uid or path of names", resolve: resolveGroup }
})

const providerTypes = {
  amazon: "ACCOUNT_PROVIDER_TYPE_AMAZON",
  google: "ACCOUNT_PROVIDER_TYPE_GOOGLE",
  azure: "ACCOUNT_PROVIDER_TYPE_AZURE"
} as const

/** `arbor iam account-associations`. */
export const accountAssociations = Command.make("account-associations").pipe(
  Command.withDescription("Account associations: the cloud accounts a group trusts, one per group."),
  Help.withSubcommands([
    Resource.list(associationResource, "List account associations. Example: arbor iam account-associations list"),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        description,
        name: nameArg("account association"),
        amazon: Options.text("amazon-account").pipe(
          Options.withDescription("an AWS account id (12 digits)"),
          Options.optional
        ),
        googleProject: Options.text("google-project-id").pipe(
          Options.withDescription("a Google Cloud project id"),
          Options.optional
        ),
        googleNumber: Options.text("google-project-number").pipe(
          Options.withDescription("its project number"),
          Options.optional
        ),
        azureTenant: Options.text("azure-tenant-id").pipe(
          Options.withDescription("an Azure tenant id"),
          Options.optional
        ),
        azureClients: Options.text("azure-client-id").pipe(
          Options.repeated,
          Options.withDescription("an application's client id there, by name: canary=<uuid> (repeat)")
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const created = yield* client.accountAssociations.create({
            path: { uid: yield* resolveGroup(client, flags.parent) },
            payload: {
              name: flags.name,
              ...given("description", flags.description),
              ...Option.match(flags.amazon, { onNone: () => ({}), onSome: (account) => ({ amazon: { account } }) }),
              ...(Option.isSome(flags.googleProject) || Option.isSome(flags.googleNumber)
                ? {
                  google: {
                    projectId: Option.getOrElse(flags.googleProject, () => ""),
                    projectNumber: Option.getOrElse(flags.googleNumber, () => "")
                  }
                }
                : {}),
              ...Option.match(flags.azureTenant, {
                onNone: () => ({}),
                onSome: (tenantId) => ({
                  azure: {
                    tenantId,
                    // `name=<uuid>`; the server checks each id, and names a bad one.
                    clientIds: Object.fromEntries(flags.azureClients.map((pair) => {
                      const at = pair.indexOf("=")
                      return at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)]
                    }))
                  }
                })
              })
            }
          })
          yield* printRows([created], associationShape, flags.output)
        })
    ).pipe(Command.withDescription(
      "Associate cloud accounts with a group. Example: arbor iam account-associations create prod --parent acme --amazon-account 123456789012"
    )),
    Command.make(
      "check",
      {
        ...common,
        output,
        group: Args.text({ name: "group" }).pipe(Args.withDescription("the group's uid or path of names")),
        cloud: Options.choice("cloud", ["amazon", "google", "azure"]).pipe(
          Options.withDescription("the cloud whose account to check")
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const result = yield* client.accountAssociationChecks.check({
            path: { uid: yield* resolveGroup(client, flags.group) },
            payload: { providerType: providerTypes[flags.cloud] }
          })
          yield* flags.output === "json"
            ? print(JSON.stringify(Schema.encodeSync(Wire.AccountAssociationCheckResult)(result)))
            : print([result.status, result.reason, result.message].filter((part) => part !== "").join(": "))
        })
    ).pipe(Command.withDescription(
      "Check that a cloud accepts this server's canary token for the group's account: READY, or NOT_READY and why. " +
        "Example: arbor iam account-associations check acme --cloud amazon"
    )),
    Resource.remove(
      associationResource,
      "Remove a group's account association. Example: arbor iam account-associations delete acme"
    )
  ])
)
