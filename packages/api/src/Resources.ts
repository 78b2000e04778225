/**
 * Every resource of the API, declared once: its names, its v2 JSON, the query of its list, the capability each
 * operation needs and its proto message. The REST endpoints and their reference text (`Api`), the server's REST
 * handlers and its gRPC methods (`@arbor/http`) all derive from these declarations; docs/architecture.md shows how a
 * resource or a list filter is added.
 */
import * as AccountAssociation from "@arbor/core/AccountAssociation"
import type {} from "@arbor/core/Condition"
import * as Advisory from "@arbor/core/Advisory"
import * as ExternalGroupRoleMapping from "@arbor/core/ExternalGroupRoleMapping"
import * as Group from "@arbor/core/Group"
import * as GroupInvite from "@arbor/core/GroupInvite"
import * as Identity from "@arbor/core/Identity"
import * as IdentityProvider from "@arbor/core/IdentityProvider"
import type { ListOptions } from "@arbor/core/Lists"
import * as Repo from "@arbor/core/Repo"
import * as Role from "@arbor/core/Role"
import * as RoleBinding from "@arbor/core/RoleBinding"
import * as Subscription from "@arbor/core/Subscription"
import * as Tag from "@arbor/core/Tag"
import type * as Schema from "effect/Schema"
import * as Declaration from "./internal/declaration.js"
import * as ListQuery from "./ListQuery.js"
import * as Wire from "./Wire.js"

export type { Params, Proto, Resource, V1, WritableResource } from "./internal/declaration.js"

/** A resource the caller lists and gets, with the API group its declaration makes. */
export const readable = <
  const Name extends string,
  A,
  I,
  Q extends ListOptions,
  QI extends Declaration.Params
>(resource: Declaration.Resource<Name, A, I, Q, QI>): Readable<Name, A, I, Q, QI> => {
  const declared = { ...resource, envelope: Declaration.envelope(resource) }
  return { ...declared, group: Declaration.readableGroup(declared) }
}

/** A resource the caller also creates, updates and deletes, with the API group its declaration makes. */
export const writable = <const Name extends string, A, I, Q extends ListOptions, QI extends Declaration.Params, C, CI>(
  resource: Declaration.WritableResource<Name, A, I, Q, QI, C, CI>
): Writable<Name, A, I, Q, QI, C, CI> => {
  const declared = {
    ...resource,
    envelope: Declaration.envelope(resource),
    body: Declaration.bodies(resource.create, Declaration.typeName(resource.proto))
  }
  return { ...declared, group: Declaration.writableGroup(declared) }
}

/** A resource the caller creates and deletes but never changes, with the API group its declaration makes. */
export const creatable = <
  const Name extends string,
  A,
  I,
  Q extends ListOptions,
  QI extends Declaration.Params,
  C,
  CI
>(resource: Declaration.WritableResource<Name, A, I, Q, QI, C, CI>): Creatable<Name, A, I, Q, QI, C, CI> => {
  const declared = {
    ...resource,
    envelope: Declaration.envelope(resource),
    body: Declaration.bodies(resource.create, Declaration.typeName(resource.proto))
  }
  return { ...declared, group: Declaration.creatableGroup(declared) }
}

/** A resource's v1 surface, with its deprecated API group. */
export const v1 = <const Name extends string, A, V1I, C, CI>(
  resource: Parameters<typeof Declaration.v1Group<Name, A, V1I, C, CI>>[1],
  v1: Declaration.V1<Name, A, V1I, C, CI>
): V1Surface<Name, A, V1I, C, CI> => {
  const declared = { ...v1, envelope: Wire.itemsEnvelope(v1.wire) }
  return { ...declared, group: Declaration.v1Group(declared, resource) }
}

/** A readable resource's declaration and group. */
export interface Readable<Name extends string, A, I, Q extends ListOptions, QI extends Declaration.Params>
  extends Declaration.Resource<Name, A, I, Q, QI>
{
  /** Its list's page. */
  readonly envelope: ReturnType<typeof Declaration.envelope<Name, A, I>>
  readonly group: ReturnType<typeof Declaration.readableGroup<Name, A, I, Q, QI>>
}

/** A creatable resource's declaration, request bodies and group. */
export interface Creatable<Name extends string, A, I, Q extends ListOptions, QI extends Declaration.Params, C, CI>
  extends Declaration.WritableResource<Name, A, I, Q, QI, C, CI>
{
  readonly envelope: ReturnType<typeof Declaration.envelope<Name, A, I>>
  readonly body: Declaration.Bodies<CI>
  readonly group: ReturnType<typeof Declaration.creatableGroup<Name, A, I, Q, QI, C, CI>>
}

