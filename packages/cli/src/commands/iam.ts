/**
 * `arbor iam`: organizations, folders, identities (with `create github|gitlab|kubernetes`, which build the claim
 * match from flags), roles (and `capabilities`), role bindings and invites.
 */
import { Wire } from "@arbor/api"
import type { AccountAssociation } from "@arbor/core/AccountAssociation"
import * as Capability from "@arbor/core/Capability"
import type { Group } from "@arbor/core/Group"
import type { GroupInvite } from "@arbor/core/GroupInvite"
import type { Identity } from "@arbor/core/Identity"
import type { IdentityProvider } from "@arbor/core/IdentityProvider"
import type { ListOptions } from "@arbor/core/Lists"
import type { Role } from "@arbor/core/Role"
import type { RoleBinding } from "@arbor/core/RoleBinding"
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { UsageError } from "../Failure.js"
import type * as Output from "../Output.js"
import {
  allPages,
  type Client,
  common,
  connect,
  description,
  given,
  limit,
  output,
  parent,
  print,
  printRows,
  resolveGroup,
  time
} from "./shared.js"

const uidOf = (what: string) => Args.text({ name: "uid" }).pipe(Args.withDescription(`the ${what}'s uid`))

const optionalParent = parent.pipe(
  Options.withDescription("only those below this group (a uid or a path of names)"),
  Options.optional
)

/** The list parameters of `--parent`: everything below it, or everything the caller sees. */
const below = (client: Client, group: Option.Option<string>) =>
  Option.isNone(group)
    ? Effect.succeed({})
    : Effect.map(resolveGroup(client, group.value), (uid): ListOptions => ({ descendantsOf: uid }))

/** `list`: every page of one kind of resource the caller sees, below `--parent` when given. */
const listCommand = <P extends { readonly nextPageToken?: string | undefined }, A extends { readonly uid: string }, E>(
  spec: {
    readonly what: string
    readonly example: string
    readonly shape: Output.Shape<A>
    readonly list: (client: Client, urlParams: ListOptions) => Effect.Effect<P, E>
    readonly items: (page: P) => ReadonlyArray<A>
    readonly order?: string
  }
) =>
  Command.make(
    "list",
    { ...common, output, limit, parent: optionalParent },
    (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const rows = yield* allPages(
          (urlParams: ListOptions) => spec.list(client, urlParams),
          spec.items,
          { orderBy: spec.order, ...(yield* below(client, flags.parent)) },
          flags.limit
        )
        yield* printRows(rows, spec.shape, flags.output)
      })
  ).pipe(Command.withDescription(`List ${spec.what}. Example: ${spec.example}`))

/** `delete <uid>`: deletes one resource by uid. */
const deleteCommand = <E>(
  what: string,
  example: string,
  remove: (client: Client, uid: string) => Effect.Effect<void, E>
) =>
  Command.make(
    "delete",
    { ...common, uid: uidOf(what) },
    (flags) => Effect.flatMap(connect(flags), (client) => remove(client, flags.uid))
  ).pipe(
    Command.withDescription(`Delete ${example}`)
  )

// organizations and folders

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

const listGroups = (client: Client, options: ListOptions, max: Option.Option<number>) =>
  allPages((urlParams: ListOptions) => client.groups.list({ urlParams }), (page) => page.groups, {
    orderBy: "name",
    ...options
  }, max)

const folderRef = Args.text({ name: "group" }).pipe(Args.withDescription("its uid, or its path of names"))

const describeGroup = (what: string, example: string) =>
  Command.make("describe", { ...common, output, group: folderRef }, (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      const group = yield* client.groups.get({ path: { uid: yield* resolveGroup(client, flags.group) } })
      yield* printRows([group], groupShape, flags.output === "table" ? "wide" : flags.output)
    })).pipe(Command.withDescription(`Show one ${what}. Example: ${example}`))

const deleteGroup = (what: string, example: string) =>
  Command.make("delete", { ...common, group: folderRef }, (flags) =>
    Effect.gen(function*() {
      const client = yield* connect(flags)
      yield* client.groups.delete({ path: { uid: yield* resolveGroup(client, flags.group) } })
    })).pipe(Command.withDescription(`Delete an empty ${what}. Example: ${example}`))

