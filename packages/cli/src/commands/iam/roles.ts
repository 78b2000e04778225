/** `arbor iam roles`: named sets of capabilities, named by uid or by name. */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import * as Capability from "@arbor/core/Capability"
import type { Role } from "@arbor/core/Role"
import * as Uid from "@arbor/core/Uid"
import { Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import { UsageError } from "../../Failure.js"
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
  resolveGroup,
  resolveRole
} from "../shared.js"
import * as Resource from "./resource.js"

const roleShape: Output.Shape<Role> = {
  json: Wire.Role.v2,
  columns: [
    { heading: "NAME", value: (r) => r.name },
    { heading: "UID", value: (r) => r.uid },
    { heading: "DESCRIPTION", value: (r) => r.description },
    { heading: "CAPABILITIES", value: (r) => r.capabilities.join(" "), wide: true }
  ]
}

const roleResource = Resource.make({
  query: Resources.roles.query,
  shape: roleShape,
  list: (client, urlParams) => client.roles.list({ urlParams }),
  items: (page) => page.roles,
  order: "name",
  placed: (r) => Uid.parentOrNull(r.uid),
  get: (client, uid) => client.roles.get({ path: { uid } }),
  delete: (client, uid) => client.roles.delete({ path: { uid } }),
  ref: { name: "role", description: "the role's uid or name", resolve: resolveRole }
})

/** `arbor iam roles`. */
export const roles = Command.make("roles").pipe(
  Command.withDescription("Roles: named sets of capabilities."),
  Help.withSubcommands([
    Resource.list(roleResource, "List roles (built-in ones too). Example: arbor iam roles list"),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        description,
        name: nameArg("role"),
        capabilities: Options.text("capability").pipe(
          Options.withAlias("c"),
          Options.repeated,
          Options.withDescription("a capability it grants (repeat; see arbor iam roles capabilities)")
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const unknown = flags.capabilities.filter((c) => !Capability.isCapabilityName(c))
          if (unknown.length > 0) return yield* new UsageError({ message: `not capabilities: ${unknown.join(", ")}` })
          if (flags.capabilities.length === 0) {
            return yield* new UsageError({ message: "give at least one --capability" })
          }
          const client = yield* connect(flags)
          const created = yield* client.roles.create({
            path: { uid: yield* resolveGroup(client, flags.parent) },
            payload: {
              name: flags.name,
              ...given("description", flags.description),
              capabilities: flags.capabilities
            }
          })
          yield* printRows([created], roleShape, flags.output === "table" ? "wide" : flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Create a custom role. Example: arbor iam roles create puller --parent acme -c repo.list -c tag.list"
      )
    ),
    Resource.describe(roleResource, "Show one role and its capabilities. Example: arbor iam roles describe viewer"),
    Command.make("capabilities", {}, () => print(Capability.all.join("\n"))).pipe(
      Command.withDescription("List every capability a role may grant. Example: arbor iam roles capabilities")
    ),
    Resource.remove(
      roleResource,
      "Delete a custom role that nothing is bound to. Example: arbor iam roles delete <uid>"
    )
  ])
)