/** A writable resource's declaration, request bodies and group. */
export interface Writable<Name extends string, A, I, Q extends ListOptions, QI extends Declaration.Params, C, CI>
  extends Declaration.WritableResource<Name, A, I, Q, QI, C, CI>
{
  readonly envelope: ReturnType<typeof Declaration.envelope<Name, A, I>>
  readonly body: Declaration.Bodies<CI>
  readonly group: ReturnType<typeof Declaration.writableGroup<Name, A, I, Q, QI, C, CI>>
}

/** A v1 surface's declaration and group. */
export interface V1Surface<Name extends string, A, V1I, C, CI> extends Declaration.V1<Name, A, V1I, C, CI> {
  /** Its list: every match under `items`. */
  readonly envelope: Schema.Struct<{ items: Schema.Array$<Schema.Schema<A, V1I>> }>
  readonly group: ReturnType<typeof Declaration.v1Group<Name, A, V1I, C, CI>>
}

const iam = "/iam/v2beta1"
const iamProto = "chainguard.platform.iam.v2beta1"
const registryProto = "chainguard.platform.registry.v2beta1"
const vulnerabilitiesProto = "chainguard.platform.vulnerabilities.v2beta1"
const registry = "/registry/v2beta1"

export const groups = writable({
  name: "groups",
  one: "group",
  many: "groups",
  description: "Groups: the organization hierarchy. A root group is an organization.",
  prefix: iam,
  wire: Wire.Group.v2,
  query: ListQuery.ListQuery,
  create: Group.CreateGroup,
  permissions: Group.permissions,
  proto: { service: `${iamProto}.GroupsService`, message: `${iamProto}.Group`, field: "group" }
})

export const identities = writable({
  name: "identities",
  one: "identity",
  many: "identities",
  description: "Identities: workloads and users, assumed through matching token claims.",
  prefix: iam,
  wire: Wire.Identity.v2,
  query: ListQuery.IdentityListQuery,
  create: Identity.CreateIdentity,
  permissions: Identity.permissions,
  proto: {
    service: `${iamProto}.IdentitiesService`,
    message: `${iamProto}.Identity`,
    field: "identity",
    unsupported: ["awsIdentity", "servicePrincipal"]
  }
})

export const roles = writable({
  name: "roles",
  one: "role",
  many: "roles",
  description: "Roles: named sets of capabilities; built-in roles are readable by every caller.",
  prefix: iam,
  wire: Wire.Role.v2,
  query: ListQuery.ListQuery,
  create: Role.CreateRole,
  permissions: Role.permissions,
  proto: { service: `${iamProto}.RolesService`, message: `${iamProto}.Role`, field: "role" }
})

export const roleBindings = writable({
  name: "roleBindings",
  one: "role binding",
  many: "role bindings",
  description: "Role bindings: an identity holding a role in a group and everything below it.",
  prefix: iam,
  wire: Wire.RoleBinding.v2,
  query: ListQuery.RoleBindingListQuery,
  create: RoleBinding.CreateRoleBinding,
  permissions: RoleBinding.permissions,
  proto: {
    service: `${iamProto}.RoleBindingsService`,
    message: `${iamProto}.RoleBinding`,
    field: "roleBinding",
    // The message also names the identity and the role by uid at the top level; a request names them only there
    // (its nested references are output only).
    toProto: (binding) => ({ ...binding, identityUid: binding.identity.uid, roleUid: binding.role.uid }),
    fromProto: ({ group: _g, identity: _i, role: _r, ...json }) => json
  }
})

export const identityProviders = writable({
  name: "identityProviders",
  one: "identity provider",
  many: "identity providers",
  description: "Identity providers: upstream OIDC providers for a group's users.",
  prefix: iam,
  wire: Wire.IdentityProvider.v2,
  query: ListQuery.ListQuery,
  create: IdentityProvider.CreateIdentityProvider,
  permissions: IdentityProvider.permissions,
  proto: {
    service: `${iamProto}.IdentityProvidersService`,
    message: `${iamProto}.IdentityProvider`,
    field: "identityProvider"
  }
})

export const accountAssociations = writable({
  name: "accountAssociations",
  one: "account association",
  many: "account associations",
  description: "Account associations: the cloud accounts a group trusts, one per group.",
  prefix: iam,
  wire: Wire.AccountAssociation.v2,
  query: ListQuery.ListQuery,
  create: AccountAssociation.CreateAccountAssociation,
  permissions: AccountAssociation.permissions,
  proto: {
    service: `${iamProto}.AccountAssociationsService`,
    message: `${iamProto}.AccountAssociation`,
    field: "accountAssociation"
  }
})

export const groupInvites = writable({
  name: "groupInvites",
  one: "invite",
  many: "invites",
  description: "Group invites: codes that bind their redeemer to a role in a group.",
  prefix: iam,
  wire: Wire.GroupInvite.v2,
  query: ListQuery.ListQuery,
  create: GroupInvite.CreateGroupInvite,
  permissions: GroupInvite.permissions,
  proto: {
    service: `${iamProto}.GroupInvitesService`,
    message: `${iamProto}.GroupInvite`,
    field: "groupInvite",
    fromProto: ({ role: _, ...json }) => json
  }
})