const organizations = Command.make("organizations").pipe(
  Command.withDescription("Organizations: the roots of the hierarchy."),
  Command.withSubcommands([
    Command.make("list", { ...common, output, limit }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        yield* printRows(yield* listGroups(client, { inRoot: true }, flags.limit), groupShape, flags.output)
      })).pipe(Command.withDescription("List the organizations you can see. Example: arbor iam organizations list")),
    Command.make(
      "create",
      { ...common, output, description, name: Args.text({ name: "name" }) },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const created = yield* client.groups.createRoot({
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
    describeGroup("organization", "arbor iam organizations describe acme"),
    deleteGroup("organization", "arbor iam organizations delete acme")
  ])
)

const folders = Command.make("folders").pipe(
  Command.withDescription("Folders: the groups below an organization."),
  Command.withSubcommands([
    Command.make(
      "list",
      { ...common, output, limit, parent: optionalParent },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          yield* printRows(
            yield* listGroups(client, yield* below(client, flags.parent), flags.limit),
            groupShape,
            flags.output
          )
        })
    ).pipe(Command.withDescription(
      "List the folders (and organizations) you can see; -o tree draws the hierarchy. " +
        "Example: arbor iam folders list -o tree"
    )),
    Command.make(
      "create",
      { ...common, output, parent, description, name: Args.text({ name: "name" }) },
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
    describeGroup("folder", "arbor iam folders describe acme/platform"),
    Command.make("update", {
      ...common,
      output,
      group: folderRef,
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
    deleteGroup("folder", "arbor iam folders delete acme/platform/old")
  ])
)

// identities

const identityShape: Output.Shape<Identity> = {
  json: Wire.Identity.v2,
  columns: [
    { heading: "NAME", value: (i) => i.name },
    { heading: "UID", value: (i) => i.uid },
    {
      heading: "ISSUER",
      value: (i) => i.claimMatch?.issuer ?? i.claimMatch?.issuerPattern ?? i.staticKeys?.issuer ?? ""
    },
    {
      heading: "SUBJECT",
      value: (i) => i.claimMatch?.subject ?? i.claimMatch?.subjectPattern ?? i.staticKeys?.subject ?? ""
    },
    { heading: "DESCRIPTION", value: (i) => i.description, wide: true },
    { heading: "LAST SEEN", value: (i) => time(i.lastSeenTime), wide: true }
  ]
}

/** What `create github|gitlab|kubernetes|generic` turn their flags into. */
type ClaimMatch = Record<string, unknown>

const audience = Options.text("audience").pipe(
  Options.withDescription("the audience the workload's token is issued for (default: the token service's address)"),
  Options.optional
)

const withAudience = (match: ClaimMatch, aud: Option.Option<string>): ClaimMatch =>
  Option.isSome(aud) ? { ...match, audience: aud.value } : match

const githubIssuer = "https://token.actions.githubusercontent.com"

/** Claim-match builders: each kind's flags, checked before anything is sent. */
const kinds = {
  github: {
    flags: {
      repo: Options.text("github-repo").pipe(Options.withDescription("the repository, OWNER/REPO")),
      ref: Options.text("github-ref").pipe(
        Options.withDescription("a branch or tag ref, e.g. refs/heads/main"),
        Options.optional
      ),
      environment: Options.text("github-environment").pipe(
        Options.withDescription("a deployment environment"),
        Options.optional
      ),
      audience
    },
    description: "a GitHub Actions workflow of a repository (on a ref or in an environment, else any of its jobs)",
    example:
      "arbor iam identities create github deployer --parent acme --github-repo acme/app --github-ref refs/heads/main",
    build: (
      f: {
        repo: string
        ref: Option.Option<string>
        environment: Option.Option<string>
        audience: Option.Option<string>
      }
    ) =>
      Effect.gen(function*() {
        if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(f.repo)) {
          return yield* new UsageError({ message: `--github-repo ${f.repo} is not OWNER/REPO` })
        }
        if (Option.isSome(f.ref) && Option.isSome(f.environment)) {
          return yield* new UsageError({ message: "give --github-ref or --github-environment, not both" })
        }
        if (Option.isSome(f.ref) && !/^refs\/(heads|tags)\/\S+$/.test(f.ref.value)) {
          return yield* new UsageError({ message: `--github-ref ${f.ref.value} is not refs/heads/… or refs/tags/…` })
        }
        const escape = (s: string) => s.replace(/:/g, "%3A")
        const base = `repo:${f.repo}`
        const match: ClaimMatch = Option.isSome(f.ref)
          ? { issuer: githubIssuer, subject: `${base}:ref:${escape(f.ref.value)}` }
          : Option.isSome(f.environment)
          ? { issuer: githubIssuer, subject: `${base}:environment:${escape(f.environment.value)}` }
          : { issuer: githubIssuer, subjectPattern: `${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:.+` }
        return withAudience(match, f.audience)
      })
  },
  gitlab: {
    flags: {
      project: Options.text("gitlab-project").pipe(Options.withDescription("the project, GROUP/PROJECT")),
      ref: Options.text("gitlab-ref").pipe(Options.withDescription("a branch or tag name"), Options.optional),
      refType: Options.choice("gitlab-ref-type", ["branch", "tag"]).pipe(Options.withDefault("branch" as const)),
      gitlabIssuer: Options.text("gitlab-issuer").pipe(
        Options.withDefault("https://gitlab.com"),
        Options.withDescription("the GitLab instance")
      ),
      audience
    },
    description: "a GitLab CI/CD job of a project (on a branch or tag, else any of its jobs)",
    example: "arbor iam identities create gitlab builder --parent acme --gitlab-project acme/app --gitlab-ref main",
    build: (
      f: {
        project: string
        ref: Option.Option<string>
        refType: "branch" | "tag"
        gitlabIssuer: string
        audience: Option.Option<string>
      }
    ) =>
      Effect.gen(function*() {
        if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/.test(f.project)) {
          return yield* new UsageError({ message: `--gitlab-project ${f.project} is not GROUP/PROJECT` })
        }
        const base = `project_path:${f.project}`
        const match: ClaimMatch = Option.isSome(f.ref)
          ? { issuer: f.gitlabIssuer, subject: `${base}:ref_type:${f.refType}:ref:${f.ref.value}` }
          : { issuer: f.gitlabIssuer, subjectPattern: `${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:.+` }
        return withAudience(match, f.audience)
      })
  },
  kubernetes: {
    flags: {
      k8sIssuer: Options.text("k8s-issuer").pipe(Options.withDescription("the cluster's service-account issuer URL")),
      serviceAccount: Options.text("k8s-service-account").pipe(Options.withDescription("NAMESPACE:NAME")),
      audience
    },
    description: "a Kubernetes service account",
    example:
      "arbor iam identities create kubernetes agent --parent acme --k8s-issuer https://oidc.example.com --k8s-service-account tools:agent",
    build: (f: { k8sIssuer: string; serviceAccount: string; audience: Option.Option<string> }) =>
      Effect.gen(function*() {
        if (!/^[a-z0-9-]+:[a-z0-9.-]+$/.test(f.serviceAccount)) {
          return yield* new UsageError({ message: `--k8s-service-account ${f.serviceAccount} is not NAMESPACE:NAME` })
        }
        return withAudience({ issuer: f.k8sIssuer, subject: `system:serviceaccount:${f.serviceAccount}` }, f.audience)
      })
  },
  generic: {
    flags: {
      identityIssuer: Options.text("identity-issuer").pipe(Options.withDescription("the token issuer's URL")),
      subject: Options.text("subject").pipe(Options.withDescription("the token's exact subject")),
      audience
    },
    description: "any OIDC token issuer, by issuer and exact subject",
    example:
      "arbor iam identities create generic ci --parent acme --identity-issuer https://issuer.example.com --subject ci",
    build: (f: { identityIssuer: string; subject: string; audience: Option.Option<string> }) =>
      Effect.succeed(withAudience({ issuer: f.identityIssuer, subject: f.subject }, f.audience))
  }
} as const

