/** `arbor iam check`: may an identity do this in a group? The server's own decision (AuthZEN's evaluation). */
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Failure from "../../Failure.js"
import { common, connect, print, resolveGroup } from "../shared.js"

/** `arbor iam check <identity> <capability> <group>`: exit 0 and `allowed`, or exit 1 and why not. */
export const check = Command.make(
  "check",
  {
    ...common,
    identity: Args.text({ name: "identity" }).pipe(Args.withDescription("the identity's uid")),
    capability: Args.text({ name: "capability" }).pipe(
      Args.withDescription("a capability, in either spelling (groups.list, CAP_IAM_GROUPS_LIST)")
    ),
    group: Args.text({ name: "group" }).pipe(Args.withDescription("the group's uid or path of names")),
    explain: Options.boolean("explain").pipe(Options.withDescription("name the bindings that grant it"))
  },
  (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      const group = yield* resolveGroup(client, flags.group)
      const answer = yield* client.decisions.evaluate({
        payload: {
          subject: { type: "identity", id: flags.identity },
          action: { name: flags.capability },
          resource: { type: "group", id: group },
          ...(flags.explain ? { context: { explain: true } } : {})
        }
      })
      if (!answer.decision) {
        return yield* new Failure.CommandFailed({
          message: `denied: ${flags.identity} does not hold ${flags.capability} in ${flags.group}`
        })
      }
      yield* print(
        [
          "allowed",
          ...(answer.grantedBy ?? []).map((g) =>
            "description" in g
              ? `  ${g.description}`
              : `  by ${
                g.binding === undefined ? `mapping ${g.mapping}` : `binding ${g.binding}`
              }: role ${g.role} at ${g.group}`
          )
        ].join("\n")
      )
    })
).pipe(Command.withDescription(
  "Whether an identity holds a capability in a group, as the server decides it: exit 0 and allowed, or exit 1. " +
    "Asking about another identity needs role_bindings.list there. Example: arbor iam check <uid> repo.create acme"
))
