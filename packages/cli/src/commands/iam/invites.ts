/** `arbor iam invites`: codes that bind whoever signs in with them to a role in a group. */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import type { GroupInvite } from "@arbor/core/GroupInvite"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import { common, connect, given, output, parent, print, printRows, resolveGroup, resolveRole, time } from "../shared.js"
import * as Resource from "./resource.js"
import { bindingShape } from "./roleBindings.js"

const inviteShape: Output.Shape<GroupInvite> = {
  json: Wire.GroupInvite.v2,
  columns: [
    { heading: "UID", value: (i) => i.uid },
    { heading: "ROLE", value: (i) => i.role.name || i.roleUid },
    { heading: "EMAIL", value: (i) => i.email ?? "" },
    { heading: "EXPIRES", value: (i) => time(i.expirationTime) },
    { heading: "SINGLE USE", value: (i) => String(i.singleUse), wide: true }
  ]
}

const inviteResource = Resource.make({
  query: Resources.groupInvites.query,
  shape: inviteShape,
  list: (client, urlParams) => client.groupInvites.list({ urlParams }),
  items: (page) => page.groupInvites,
  get: (client, uid) => client.groupInvites.get({ path: { uid } }),
  delete: (client, uid) => client.groupInvites.delete({ path: { uid } }),
  ref: Resource.byUid("invite")
})

/** `arbor iam invites`. */
export const invites = Command.make("invites").pipe(
  Command.withDescription("Invites: codes that bind whoever signs in with them to a role in a group."),
  Help.withSubcommands([
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        role: Options.text("role").pipe(Options.withDescription("the role's uid or name")),
        email: Options.text("email").pipe(
          Options.withDescription("only this (verified) email may use it"),
          Options.optional
        ),
        ttl: Options.integer("ttl-days").pipe(
          Options.withDescription("days it stays valid (default 7, at most 30)"),
          Options.optional
        ),
        singleUse: Options.boolean("single-use").pipe(Options.withDescription("it works once"))
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const created = yield* client.groupInvites.create({
            path: { uid: yield* resolveGroup(client, flags.parent) },
            payload: {
              roleUid: yield* resolveRole(client, flags.role),
              singleUse: flags.singleUse,
              ...given("email", flags.email),
              ...Option.match(flags.ttl, { onNone: () => ({}), onSome: (days) => ({ ttl: `${days * 86400}s` }) })
            }
          })
          if (flags.output === "table") {
            yield* Effect.sync(() =>
              process.stderr.write("The code is shown this once; hand it to whoever you invite:\n")
            )
            yield* print(created.code ?? "")
          } else yield* printRows([created], inviteShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Create an invite; prints its code, which is never shown again. Example: arbor iam invites create --parent acme --role viewer --email ada@example.com"
      )
    ),
    Command.make(
      "redeem",
      {
        ...common,
        output,
        code: Args.text({ name: "code" }).pipe(Args.withDescription("the invite's code, as its creator handed it over"))
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const binding = yield* client.inviteCodes.redeem({ payload: { code: flags.code } })
          yield* printRows([binding], bindingShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Redeem an invite as yourself (signed in already): you hold its role in its group. Example: arbor iam invites redeem <code>"
      )
    ),
    Resource.list(inviteResource, "List invites (newest first). Example: arbor iam invites list --parent acme"),
    Resource.remove(inviteResource, "Delete an invite. Example: arbor iam invites delete <uid>")
  ])
)