const createIdentity = <K extends keyof typeof kinds>(kind: K) => {
  const spec = kinds[kind]
  return Command.make(
    kind,
    { ...common, output, parent, description, name: Args.text({ name: "name" }), ...spec.flags },
    (flags) =>
      Effect.gen(function*() {
        const claimMatch = yield* (spec.build as (f: typeof flags) => Effect.Effect<ClaimMatch, UsageError>)(flags)
        const client = yield* connect(flags)
        const created = yield* client.identities.create({
          path: { uid: yield* resolveGroup(client, flags.parent) },
          payload: {
            name: flags.name,
            ...given("description", flags.description),
            claimMatch
          }
        })
        yield* printRows([created], identityShape, flags.output)
      })
  ).pipe(Command.withDescription(`An identity for ${spec.description}. Example: ${spec.example}`))
}

const identities = Command.make("identities").pipe(
  Command.withDescription("Identities: what workloads and people are, assumed through their tokens' claims."),
  Command.withSubcommands([
    listCommand({
      what: "identities",
      example: "arbor iam identities list --parent acme",
      shape: identityShape,
      list: (client, urlParams) => client.identities.list({ urlParams }),
      items: (page) => page.identities,
      order: "name"
    }),
    Command.make("create").pipe(
      Command.withDescription("Create an identity that a workload's tokens assume."),
      Command.withSubcommands([
        createIdentity("github"),
        createIdentity("gitlab"),
        createIdentity("kubernetes"),
        createIdentity("generic")
      ])
    ),
    Command.make("describe", { ...common, output, uid: uidOf("identity") }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        yield* printRows(
          [yield* client.identities.get({ path: { uid: flags.uid } })],
          identityShape,
          flags.output === "table" ? "wide" : flags.output
        )
      })).pipe(Command.withDescription("Show one identity. Example: arbor iam identities describe <uid>")),
    Command.make(
      "update",
      {
        ...common,
        output,
        uid: uidOf("identity"),
        name: Options.text("name").pipe(Options.withDescription("its new name"), Options.optional),
        description: description.pipe(Options.withDescription("its new description"))
      },
      (flags) =>
        Effect.gen(function*() {
          const payload = {
            ...given("name", flags.name),
            ...given("description", flags.description)
          }
          if (Object.keys(payload).length === 0) {
            return yield* new UsageError({ message: "give --name or --description" })
          }
          const client = yield* connect(flags)
          const updated = yield* client.identities.update({ path: { uid: flags.uid }, urlParams: {}, payload })
          yield* printRows([updated], identityShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Rename an identity or change its description (your own, as a person). Example: arbor iam identities update <uid> --name ada"
      )
    ),
    deleteCommand(
      "identity",
      "an identity and its role bindings. Example: arbor iam identities delete <uid>",
      (client, uid) => client.identities.delete({ path: { uid } })
    )
  ])
)

