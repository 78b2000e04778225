/**
 * Capabilities, the unit of permission. The engine uses the dotted spelling (`groups.list`); the v2 enum spelling
 * (`CAP_IAM_GROUPS_LIST`) is accepted wherever a capability is read.
 */
import * as Schema from "effect/Schema"

const crud = <P extends string>(prefix: P) =>
  [`${prefix}.create`, `${prefix}.update`, `${prefix}.list`, `${prefix}.delete`] as const

/** Every capability, in a stable order. */
export const all = [
  ...crud("groups"),
  ...crud("identity"),
  ...crud("roles"),
  ...crud("role_bindings"),
  ...crud("identity_providers"),
  ...crud("account_associations"),
  ...crud("group_invites"),
  ...crud("repo"),
  ...crud("tag"),
  "advisories.list",
  ...crud("subscriptions"),
  "terms.accept",
  "terms.list",
  "identity_providers.scim.manage"
] as const

/** A capability in its dotted spelling. */
export type Capability = typeof all[number]

/**
 * The capabilities that hand access to others, or for good: binding a role (and so mapping a group to one, making
 * someone eligible for one), changing what a role or an identity gives, inviting, letting a provider sign people in
 * or push their groups, associating an outside account, and sending a group's events to a sink. A binding with a
 * condition never gives them (DECISIONS §21: no one delegates what holds only sometimes).
 */
export const delegating: ReadonlySet<Capability> = new Set<Capability>([
  "role_bindings.create",
  "role_bindings.update",
  "roles.create",
  "roles.update",
  "identity.update",
  "group_invites.create",
  "identity_providers.create",
  "identity_providers.update",
  "identity_providers.scim.manage",
  "account_associations.create",
  "account_associations.update",
  "subscriptions.create",
  "subscriptions.update"
])

/** The capability each operation on one kind of resource needs, declared once beside the resource. */
export interface Operations {
  readonly list: Capability
  readonly create?: Capability
  readonly update?: Capability
  readonly delete?: Capability
}

/** The capabilities of a resource that is listed (and read), created, updated and deleted: `<prefix>.<operation>`. */
export const operations = <
  const P extends
    | "groups"
    | "identity"
    | "roles"
    | "role_bindings"
    | "identity_providers"
    | "account_associations"
    | "group_invites"
    | "repo"
    | "tag"
    | "subscriptions"
>(
  prefix: P
) => ({
  list: `${prefix}.list`,
  create: `${prefix}.create`,
  update: `${prefix}.update`,
  delete: `${prefix}.delete`
} as const satisfies Operations)

const iamPrefixes = new Set([
  "groups",
  "identity",
  "roles",
  "role_bindings",
  "identity_providers",
  "account_associations",
  "group_invites"
])

/** Enum names that do not follow the scheme: the protos' events domain names subscriptions in the singular. */
const enumNames: Readonly<Record<string, string>> = { subscriptions: "EVENTS_SUBSCRIPTION" }

/** Capabilities whose enum spelling is not derived from their dotted one. */
const irregular: Readonly<Partial<Record<Capability, string>>> = {
  "identity_providers.scim.manage": "CAP_IAM_SCIM_MANAGE"
}

/** The v2 enum spelling of a capability: `groups.list` is `CAP_IAM_GROUPS_LIST`. */
export const toEnumName = (capability: Capability): string => {
  const named = irregular[capability]
  if (named !== undefined) return named
  const [resource, action] = capability.split(".") as [string, string]
  const name = enumNames[resource] ?? `${iamPrefixes.has(resource) ? "IAM_" : ""}${resource.toUpperCase()}`
  return `CAP_${name}_${action.toUpperCase()}`
}

const byName: ReadonlyMap<string, Capability> = new Map(
  all.flatMap((c) => [[c, c], [toEnumName(c), c]] as const)
)

/** The capability `name` spells (either spelling), or undefined. */
export const fromName = (name: string): Capability | undefined => byName.get(name)

/** True when `name` is a capability in either spelling. */
export const isCapabilityName = (name: unknown): name is string => typeof name === "string" && byName.has(name)

/** A capability given in either spelling, decoded to the dotted spelling. */
export const Capability: Schema.Schema<Capability, string> = Schema.transform(
  Schema.String.pipe(
    Schema.filter(isCapabilityName, {
      message: (issue) => `unknown capability ${JSON.stringify(issue.actual)}`
    })
  ),
  Schema.Literal(...all),
  { strict: true, decode: (s) => byName.get(s)!, encode: (c) => c }
)

/** Distinct capabilities in the canonical order of `all`. */
export const normalize = (capabilities: Iterable<Capability>): Array<Capability> => {
  const set = new Set(capabilities)
  return all.filter((c) => set.has(c))
}

/** What each kind of resource is called where people read it (the console calls groups below an organization folders). */
const kindWords: Readonly<Record<string, string>> = {
  groups: "folders",
  identity: "identities",
  roles: "roles",
  role_bindings: "role bindings",
  identity_providers: "identity providers",
  account_associations: "account associations",
  group_invites: "invites",
  repo: "repos",
  tag: "tags",
  subscriptions: "subscriptions",
  advisories: "advisories",
  terms: "terms"
}

const actionWords: Readonly<Record<string, string>> = {
  list: "list",
  create: "create",
  update: "change",
  delete: "delete",
  accept: "accept"
}

/**
 * What a capability lets one do, as a person says it: `groups.list` is "list folders", `role_bindings.create`
 * "create role bindings"; one this engine does not know (from a newer server) is said as it is spelled.
 */
export const inWords = (name: string): string => {
  const capability = fromName(name)
  if (capability === undefined) return name
  if (capability === "identity_providers.scim.manage") return "manage identity providers' SCIM provisioning"
  const [kind, action] = capability.split(".") as [string, string]
  return `${actionWords[action] ?? action} ${kindWords[kind] ?? kind}`
}
