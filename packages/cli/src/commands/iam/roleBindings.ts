/** `arbor iam role-bindings`: an identity holding a role in a group and everything below it. */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import { type RoleBinding, stateAt } from "@arbor/core/RoleBinding"
import { Command, Options } from "@effect/cli"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { UsageError } from "../../Failure.js"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import { common, connect, output, parent, printRows, resolveGroup, resolveIdentity, resolveRole } from "../shared.js"
import * as Resource from "./resource.js"

/** When a binding ends, as a person reads it: `until <time>`, `ended <time>`, `from <time>`; empty for always. */
const windowOf = (b: RoleBinding): string => {
  const state = stateAt(b, Date.now())
  return state === "ENDED"
    ? `ended ${DateTime.formatIso(b.expireTime!)}`
    : state === "PENDING"
    ? `from ${DateTime.formatIso(b.startTime!)}`
    : b.expireTime === null
    ? ""
    : `until ${DateTime.formatIso(b.expireTime)}`
}

/**
 * A time as a person writes it for `flag`: a duration from now (`90m`, `8h`, `7d`) or an RFC 3339 time, as the time
 * it names.
 */
export const timeOf = (flag: string) => (text: string, now: number): Effect.Effect<string, UsageError> => {
  const units: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }
  const relative = /^(\d{1,6})([smhd])$/.exec(text.trim())
  if (relative !== null) return Effect.succeed(new Date(now + Number(relative[1]) * units[relative[2]!]!).toISOString())
  const absolute = Date.parse(text)
  return Number.isNaN(absolute) || !/^\d{4}-\d{2}-\d{2}T/.test(text)
    ? Effect.fail(
      new UsageError({ message: `--${flag} ${text}: give a duration (90m, 8h, 7d) or a time (2026-12-01T18:00:00Z)` })
    )
    : Effect.succeed(new Date(absolute).toISOString())
}

/** A binding as `arbor` prints it (also what redeeming an invite made). */
export const bindingShape: Output.Shape<RoleBinding> = {
  json: Wire.RoleBinding.v2,
  columns: [
    { heading: "IDENTITY", value: (b) => b.identity.name || b.identity.uid },
    { heading: "ROLE", value: (b) => b.role.name || b.role.uid },
    { heading: "GROUP", value: (b) => b.group.name || b.group.uid },
    { heading: "EXPIRES", value: windowOf, whenSet: true },
    { heading: "CONDITION", value: (b) => b.condition?.title || b.condition?.expression || "", whenSet: true },
    { heading: "UID", value: (b) => b.uid },
    { heading: "IDENTITY UID", value: (b) => b.identity.uid, wide: true }
  ]
}

const bindingResource = Resource.make({
  query: Resources.roleBindings.query,
  shape: bindingShape,
  list: (client, urlParams) => client.roleBindings.list({ urlParams }),
  items: (page) => page.roleBindings,
  get: (client, uid) => client.roleBindings.get({ path: { uid } }),
  delete: (client, uid) => client.roleBindings.delete({ path: { uid } }),
  ref: Resource.byUid("binding")
})

/** `arbor iam role-bindings`. */
export const roleBindings = Command.make("role-bindings").pipe(
  Command.withDescription("Role bindings: an identity holding a role in a group and everything below it."),
  Help.withSubcommands([
    Resource.list(
      bindingResource,
      "List role bindings: which roles an identity holds, who holds a role. Example: arbor iam role-bindings list --identity acme/ci --role owner"
    ),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        identity: Options.text("identity").pipe(
          Options.withPseudoName("identity"),
          Options.withDescription(
            "the identity: its uid, or its group's path and its name (acme/ci); repeat it to bind several at once " +
              "(up to 25, all or none)"
          ),
          Options.atLeast(1)
        ),
        role: Options.text("role").pipe(Options.withDescription("the role's uid or name (viewer, editor, …)")),
        expires: Options.text("expires").pipe(
          Options.withDescription("end the binding: after a duration (90m, 8h, 7d) or at a time (RFC 3339)"),
          Options.optional
        ),
        starts: Options.text("starts").pipe(
          Options.withDescription("start the binding later: after a duration or at a time (RFC 3339)"),
          Options.optional
        ),
        condition: Options.text("condition").pipe(
          Options.withDescription(
            "grant only where this CEL expression holds (resource.path.startsWith(\"acme/dev\")); docs/api.md §15"
          ),
          Options.optional
        ),
        conditionTitle: Options.text("condition-title").pipe(
          Options.withDescription("the condition's title, for people"),
          Options.optional
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const group = yield* resolveGroup(client, flags.parent)
          const roleUid = yield* resolveRole(client, flags.role)
          const identities = yield* Effect.forEach(flags.identity, (ref) => resolveIdentity(client, ref))
          const [identity, ...more] = identities
          if (Option.isNone(flags.condition) && Option.isSome(flags.conditionTitle)) {
            return yield* new UsageError({ message: "--condition-title names a condition: give --condition too" })
          }
          const now = Date.now()
          const expiry = {
            ...(Option.isNone(flags.starts) ? {} : { startTime: yield* timeOf("starts")(flags.starts.value, now) }),
            ...(Option.isNone(flags.expires) ? {} : { expireTime: yield* timeOf("expires")(flags.expires.value, now) }),
            ...(Option.isNone(flags.condition) ? {} : {
              condition: {
                expression: flags.condition.value,
                ...(Option.isNone(flags.conditionTitle) ? {} : { title: flags.conditionTitle.value })
              }
            })
          }
          const created = more.length === 0
            ? [
              yield* client.roleBindings.create({
                path: { uid: group },
                payload: { identityUid: identity, roleUid, ...expiry }
              })
            ]
            : (yield* client.roleBindingBatches.create({
              payload: {
                parent: group,
                roleUid,
                requests: identities.map((identityUid) => ({ roleBinding: { identityUid, ...expiry } }))
              }
            })).roleBindings
          yield* printRows(created, bindingShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Bind identities to a role in a group, for good or until --expires. Example: arbor iam role-bindings create --parent acme/platform --identity acme/ci --role viewer --expires 8h"
      )
    ),
    Resource.remove(
      bindingResource,
      "Delete a role binding (your own owner binding only once you confirm, or with --yes). Example: arbor iam role-bindings delete <uid>",
      (binding, caller) =>
        binding.identity.uid === caller && binding.role.name === "owner"
          ? `This is your own owner binding at ${
            binding.group.name || binding.group.uid
          }: you may not be able to get it back. Delete it?`
          : undefined
    )
  ])
)