// roles

const roleShape: Output.Shape<Role> = {
  json: Wire.Role.v2,
  columns: [
    { heading: "NAME", value: (r) => r.name },
    { heading: "UID", value: (r) => r.uid },
    { heading: "DESCRIPTION", value: (r) => r.description },
    { heading: "CAPABILITIES", value: (r) => r.capabilities.join(" "), wide: true }
  ]
}

/** A role by uid, or by name among the roles the caller sees. */
const resolveRole = (client: Client, ref: string) =>
  /^[0-9a-f]{40}(\/[0-9a-f]{16})*$/.test(ref)
    ? Effect.succeed(ref)
    : Effect.flatMap(client.roles.list({ urlParams: { name: ref } }), (page) =>
      page.roles.length === 1
        ? Effect.succeed(page.roles[0]!.uid)
        : Effect.fail(
          new UsageError({
            message: page.roles.length === 0 ? `no role named ${ref}` : `several roles are named ${ref}; give its uid`
          })
        ))

const roles = Command.make("roles").pipe(
  Command.withDescription("Roles: named sets of capabilities."),
  Command.withSubcommands([
    listCommand({
      what: "roles (built-in ones too)",
      example: "arbor iam roles list",
      shape: roleShape,
      list: (client, urlParams) => client.roles.list({ urlParams }),
      items: (page) => page.roles,
      order: "name"
    }),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        description,
        name: Args.text({ name: "name" }),
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
    Command.make("describe", {
      ...common,
      output,
      role: Args.text({ name: "role" }).pipe(Args.withDescription("the role's uid or name"))
    }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        const role = yield* client.roles.get({ path: { uid: yield* resolveRole(client, flags.role) } })
        yield* printRows([role], roleShape, flags.output === "table" ? "wide" : flags.output)
      })).pipe(Command.withDescription("Show one role and its capabilities. Example: arbor iam roles describe viewer")),
    Command.make("capabilities", {}, () => print(Capability.all.join("\n"))).pipe(
      Command.withDescription("List every capability a role may grant. Example: arbor iam roles capabilities")
    ),
    deleteCommand(
      "role",
      "a custom role that nothing is bound to. Example: arbor iam roles delete <uid>",
      (client, uid) => client.roles.delete({ path: { uid } })
    )
  ])
)

