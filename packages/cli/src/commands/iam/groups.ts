/** `arbor iam organizations` and `arbor iam folders`: the hierarchy's groups, named by uid or path of names. */
import { Wire } from "@arbor/api"
import * as Resources from "@arbor/api/Resources"
import type { Group } from "@arbor/core/Group"
import * as Uid from "@arbor/core/Uid"
import { Args, Command, Options } from "@effect/cli"
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
  time
} from "../shared.js"
import * as Resource from "./resource.js"

const groupShape: Output.Shape<Group> = {
  json: Wire.Group.v2,
  columns: [
    { heading: "NAME", value: (g) => g.name },
    { heading: "UID", value: (g) => g.uid },
    { heading: "DESCRIPTION", value: (g) => g.description },
    { heading: "CREATED", value: (g) => time(g.createTime), wide: true }
  ],
  label: (g) => g.name
}

/** A group named by its uid or its path of names (`acme/platform/build`). */
const groupRef = { name: "group", description: "its uid, or its path of names", resolve: resolveGroup }

const groups = Resource.make({
  query: Resources.groups.query,
  shape: groupShape,
  list: (client, urlParams) => client.groups.list({ urlParams }),
  items: (page) => page.groups,
  order: "name",
  placed: (g) => Uid.parentOrNull(g.uid),
  get: (client, uid) => client.groups.get({ path: { uid } }),
  delete: (client, uid) => client.groups.delete({ path: { uid } }),
  ref: groupRef
})

/** `arbor iam organizations`. */
export const organizations = Command.make("organizations").pipe(
  Command.withDescription("Organizations: the roots of the hierarchy."),
  Help.withSubcommands([
    Resource.list(groups, "List the organizations you can see. Example: arbor iam organizations list", {
      fixed: { inRoot: true }
    }),
    Command.make(
      "create",
      { ...common, output, description, name: nameArg("organization") },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const created = yield* client.organizations.create({
            payload: {
              name: flags.name,
              ...given("description", flags.description)
            }
          })
          yield* printRows([created], groupShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Create an organization (platform admins only). Example: arbor iam organizations create acme"
      )
    ),
    Resource.describe(groups, "Show one organization. Example: arbor iam organizations describe acme"),
    Resource.remove(groups, "Delete an empty organization. Example: arbor iam organizations delete acme"),
    ...([["verify", true], ["unverify", false]] as const).map(([name, verified]) =>
      Command.make(
        name,
        {
          ...common,
          output,
          group: Args.text({ name: "organization" }).pipe(Args.withDescription(groupRef.description))
        },
        (flags) =>
          Effect.gen(function*() {
            const client = yield* connect(flags)
            const group = yield* client.groups.update({
              path: { uid: yield* resolveGroup(client, flags.group) },
              urlParams: { updateMask: "verified" },
              payload: { verified }
            })
            yield* printRows([group], groupShape, flags.output)
          })
      ).pipe(Command.withDescription(
        verified
          ? "Mark an organization named by a domain as verified, so people at that domain find it (platform admins only). Example: arbor iam organizations verify acme.com"
          : "Mark an organization as not verified (platform admins only). Example: arbor iam organizations unverify acme.com"
      ))
    ),
    Command.make("lookup", { ...common, output }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const found = yield* client.verifiedOrganizations.lookup()
        yield* printRows([found.group], groupShape, flags.output)
      })).pipe(Command.withDescription(
        "Find the verified organization of your email's domain. Example: arbor iam organizations lookup"
      )),
    Command.make("eligibility", common, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const { eligible } = yield* client.verifiedOrganizations.checkEligibility()
        yield* print(
          eligible
            ? "eligible: your email's domain may look for its verified organization"
            : "not eligible: no email verified by this server's sign-in, a free mail domain, or a narrowed token"
        )
      })).pipe(Command.withDescription(
        "Whether your email's domain may look for its verified organization. Example: arbor iam organizations eligibility"
      )),
    Command.make(
      "request-access",
      {
        ...common,
        group: Args.text({ name: "organization-uid" }).pipe(
          Args.withDescription("the uid lookup gave for your domain's organization")
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          yield* client.verifiedOrganizations.requestAccess({ path: { uid: flags.group } })
          yield* Effect.sync(() =>
            process.stderr.write("Your request for access was sent to the organization's owners.\n")
          )
        })
    ).pipe(Command.withDescription(
      "Ask the owners of your domain's verified organization for access. Example: arbor iam organizations request-access <uid>"
    ))
  ])
)

/** `arbor iam folders`. */
export const folders = Command.make("folders").pipe(
  Command.withDescription("Folders: the groups below an organization."),
  Help.withSubcommands([
    Resource.list(
      groups,
      "List the folders (and organizations) you can see; -o tree draws the hierarchy. " +
        "Example: arbor iam folders list -o tree"
    ),
    Command.make(
      "create",
      { ...common, output, parent, description, name: nameArg("folder") },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const created = yield* client.groups.create({
            path: { uid: yield* resolveGroup(client, flags.parent) },
            payload: {
              name: flags.name,
              ...given("description", flags.description)
            }
          })
          yield* printRows([created], groupShape, flags.output)
        })
    ).pipe(Command.withDescription("Create a folder. Example: arbor iam folders create build --parent acme/platform")),
    Resource.describe(groups, "Show one folder. Example: arbor iam folders describe acme/platform"),
    Command.make("update", {
      ...common,
      output,
      group: Args.text({ name: "group" }).pipe(Args.withDescription(groupRef.description)),
      description: description.pipe(Options.withDescription("its new description")),
      name: Options.text("name").pipe(Options.withDescription("its new name"), Options.optional)
    }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const payload = {
          ...given("name", flags.name),
          ...given("description", flags.description)
        }
        if (Object.keys(payload).length === 0) return yield* new UsageError({ message: "give --name or --description" })
        const group = yield* client.groups.update({
          path: { uid: yield* resolveGroup(client, flags.group) },
          urlParams: {},
          payload
        })
        yield* printRows([group], groupShape, flags.output)
      })).pipe(
        Command.withDescription(
          "Rename a folder or change its description. Example: arbor iam folders update acme/platform --description 'Platform team'"
        )
      ),
    Resource.remove(groups, "Delete an empty folder. Example: arbor iam folders delete acme/platform/old")
  ])
)
