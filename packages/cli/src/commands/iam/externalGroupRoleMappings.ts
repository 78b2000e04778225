/**
 * `arbor iam external-group-role-mappings`: an identity provider's groups given roles at each sign-in through it,
 * for that session only. Never changed: delete one and create another.
 */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import type { ExternalGroupRoleMapping } from "@arbor/core/ExternalGroupRoleMapping"
import type { MappingListOptions } from "@arbor/core/ExternalGroupRoleMappings"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Help from "../../Help.js"
import type * as Output from "../../Output.js"
import { common, connect, given, output, printRows, resolveGroup, resolveRole, time } from "../shared.js"
import * as Resource from "./resource.js"

const mappingShape: Output.Shape<ExternalGroupRoleMapping> = {
  json: Wire.ExternalGroupRoleMapping,
  columns: [
    { heading: "EXTERNAL GROUP", value: (m) => m.externalGroupId },
    { heading: "ROLE", value: (m) => m.roleUid },
    { heading: "SCOPE", value: (m) => m.scope },
    { heading: "UID", value: (m) => m.uid },
    { heading: "PROVIDER", value: (m) => m.identityProviderUid, wide: true },
    { heading: "CREATED", value: (m) => time(m.createTime), wide: true }
  ]
}

const mappingResource = Resource.make({
  query: Resources.externalGroupRoleMappings.query,
  shape: mappingShape,
  list: (client, urlParams: MappingListOptions) => client.externalGroupRoleMappings.list({ urlParams }),
  items: (page) => page.externalGroupRoleMappings,
  get: (client, uid) => client.externalGroupRoleMappings.get({ path: { uid } }),
  delete: (client, uid) => client.externalGroupRoleMappings.delete({ path: { uid } }),
  ref: Resource.byUid("mapping")
})

const provider = Options.text("provider").pipe(Options.withDescription("the identity provider's uid"))

/** `arbor iam external-group-role-mappings`. */
export const externalGroupRoleMappings = Command.make("external-group-role-mappings").pipe(
  Command.withDescription(
    "External group role mappings: an identity provider's groups given a role at each sign-in, for that session."
  ),
  Help.withSubcommands([
    Resource.list(
      mappingResource,
      "List group mappings, of one provider when given. Example: arbor iam external-group-role-mappings list --provider <uid>",
      { flags: { identity_provider_uid: provider.pipe(Options.optional, Options.map(Option.getOrUndefined)) } }
    ),
    Command.make(
      "create",
      {
        ...common,
        output,
        provider,
        group: Options.text("external-group").pipe(
          Options.withDescription("a value of the provider's groups claim")
        ),
        role: Options.text("role").pipe(Options.withDescription("the role it gives (uid or name)")),
        scope: Options.text("scope").pipe(
          Options.withDescription("where the role applies (a uid or path of names; default: the provider's group)"),
          Options.optional
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const scope = Option.isSome(flags.scope)
            ? Option.some(yield* resolveGroup(client, flags.scope.value))
            : flags.scope
          const created = yield* client.externalGroupRoleMappings.create({
            path: { uid: flags.provider },
            payload: {
              externalGroupId: flags.group,
              roleUid: yield* resolveRole(client, flags.role),
              ...given("scope", scope)
            }
          })
          yield* printRows([created], mappingShape, flags.output)
        })
    ).pipe(Command.withDescription(
      "Give the members of a provider's group a role at each sign-in. Example: arbor iam external-group-role-mappings create --provider <uid> --external-group engineers --role editor"
    )),
    Resource.describe(
      mappingResource,
      "Show one mapping. Example: arbor iam external-group-role-mappings describe <uid>"
    ),
    Resource.remove(mappingResource, "Delete a mapping. Example: arbor iam external-group-role-mappings delete <uid>"),
    Command.make(
      "batch-delete",
      {
        ...common,
        output,
        provider,
        uids: Args.text({ name: "uid" }).pipe(
          Args.withDescription("a mapping of the provider (1 to 100; those already gone are skipped)"),
          Args.atLeast(1)
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const deleted = yield* client.mappingBatches.delete({
            payload: { parent: flags.provider, names: flags.uids }
          })
          yield* printRows(deleted.externalGroupRoleMappings, mappingShape, flags.output)
        })
    ).pipe(Command.withDescription(
      "Delete several mappings of one provider at once, all or none; prints those deleted. Example: arbor iam external-group-role-mappings batch-delete --provider <uid> <uid> <uid>"
    ))
  ])
)