// role bindings

const bindingShape: Output.Shape<RoleBinding> = {
  json: Wire.RoleBinding.v2,
  columns: [
    { heading: "IDENTITY", value: (b) => b.identity.name || b.identity.uid },
    { heading: "ROLE", value: (b) => b.role.name || b.role.uid },
    { heading: "GROUP", value: (b) => b.group.name || b.group.uid },
    { heading: "UID", value: (b) => b.uid },
    { heading: "IDENTITY UID", value: (b) => b.identity.uid, wide: true }
  ]
}

const roleBindings = Command.make("role-bindings").pipe(
  Command.withDescription("Role bindings: an identity holding a role in a group and everything below it."),
  Command.withSubcommands([
    listCommand({
      what: "role bindings",
      example: "arbor iam role-bindings list --parent acme",
      shape: bindingShape,
      list: (client, urlParams) => client.roleBindings.list({ urlParams }),
      items: (page) => page.roleBindings
    }),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        identity: Options.text("identity").pipe(Options.withDescription("the identity's uid")),
        role: Options.text("role").pipe(Options.withDescription("the role's uid or name (viewer, editor, …)"))
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const created = yield* client.roleBindings.create({
            path: { uid: yield* resolveGroup(client, flags.parent) },
            payload: { identityUid: flags.identity, roleUid: yield* resolveRole(client, flags.role) }
          })
          yield* printRows([created], bindingShape, flags.output)
        })
    ).pipe(
      Command.withDescription(
        "Bind an identity to a role in a group. Example: arbor iam role-bindings create --parent acme/platform --identity <uid> --role viewer"
      )
    ),
    deleteCommand(
      "binding",
      "a role binding. Example: arbor iam role-bindings delete <uid>",
      (client, uid) => client.roleBindings.delete({ path: { uid } })
    )
  ])
)

// invites

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

const invites = Command.make("invites").pipe(
  Command.withDescription("Invites: codes that bind whoever signs in with them to a role in a group."),
  Command.withSubcommands([
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
    listCommand({
      what: "invites (newest first)",
      example: "arbor iam invites list --parent acme",
      shape: inviteShape,
      list: (client, urlParams) => client.groupInvites.list({ urlParams }),
      items: (page) => page.groupInvites
    }),
    deleteCommand(
      "invite",
      "an invite. Example: arbor iam invites delete <uid>",
      (client, uid) => client.groupInvites.delete({ path: { uid } })
    )
  ])
)

// identity providers

const providerShape: Output.Shape<IdentityProvider> = {
  json: Wire.IdentityProvider.v2,
  columns: [
    { heading: "NAME", value: (p) => p.name },
    { heading: "UID", value: (p) => p.uid },
    { heading: "ISSUER", value: (p) => p.oidc.issuer },
    { heading: "CLIENT ID", value: (p) => p.oidc.clientId, wide: true },
    { heading: "DEFAULT ROLE", value: (p) => p.defaultRole, wide: true }
  ]
}

