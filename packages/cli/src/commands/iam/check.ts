/** `arbor iam check`: may an identity do this in a group? The server's own decision (AuthZEN's evaluation). */
import * as Names from "@arbor/api/Names"
import type * as AccessEvaluation from "@arbor/core/AccessEvaluation"
import * as Capability from "@arbor/core/Capability"
import { Args, Command, Options } from "@effect/cli"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Failure from "../../Failure.js"
import { common, connect, print, resolveGroup, resolveIdentity } from "../shared.js"

/** `arbor iam check <identity> <capability> <group>`: exit 0 and `allowed`, or exit 1 and why not. */
export const check = Command.make(
  "check",
  {
    ...common,
    identity: Args.text({ name: "identity" }).pipe(
      Args.withDescription("the identity: its uid, or its group's path and its name (acme/platform/deployer)")
    ),
    capability: Args.text({ name: "capability" }).pipe(
      Args.withDescription("a capability, in either spelling (groups.list, CAP_IAM_GROUPS_LIST)")
    ),
    group: Args.text({ name: "group" }).pipe(Args.withDescription("the group's uid or path of names")),
    explain: Options.boolean("explain").pipe(
      Options.withDescription("name the bindings that grant it: role and group by name, the binding's uid")
    )
  },
  (flags) =>
    Effect.gen(function*() {
      // Named as the person typed it, before the server would name `action.name`.
      if (!Capability.isCapabilityName(flags.capability)) {
        return yield* new Failure.UsageError({
          message:
            `<capability>: '${flags.capability}' is not a capability (such as repo.create or CAP_IAM_GROUPS_LIST)`
        })
      }
      const client = yield* connect(flags)
      const identity = yield* resolveIdentity(client, flags.identity)
      const group = yield* resolveGroup(client, flags.group)
      const answer = yield* client.decisions.evaluate({
        payload: {
          subject: { type: "identity", id: identity },
          action: { name: flags.capability },
          resource: { type: "group", id: group },
          ...(flags.explain ? { context: { explain: true } } : {})
        }
      })
      const names = yield* Names.reader(client)
      /** A grant as a person reads it: role and group by name, what made it, when it ends, its condition. */
      const described = (grant: AccessEvaluation.Grant) =>
        Effect.map(
          Effect.all([names.role(grant.role), names.group(grant.group)]),
          ([role, at]) => {
            const condition = grant.condition
            return `  ${role} at ${at} (${
              grant.binding === undefined ? `group mapping ${grant.mapping}` : `binding ${grant.binding}`
            }${grant.expireTime === undefined ? "" : `, until ${DateTime.formatIso(grant.expireTime)}`}${
              condition === undefined
                ? ""
                : `, if ${condition.title || condition.expression}: ${
                  condition.held ? "held" : condition.error === undefined ? "false" : `undecided (${condition.error})`
                }`
            })`
          }
        )
      if (!answer.decision) {
        const unmet = yield* Effect.forEach(answer.unmetConditions ?? [], described)
        return yield* new Failure.CommandFailed({
          message: [`denied: ${flags.identity} does not hold ${flags.capability} in ${flags.group}`, ...unmet]
            .join("\n")
        })
      }
      const lines = yield* Effect.forEach(
        answer.grantedBy ?? [],
        (grant) => "description" in grant ? Effect.succeed(`  ${grant.description}`) : described(grant)
      )
      yield* print(["allowed", ...lines].join("\n"))
    })
).pipe(Command.withDescription(
  "Whether an identity holds a capability in a group, as the server decides it: exit 0 and allowed, or exit 1. " +
    "Asking about another identity needs role_bindings.list there. Example: arbor iam check acme/ci repo.create acme"
))
