/**
 * `arbor iam identity-providers scim`: an identity provider's SCIM provisioning, its switch and its token (the
 * protos' SetScimEnabled, GenerateScimToken, RegenerateScimToken and RevokeScimToken).
 */
import { Wire } from "@arbor/api"
import type { IdentityProvider } from "@arbor/core/IdentityProvider"
import { Args, Command, Options } from "@effect/cli"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import { type Client, common, connect, output, print, printRows, time } from "../shared.js"

const providerArg = Args.text({ name: "identity-provider" }).pipe(Args.withDescription("the identity provider's uid"))

/** A provider as its SCIM status shows it (in JSON, the whole provider with its `scim`). */
const statusShape: Output.Shape<IdentityProvider> = {
  json: Wire.IdentityProvider.v2,
  columns: [
    { heading: "IDENTITY PROVIDER", value: (p) => p.uid },
    { heading: "ENABLED", value: (p) => String(p.scim?.enabled ?? false) },
    { heading: "TOKEN", value: (p) => p.scim?.credentialState ?? "" },
    {
      heading: "EXPIRES",
      value: (p) => p.scim?.tokenExpireTime === undefined ? "" : time(p.scim.tokenExpireTime)
    },
    { heading: "ENDPOINT", value: (p) => p.scim?.endpointUrl ?? "", wide: true }
  ]
}

/** The provider, with its SCIM status. */
const read = (client: Client, uid: string) => client.identityProviders.get({ path: { uid } })

/** The provider's SCIM etag, for the writes that must name it. */
const etagOf = (client: Client, uid: string) => Effect.map(read(client, uid), (provider) => provider.scim?.etag ?? "")

const expiry = {
  expires: Options.text("expires").pipe(
    Options.withDescription("when the token stops working, RFC 3339 (default: in a year; at most two years)"),
    Options.optional
  ),
  neverExpires: Options.boolean("never-expires").pipe(Options.withDescription("a token that never expires"))
}

const expiryOf = (flags: { readonly expires: Option.Option<string>; readonly neverExpires: boolean }) => ({
  ...(Option.isSome(flags.expires) ? { expireTime: flags.expires.value } : {}),
  ...(flags.neverExpires ? { neverExpires: true } : {})
})

/** Prints a token shown once: on its own line for a table (the rest on stderr), whole otherwise. */
const printToken = (
  issued: { readonly token: string; readonly endpointUrl: string; readonly expireTime?: DateTime.Utc | undefined },
  format: Output.Format
) =>
  format === "table"
    ? Effect.zipRight(
      Effect.sync(() =>
        process.stderr.write(
          `The token is shown this once; configure it with the endpoint ${issued.endpointUrl} in the identity ` +
            `provider's SCIM client${issued.expireTime === undefined ? "" : ` (expires ${time(issued.expireTime)})`}:\n`
        )
      ),
      print(issued.token)
    )
    : print(JSON.stringify({
      token: issued.token,
      endpointUrl: issued.endpointUrl,
      ...(issued.expireTime === undefined ? {} : { expireTime: DateTime.formatIso(issued.expireTime) })
    }))

const switchCommand = (enabled: boolean) =>
  Command.make(
    enabled ? "enable" : "disable",
    { ...common, output, uid: providerArg },
    (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const etag = yield* etagOf(client, flags.uid)
        yield* client.scimCredentials.setEnabled({ path: { uid: flags.uid }, payload: { enabled, etag } })
        yield* printRows([yield* read(client, flags.uid)], statusShape, flags.output)
      })
  ).pipe(Command.withDescription(
    enabled
      ? "Start SCIM provisioning; the organization needs two owners it does not provision. " +
        "Example: arbor iam identity-providers scim enable <uid>"
      : "Pause SCIM provisioning; users, bindings and the token stay. " +
        "Example: arbor iam identity-providers scim disable <uid>"
  ))

/** `arbor iam identity-providers scim`. */
export const scim = Command.make("scim").pipe(
  Command.withDescription("SCIM provisioning of an identity provider: its switch and its token."),
  Help.withSubcommands([
    Command.make("status", { ...common, output, uid: providerArg }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        yield* printRows([yield* read(client, flags.uid)], statusShape, flags.output)
      })).pipe(Command.withDescription(
        "Show whether provisioning is on and the token's state. Example: arbor iam identity-providers scim status <uid>"
      )),
    switchCommand(true),
    switchCommand(false),
    Command.make("token").pipe(
      Command.withDescription("The SCIM token: shown once, kept only as its digest."),
      Help.withSubcommands([
        Command.make("generate", { ...common, output, uid: providerArg, ...expiry }, (flags) =>
          Effect.gen(function*() {
            const client = yield* connect(flags)
            const issued = yield* client.scimCredentials.generate({
              path: { uid: flags.uid },
              payload: expiryOf(flags)
            })
            yield* printToken(issued, flags.output)
          })).pipe(Command.withDescription(
            "Generate the provider's first SCIM token. Example: arbor iam identity-providers scim token generate <uid>"
          )),
        Command.make(
          "regenerate",
          {
            ...common,
            output,
            uid: providerArg,
            ...expiry,
            overlap: Options.integer("overlap").pipe(
              Options.withDescription("seconds the previous token keeps working (default 3600, at most 86400)"),
              Options.optional
            )
          },
          (flags) =>
            Effect.gen(function*() {
              const client = yield* connect(flags)
              const etag = yield* etagOf(client, flags.uid)
              const issued = yield* client.scimCredentials.regenerate({
                path: { uid: flags.uid },
                payload: {
                  etag,
                  ...expiryOf(flags),
                  ...(Option.isSome(flags.overlap) ? { overlap: `${flags.overlap.value}s` } : {})
                }
              })
              yield* printToken(issued, flags.output)
            })
        ).pipe(Command.withDescription(
          "Replace the SCIM token; the previous one works for the overlap. " +
            "Example: arbor iam identity-providers scim token regenerate <uid> --overlap 600"
        )),
        Command.make("revoke", { ...common, output, uid: providerArg }, (flags) =>
          Effect.gen(function*() {
            const client = yield* connect(flags)
            yield* client.scimCredentials.revoke({ path: { uid: flags.uid }, payload: {} })
            yield* printRows([yield* read(client, flags.uid)], statusShape, flags.output)
          })).pipe(Command.withDescription(
            "Revoke the SCIM tokens at once. Example: arbor iam identity-providers scim token revoke <uid>"
          ))
      ])
    )
  ])
)