const identityProviders = Command.make("identity-providers").pipe(
  Command.withDescription("Identity providers: an organization's own OpenID provider for its people."),
  Command.withSubcommands([
    listCommand({
      what: "identity providers",
      example: "arbor iam identity-providers list",
      shape: providerShape,
      list: (client, urlParams) => client.identityProviders.list({ urlParams }),
      items: (page) => page.identityProviders,
      order: "name"
    }),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        description,
        name: Args.text({ name: "name" }),
        oidcIssuer: Options.text("oidc-issuer").pipe(Options.withDescription("the provider's issuer URL (https)")),
        clientId: Options.text("client-id").pipe(Options.withDescription("Arbor's client id there")),
        clientSecret: Options.redacted("client-secret").pipe(
          Options.withDescription("its client secret (default: ARBOR_CLIENT_SECRET; none for a public client)"),
          Options.optional
        ),
        role: Options.text("default-role").pipe(
          Options.withDescription("the role its people get in the group (uid or name)")
        ),
        scopes: Options.text("scope").pipe(
          Options.repeated,
          Options.withDescription("a scope to ask for beside openid email profile (repeat)")
        )
      },
      (flags) =>
        Effect.gen(function*() {
          const client = yield* connect(flags)
          const secret = Option.isSome(flags.clientSecret)
            ? Redacted.value(flags.clientSecret.value)
            : process.env.ARBOR_CLIENT_SECRET
          const created = yield* client.identityProviders.create({
            path: { uid: yield* resolveGroup(client, flags.parent) },
            payload: {
              name: flags.name,
              ...given("description", flags.description),
              defaultRole: yield* resolveRole(client, flags.role),
              oidc: {
                issuer: flags.oidcIssuer,
                clientId: flags.clientId,
                ...(secret === undefined ? {} : { clientSecret: secret }),
                additionalScopes: flags.scopes
              }
            }
          })
          yield* printRows([created], providerShape, flags.output)
        })
    ).pipe(Command.withDescription(
      "Add an organization's own OpenID provider; register {issuer}/oauth/callback there. " +
        "Example: arbor iam identity-providers create okta --parent acme --oidc-issuer https://acme.okta.com " +
        "--client-id arbor --default-role viewer"
    )),
    deleteCommand(
      "identity provider",
      "an identity provider. Example: arbor iam identity-providers delete <uid>",
      (client, uid) => client.identityProviders.delete({ path: { uid } })
    )
  ])
)

// account associations

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

const accountAssociations = Command.make("account-associations").pipe(
  Command.withDescription("Account associations: the cloud accounts a group trusts, one per group."),
  Command.withSubcommands([
    listCommand({
      what: "account associations",
      example: "arbor iam account-associations list",
      shape: associationShape,
      list: (client, urlParams) => client.accountAssociations.list({ urlParams }),
      items: (page) => page.accountAssociations
    }),
    Command.make(
      "create",
      {
        ...common,
        output,
        parent,
        description,
        name: Args.text({ name: "name" }),
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
                onSome: (tenantId) => ({ azure: { tenantId, clientIds: {} } })
              })
            }
          })
          yield* printRows([created], associationShape, flags.output)
        })
    ).pipe(Command.withDescription(
      "Associate cloud accounts with a group. Example: arbor iam account-associations create prod --parent acme --amazon-account 123456789012"
    )),
    Command.make("delete", {
      ...common,
      group: Args.text({ name: "group" }).pipe(Args.withDescription("the group's uid or path of names"))
    }, (flags) =>
      Effect.gen(function*() {
        const client = yield* connect(flags)
        yield* client.accountAssociations.delete({ path: { uid: yield* resolveGroup(client, flags.group) } })
      })).pipe(
        Command.withDescription(
          "Remove a group's account association. Example: arbor iam account-associations delete acme"
        )
      )
  ])
)

/** `arbor iam`. */
export const iam = Command.make("iam").pipe(
  Command.withDescription(
    "Organizations, folders, identities, roles, role bindings, invites, identity providers and account associations."
  ),
  Command.withSubcommands([
    organizations,
    folders,
    identities,
    roles,
    roleBindings,
    invites,
    identityProviders,
    accountAssociations
  ])
)