/** The proto's catalog tiers are the engine's with this prefix. */
const catalogTierPrefix = "CATALOG_TIER_"

export const repos = readable({
  name: "repos",
  one: "repo",
  many: "repos",
  description: "Registry repositories: read-only here, written through v1.",
  prefix: registry,
  wire: Wire.Repo.v2,
  query: ListQuery.ListQuery,
  permissions: Repo.permissions,
  proto: {
    service: `${registryProto}.ReposService`,
    message: `${registryProto}.Repo`,
    field: "repo",
    toProto: (repo) => ({ ...repo, catalogTier: `${catalogTierPrefix}${repo.catalogTier}` }),
    fromProto: (json) =>
      typeof json.catalogTier === "string"
        ? { ...json, catalogTier: json.catalogTier.replace(catalogTierPrefix, "") }
        : json
  }
})

export const tags = readable({
  name: "tags",
  one: "tag",
  many: "tags",
  description: "Registry tags: read-only here, written through v1.",
  prefix: registry,
  wire: Wire.Tag.v2,
  query: ListQuery.TagListQuery,
  permissions: Tag.permissions,
  proto: {
    service: `${registryProto}.TagsService`,
    message: `${registryProto}.Tag`,
    field: "tag",
    ignored: ["includeReferrers", "includeDates", "includeEpochs"]
  }
})

export const advisories = readable({
  name: "advisories",
  one: "advisory",
  many: "advisories",
  description: "Vulnerability advisories: read-only, loaded by the import command.",
  prefix: "/vulnerabilities/v2beta1",
  wire: Wire.Advisory.v2,
  query: ListQuery.AdvisoryListQuery,
  permissions: Advisory.permissions,
  proto: {
    service: `${vulnerabilitiesProto}.AdvisoriesService`,
    message: `${vulnerabilitiesProto}.Advisory`,
    field: "advisory"
  }
})

export const groupsV1 = v1(groups, {
  name: "groupsV1",
  path: "groups",
  prefix: "/iam/v1",
  wire: Wire.Group.v1,
  create: Group.CreateGroup
})
export const identitiesV1 = v1(identities, {
  name: "identitiesV1",
  path: "identities",
  prefix: "/iam/v1",
  wire: Wire.Identity.v1,
  create: Identity.CreateIdentity
})
export const rolesV1 = v1(roles, {
  name: "rolesV1",
  path: "roles",
  prefix: "/iam/v1",
  wire: Wire.Role.v1,
  create: Role.CreateRole
})
export const roleBindingsV1 = v1(roleBindings, {
  name: "roleBindingsV1",
  path: "rolebindings",
  prefix: "/iam/v1",
  wire: Wire.RoleBinding.v1,
  create: RoleBinding.CreateRoleBinding
})
export const reposV1 = v1(repos, {
  name: "reposV1",
  path: "repos",
  prefix: "/registry/v1",
  wire: Wire.Repo.v1,
  create: Repo.CreateRepo
})
export const tagsV1 = v1(tags, {
  name: "tagsV1",
  path: "tags",
  prefix: "/registry/v1",
  wire: Wire.Tag.v1,
  create: Tag.CreateTag
})

export const externalGroupRoleMappings = creatable({
  name: "externalGroupRoleMappings",
  one: "external group role mapping",
  many: "external group role mappings",
  description: "External group role mappings: an identity provider's groups given roles at each sign-in through it, " +
    "for that session only. Never changed: delete one and create another.",
  prefix: iam,
  wire: Wire.ExternalGroupRoleMapping,
  query: ListQuery.MappingListQuery,
  create: ExternalGroupRoleMapping.CreateExternalGroupRoleMapping,
  permissions: ExternalGroupRoleMapping.permissions,
  proto: {
    service: `${iamProto}.ExternalGroupRoleMappingsService`,
    message: `${iamProto}.ExternalGroupRoleMapping`,
    field: "externalGroupRoleMapping"
  }
})

const eventsProto = "chainguard.platform.events.v2beta1"

export const subscriptions = creatable({
  name: "subscriptions",
  one: "subscription",
  many: "subscriptions",
  description: "Subscriptions: webhooks that receive, as signed CloudEvents, every change of a group and below it.",
  prefix: "/events/v2beta1",
  wire: Wire.Subscription.v2,
  query: ListQuery.ListQuery,
  create: Subscription.CreateSubscription,
  permissions: Subscription.permissions,
  proto: {
    service: `${eventsProto}.SubscriptionsService`,
    message: `${eventsProto}.Subscription`,
    field: "subscription",
    // The message has no times; REST's are only REST's.
    toProto: ({ createTime: _c, updateTime: _u, ...subscription }) => subscription
  }
})
