/**
 * IAM as code (issue 45): an organization as a document of names and paths (folders, custom roles, identities,
 * role bindings, identity providers with their group mappings, subscriptions, the decision vocabulary), read from the engine (`exportOrganization`), compared with it (`plan`) and made true (`apply`),
 * every change through the engine's own services as the caller, so each rule of the API holds for each change as if
 * it were made by hand, and all of them in one transaction or none. The document is the test kit's fixture grown
 * (`@arbor/core/testing/Fixture`): YAML or JSON, e.g.
 *
 * ```yaml
 * organizations:
 *   acme:
 *     folders: { prod: { folders: { web: {} } }, staging: {} }
 *     roles: { deployer: [repo.create, repo.update, repo.list] }
 *     identities:
 *       prod/ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
 *     bindings:
 *       - { identity: prod/ci, role: deployer, group: prod }
 * ```
 *
 * An identity is keyed by its path below the organization (`prod/ci`), or by its name with its folder in `group`
 * (the fixture's spelling). Without `prune`, what the document leaves out is left alone.
 */
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import {
  Aborted,
  type ArborError,
  FailedPrecondition,
  internal,
  InvalidArgument,
  PreconditionViolation
} from "../engine/Errors.js"
import { operation } from "../engine/internal/tracing.js"
import type { Page } from "../engine/Lists.js"
import { orInternal } from "../engine/Repository.js"
import * as Store from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import type * as Subscription from "../events/Subscription.js"
import { Subscriptions } from "../events/Subscriptions.js"
import * as Capability from "./Capability.js"
import type * as ClaimMatch from "./ClaimMatch.js"
import * as Condition from "./Condition.js"
import { DecisionVocabularies } from "./DecisionVocabularies.js"
import type * as DecisionVocabulary from "./DecisionVocabulary.js"
import type * as ExternalGroupRoleMapping from "./ExternalGroupRoleMapping.js"
import { ExternalGroupRoleMappings } from "./ExternalGroupRoleMappings.js"
import type * as Group from "./Group.js"
import { Groups } from "./Groups.js"
import { Identities } from "./Identities.js"
import type * as Identity from "./Identity.js"
import type * as IdentityProvider from "./IdentityProvider.js"
import { IdentityProviders } from "./IdentityProviders.js"
import { ownerRole } from "./internal/ownership.js"
import * as OrganizationDocument from "./OrganizationDocument.js"
import {
  Document,
  type FolderType,
  type IdentityProviderSpec,
  type IdentitySpec,
  type Organization,
  type RoleSpec,
  type SecretFrom
} from "./OrganizationDocument.js"
import type { Principal } from "./Principal.js"
import * as Role from "./Role.js"
import type * as RoleBinding from "./RoleBinding.js"
import { RoleBindings } from "./RoleBindings.js"
import { Roles } from "./Roles.js"

/** One change of a plan, by path (`acme/prod`; a binding as `acme/prod/ci → deployer at acme/prod`). */
export interface Change {
  readonly action: "create" | "update" | "delete"
  readonly kind:
    | "organization"
    | "folder"
    | "role"
    | "identity"
    | "binding"
    | "identityProvider"
    | "mapping"
    | "subscription"
    | "decisions"
  readonly path: string
  /** What changes, for an update (`+repo.delete -repo.list`, `description`). */
  readonly detail?: string | undefined
}

/** What applying a document does, in the order it is done; empty when the organizations are as it says. */
export interface Plan {
  readonly changes: ReadonlyArray<Change>
  /**
   * The organizations as the plan read them: passed back to `apply`, it applies only if none of what the plan read
   * changed meanwhile (ABORTED otherwise), so what is applied is what was reviewed.
   */
  readonly etag: string
}

/** How to apply. */
export interface Options {
  /** Delete what the document leaves out (folders, roles, identities, bindings of its organizations). */
  readonly prune?: boolean | undefined
  /**
   * Answer the plan without applying it (AIP-163): each change is made, as the caller, and all undone, so what the
   * caller may not do, or what the store refuses, is refused as the apply would be.
   */
  readonly validateOnly?: boolean | undefined
  /** Apply only if the organizations are as the plan with this `etag` read them. */
  readonly etag?: string | undefined
  /**
   * Reads a client secret where the document says it is (`secretFrom`); `field` is the document path, for the error.
   * Without it, a document that names a secret is refused: where a secret may be read from is the caller's to say
   * (`arbor` reads its own environment and files and sends what it read; the server reads its own only for
   * `ARBOR_SEED_FILE`, never for a request, whose document could name any of the server's files). Undefined for a
   * plan whose caller could not read it: the secret is then unknown, not compared, and an apply is refused.
   */
  readonly secretOf?:
    | ((from: SecretFrom, field: string) => Effect.Effect<string | undefined, InvalidArgument>)
    | undefined
}

/** An organization as the caller sees it, each resource by its path below it (the organization's own is ""). */
interface State {
  readonly org: Group.Group | undefined
  readonly folders: Map<string, Group.Group>
  readonly roles: Map<string, Role.Role>
  readonly identities: Map<string, Identity.Identity>
  /** Bindings by `bindingKey`, each with the paths and role name the document writes. */
  readonly bindings: Map<string, BoundAs>
  readonly providers: Map<string, IdentityProvider.IdentityProvider>
  /** Each provider's group mappings by `mappingKey`, by the provider's path. */
  readonly mappings: Map<string, Map<string, MappedAs>>
  /** Subscriptions by `subscriptionKey`, each with its folder's path. */
  readonly subscriptions: Map<string, { readonly group: string; readonly subscription: Subscription.Subscription }>
  /** The organization's decision vocabulary (version 0 when it has none). */
  readonly vocabulary: DecisionVocabulary.DecisionVocabulary | undefined
  /** A role's name by its uid: the organization's custom roles and the built-in ones. */
  readonly roleNames: Map<string, string>
  /** A group's path by its uid (the organization's own is ""). */
  readonly groupPaths: Map<string, string>
}

/** A group mapping as the document writes it: its external group, role name and scope path. */
interface MappedAs {
  readonly externalGroup: string
  readonly role: string
  readonly scope: string
  readonly mapping: ExternalGroupRoleMapping.ExternalGroupRoleMapping
}

/** A binding as the document writes it: its identity's and group's paths and its role's name. */
interface BoundAs {
  readonly identity: string
  readonly role: string
  readonly group: string
  readonly binding: RoleBinding.RoleBinding
}

/** An organization's steps, the uids of what exists by path, and the etag of what the plan read. */
interface Planned {
  readonly existing: Map<string, Uid.Uid>
  readonly steps: ReadonlyArray<Step>
  readonly etag: string
}

/** What stands for a client secret a plan's caller could not read: applied and undone, never kept. */
const unknownSecret = "unknown: not read for this plan"

/** Ends a validateOnly apply's transaction, undoing its changes, with the plan they made. */
class ValidatedOnly extends Data.TaggedError("ValidatedOnly")<{ readonly plan: Plan }> {}

/** What a plan read of an organization, as one value: each resource's uid and last update. */
const etagOf = (state: State) =>
  [
    ...(state.org === undefined ? [] : [state.org]),
    ...state.folders.values(),
    ...state.roles.values(),
    ...state.identities.values(),
    ...[...state.bindings.values()].map((bound) => bound.binding),
    ...state.providers.values(),
    ...[...state.subscriptions.values()].map(({ subscription }) => subscription)
  ].map((resource) => `${resource.uid}@${resource.updateTime.epochMillis}`).concat(
    state.vocabulary === undefined ? [] : [`${state.vocabulary.uid}#${state.vocabulary.version}`],
    [...state.mappings.values()].flatMap((mapped) => [...mapped.values()].map(({ mapping }) => mapping.uid))
  ).sort().join(";")

/** A change, and how it is made: given the uids of the paths made so far, it records those it makes. */
type Step = RunStep | BatchStep

/** A change made by itself. */
interface RunStep {
  readonly change: Change
  readonly run: (uids: Map<string, Uid.Uid>) => Effect.Effect<unknown, ArborError>
  /** The binding a delete removes. */
  readonly binding?: RoleBinding.RoleBinding | undefined
  /** Where in the document the change comes from: the engine's refusal of a field is named below it. */
  readonly at?: string | undefined
  readonly batch?: undefined
}

/** A create made in one write with the creates of its kind beside it in the plan (`createBatch`). */
interface BatchStep {
  readonly change: Change
  readonly batch: Batched
  readonly binding?: undefined
}

type Batched = FolderCreate | IdentityCreate | BindingCreate

/** A folder to create: its path and its parent's below the organization, and the create's body. */
interface FolderCreate {
  readonly _tag: "folder"
  readonly path: string
  readonly parent: string
  readonly input: { readonly name: string; readonly description?: string }
}

/** An identity to create, by its path: its group, the create's body and its place in the document, once known. */
interface IdentityCreate {
  readonly _tag: "identity"
  readonly path: string
  readonly resolve: (uids: Map<string, Uid.Uid>) => Effect.Effect<{
    readonly groupUid: Uid.Uid
    readonly input: unknown
    readonly at: string
  }, ArborError>
}

/** A binding to create: its group and the create's body, once the uids of what the apply made are known. */
interface BindingCreate {
  readonly _tag: "binding"
  readonly resolve: (uids: Map<string, Uid.Uid>) => Effect.Effect<{
    readonly groupUid: Uid.Uid
    readonly input: {
      readonly identityUid: Uid.Uid
      readonly roleUid: Uid.Uid
      readonly startTime?: string
      readonly expireTime?: string
    }
  }, ArborError>
}

/** A vocabulary's words, as a document writes them. */
const wordsOf = (vocabulary: DecisionVocabulary.Vocabulary | undefined): DecisionVocabulary.Vocabulary => ({
  subjects: vocabulary?.subjects ?? {},
  actions: vocabulary?.actions ?? {},
  resources: vocabulary?.resources ?? {}
})

/** A value as JSON with its object keys sorted: two vocabularies are the same when theirs are. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, inner: unknown) =>
    typeof inner === "object" && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner)

/** True for a vocabulary without a word. */
const isEmpty = (words: DecisionVocabulary.Vocabulary) =>
  Object.keys(words.subjects).length + Object.keys(words.actions).length + Object.keys(words.resources).length === 0

const bindingKey = (identity: string, role: string, group: string) => `${identity}\n${role}\n${group}`
const mappingKey = (externalGroup: string, role: string, scope: string) => `${externalGroup}\n${role}\n${scope}`
const subscriptionKey = (sink: string, group: string) => `${group}\n${sink}`
/** `steps` in order, each run of consecutive creates of one kind in a batch as one array of them. */
const runsOf = (steps: ReadonlyArray<Step>): Array<RunStep | Array<Batched>> => {
  const runs: Array<RunStep | Array<Batched>> = []
  for (const step of steps) {
    const last = runs.at(-1)
    if (step.batch === undefined) runs.push(step)
    else if (Array.isArray(last) && last[0]!._tag === step.batch._tag) last.push(step.batch)
    else runs.push([step.batch])
  }
  return runs
}

/** The folder of a path below the organization ("" for the organization itself), and the last name. */
const split = (path: string) => {
  const at = path.lastIndexOf("/")
  return { folder: at < 0 ? "" : path.slice(0, at), name: path.slice(at + 1) }
}

const joined = (parent: string, name: string) => parent === "" ? name : `${parent}/${name}`
const byKey = <A>(record: { readonly [key: string]: A } | undefined): Array<readonly [string, A]> =>
  Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** Every page of a list. */
const all = <A>(list: (pageToken: string | undefined) => Effect.Effect<Page<A>, ArborError>) =>
  Effect.gen(function*() {
    const items: Array<A> = []
    let token: string | undefined = undefined
    do {
      const page: Page<A> = yield* list(token)
      items.push(...page.items)
      token = page.nextPageToken
    } while (token !== undefined)
    return items
  })

/** The claim match an identity's spec asks for: the shorthand's issuer and subject, or the claim match in full. */
const claimMatchOf = (spec: typeof IdentitySpec.Type): ClaimMatch.ClaimMatch =>
  spec.claimMatch ?? { issuer: spec.issuer, subject: spec.subject }

/** A claim match as a comparable string: its fields sorted, absent ones left out. */
const claimKey = (claimMatch: ClaimMatch.ClaimMatch | undefined) =>
  JSON.stringify(
    claimMatch,
    (_key, value: unknown) =>
      value !== null && typeof value === "object" && !Array.isArray(value)
        ? Object.fromEntries(
          Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))
        )
        : value
  )

/** The path of a client secret written in the document itself, which is refused: it would live in a repository. */
const inlineSecret = (input: unknown): string | undefined => {
  const entries = (value: unknown): Array<[string, unknown]> =>
    typeof value === "object" && value !== null && !Array.isArray(value) ? Object.entries(value) : []
  const organizations = entries(input).find(([key]) => key === "organizations")?.[1]
  for (const [name, organization] of entries(organizations)) {
    const providers = entries(organization).find(([key]) => key === "identityProviders")?.[1]
    for (const [key, provider] of entries(providers)) {
      if (entries(provider).some(([field]) => field === "clientSecret")) {
        return `organizations.${name}.identityProviders.${key}.clientSecret`
      }
    }
  }
  return undefined
}

/**
 * Refuses a document in which two identity providers read one secret (one variable, one file): applied, the one
 * provider's secret would be sent to the other's issuer (DECISIONS §20).
 */
const oneSecretEach = (document: Document): Effect.Effect<Document, InvalidArgument> => {
  const readers = new Map<string, string>()
  for (const [name, organization] of byKey(document.organizations)) {
    for (const [key, provider] of byKey(organization.identityProviders)) {
      if (provider.secretFrom === undefined) continue
      const source = OrganizationDocument.sourceOf(provider.secretFrom)
      const field = `organizations.${name}.identityProviders.${key}.secretFrom`
      const first = readers.get(source)
      if (first !== undefined) {
        return InvalidArgument.field(
          field,
          `reads the secret that ${first} reads (${source}): each identity provider's secret is its own`
        )
      }
      readers.set(source, field)
    }
  }
  return Effect.succeed(document)
}

/**
 * A document as a caller gives it: YAML parsed or JSON, unknown keys refused by their path, no secret inline, no
 * secret read by two providers.
 */
const decodeDocument = (input: unknown) => {
  const secret = inlineSecret(input)
  const resources = OrganizationDocument.resourcesOf(input)
  return resources > OrganizationDocument.maxResources
    ? InvalidArgument.field(
      "organizations",
      `declares ${resources} resources; a document declares at most ${OrganizationDocument.maxResources}: split it`
    )
    : secret !== undefined
    ? InvalidArgument.field(
      secret,
      "must not be written in the document: give secretFrom: {env: NAME} or {file: path}, read where it is applied"
    )
    : Schema.decodeUnknown(Document, { errors: "all", onExcessProperty: "error" })(input).pipe(
      Effect.mapError((error) => Validation.fromParseError(error)),
      Effect.flatMap(oneSecretEach)
    )
}

/** A role written as its capabilities alone. */
const isList = (spec: typeof RoleSpec.Type): spec is ReadonlyArray<string> => Array.isArray(spec)

/** The document place of key `name` below `at`: `.prod`, or `["Bad Name"]` for a key that is not a plain word. */
const placeOf = (at: string, name: string) =>
  /^[A-Za-z0-9_-]+$/.test(name) ? `${at}.${name}` : `${at}[${JSON.stringify(name)}]`

const isName = Schema.is(Validation.Name)

/** The document place of the first folder among `folders` (at `at`) whose name is no name, if any. */
const misnamedFolder = (
  folders: { readonly [name: string]: FolderType } | undefined,
  at: string
): string | undefined => {
  for (const [name, folder] of Object.entries(folders ?? {})) {
    const place = placeOf(`${at}.folders`, name)
    const below = isName(name) ? misnamedFolder(folder.folders, place) : place
    if (below !== undefined) return below
  }
  return undefined
}

/** The folders of a document's organization by path, parents first. */
const foldersOf = (organization: Organization) => {
  const folders = new Map<string, FolderType>()
  const walk = (prefix: string, children: { readonly [name: string]: FolderType } | undefined) => {
    for (const [name, folder] of byKey(children)) {
      folders.set(joined(prefix, name), folder)
      walk(joined(prefix, name), folder.folders)
    }
  }
  walk("", organization.folders)
  return folders
}

/** Builds the Declarative service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const store = yield* Store.Store
  const groups = yield* Groups
  const roles = yield* Roles
  const identities = yield* Identities
  const bindings = yield* RoleBindings
  const providers = yield* IdentityProviders
  const mappings = yield* ExternalGroupRoleMappings
  const subscriptions = yield* Subscriptions
  const vocabularies = yield* DecisionVocabularies

  /** The organization `name` and what is in it, as `principal` may list it. */
  const stateOf = (principal: Principal, name: string): Effect.Effect<State, ArborError> =>
    Effect.gen(function*() {
      const pathOf = new Map<string, string>()
      const state: State = {
        org: undefined,
        folders: new Map(),
        roles: new Map(),
        identities: new Map(),
        bindings: new Map(),
        providers: new Map(),
        mappings: new Map(),
        subscriptions: new Map(),
        vocabulary: undefined,
        roleNames: new Map(Role.builtIns.map((r) => [r.uid, r.name])),
        groupPaths: pathOf
      }
      const [org] = (yield* groups.list(principal, { inRoot: true, name, pageSize: 1 })).items
      if (org === undefined) return state
      pathOf.set(org.uid, "")
      const pathOfParent = (uid: Uid.Uid) => pathOf.get(Uid.parentOrNull(uid) ?? "")
      const below = yield* all((pageToken) =>
        groups.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
      )
      for (const group of [...below].sort((a, b) => Uid.depth(a.uid) - Uid.depth(b.uid))) {
        const parent = pathOfParent(group.uid)
        if (parent === undefined) continue
        pathOf.set(group.uid, joined(parent, group.name))
        state.folders.set(joined(parent, group.name), group)
      }
      const custom = yield* all((pageToken) => roles.list(principal, { childrenOf: org.uid, pageSize: 200, pageToken }))
      for (const role of custom) {
        state.roles.set(role.name, role)
        state.roleNames.set(role.uid, role.name)
      }
      const identityPath = new Map<string, string>()
      const found = yield* all((pageToken) =>
        identities.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
      )
      for (const identity of found) {
        const parent = pathOfParent(identity.uid)
        if (parent === undefined) continue
        identityPath.set(identity.uid, joined(parent, identity.name))
        state.identities.set(joined(parent, identity.name), identity)
      }
      const bound = yield* all((pageToken) =>
        bindings.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
      )
      for (const binding of bound) {
        const group = pathOfParent(binding.uid)
        const identity = identityPath.get(binding.identity.uid)
        const role = state.roleNames.get(binding.role.uid)
        // A binding of an identity or a role from outside the organization is not the document's to manage.
        if (group === undefined || identity === undefined || role === undefined) continue
        state.bindings.set(bindingKey(identity, role, group), { identity, role, group, binding })
      }
      const providerPath = new Map<string, string>()
      for (
        const provider of yield* all((pageToken) =>
          providers.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
        )
      ) {
        const parent = pathOfParent(provider.uid)
        if (parent === undefined) continue
        providerPath.set(provider.uid, joined(parent, provider.name))
        state.providers.set(joined(parent, provider.name), provider)
      }
      for (
        const mapping of yield* all((pageToken) =>
          mappings.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
        )
      ) {
        const provider = providerPath.get(mapping.identityProviderUid)
        const role = state.roleNames.get(mapping.roleUid)
        const scope = pathOf.get(mapping.scope)
        // A mapping to a role or a scope from outside the organization is not the document's to manage.
        if (provider === undefined || role === undefined || scope === undefined) continue
        const mapped = state.mappings.get(provider) ?? new Map<string, MappedAs>()
        mapped.set(mappingKey(mapping.externalGroupId, role, scope), {
          externalGroup: mapping.externalGroupId,
          role,
          scope,
          mapping
        })
        state.mappings.set(provider, mapped)
      }
      for (
        const subscription of yield* all((pageToken) =>
          subscriptions.list(principal, { descendantsOf: org.uid, pageSize: 200, pageToken })
        )
      ) {
        const group = pathOfParent(subscription.uid)
        if (group === undefined) continue
        state.subscriptions.set(subscriptionKey(subscription.sink, group), { group, subscription })
      }
      return { ...state, org, vocabulary: yield* vocabularies.get(principal, org.uid) }
    })

  /** The folders below `prefix` as the document writes them. */
  const folderTree = (state: State, prefix: string): Record<string, FolderType> | undefined => {
    const children = [...state.folders].filter(([path]) =>
      path.startsWith(prefix) && path !== prefix && !path.slice(prefix.length).includes("/")
    )
    if (children.length === 0) return undefined
    return Object.fromEntries(
      children.sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, folder]) => {
        const below = folderTree(state, `${path}/`)
        return [path.slice(prefix.length), {
          ...(folder.description === "" ? {} : { description: folder.description }),
          ...(below === undefined ? {} : { folders: below })
        }]
      })
    )
  }

  /**
   * True when `provider`'s client secret is `candidate`, or `unknown` when the caller may not compare it (only those
   * who may change a provider may): a reviewer who may only read plans what it can see, and its export names a
   * secret to supply rather than make the provider a public client.
   */
  const secretIs = (
    principal: Principal,
    provider: IdentityProvider.IdentityProvider,
    candidate: string,
    unknown: boolean
  ) =>
    providers.clientSecretIs(principal, provider.uid, candidate).pipe(
      Effect.catchTag("PermissionDenied", () => Effect.succeed(unknown))
    )

  /** A provider as the document writes it; its secret, which cannot be read, as a variable to supply. */
  const providerSpec = (
    state: State,
    organization: string,
    path: string,
    secret: boolean
  ): typeof IdentityProviderSpec.Type => {
    const provider = state.providers.get(path)!
    const { oidc } = provider
    const mapped = [...(state.mappings.get(path)?.values() ?? [])].sort((a, b) =>
      mappingKey(a.externalGroup, a.role, a.scope) < mappingKey(b.externalGroup, b.role, b.scope) ? -1 : 1
    )
    const folder = split(path).folder
    return {
      ...(provider.description === "" ? {} : { description: provider.description }),
      defaultRole: state.roleNames.get(provider.defaultRole) ?? provider.defaultRole,
      issuer: oidc.issuer,
      clientId: oidc.clientId,
      ...(secret ? { secretFrom: { env: OrganizationDocument.secretVariable(organization, path) } } : {}),
      ...(oidc.additionalScopes.length === 0 ? {} : { additionalScopes: oidc.additionalScopes }),
      ...(oidc.pkceEnabled ? { pkce: true } : {}),
      ...(oidc.groupsClaim === "" ? {} : { groupsClaim: oidc.groupsClaim }),
      ...(mapped.length === 0 ? {} : {
        mappings: mapped.map(({ externalGroup, role, scope }) => ({
          externalGroup,
          role,
          ...(scope === folder ? {} : { scope })
        }))
      })
    }
  }

  /** The organization `name` as a document, in a stable order: exported, applied and exported again, the same. */
  const exportOrganization = (principal: Principal, name: string): Effect.Effect<Document, ArborError> =>
    Effect.gen(function*() {
      const state = yield* stateOf(principal, name)
      if (state.org === undefined) {
        return yield* InvalidArgument.field("organization", `is no organization the caller may list: ${name}`)
      }
      const folders = folderTree(state, "")
      const managed = [...state.identities].filter(([, identity]) => identity.claimMatch !== undefined)
      const organization: Organization = {
        ...(state.org.description === "" ? {} : { description: state.org.description }),
        ...(folders === undefined ? {} : { folders }),
        ...(state.roles.size === 0 ? {} : {
          roles: Object.fromEntries(
            byKey(Object.fromEntries(state.roles)).map(([roleName, role]) => {
              const capabilities = [...role.capabilities].sort()
              return [
                roleName,
                role.description === "" ? capabilities : { description: role.description, capabilities }
              ]
            })
          )
        }),
        ...(managed.length === 0 ? {} : {
          identities: Object.fromEntries(
            byKey(Object.fromEntries(managed)).map(([path, identity]) => {
              const claimMatch = identity.claimMatch!
              const shorthand =
                claimKey(claimMatch) === claimKey({ issuer: claimMatch.issuer, subject: claimMatch.subject })
              return [path, {
                ...(identity.description === "" ? {} : { description: identity.description }),
                ...(shorthand ? { issuer: claimMatch.issuer, subject: claimMatch.subject } : { claimMatch })
              }]
            })
          )
        }),
        ...(state.bindings.size === 0 ? {} : {
          bindings: [...state.bindings].sort(([a], [b]) => (a < b ? -1 : 1)).map((
            [, { binding, group, identity, role }]
          ) => ({
            identity,
            role,
            ...(group === "" ? {} : { group }),
            ...(binding.startTime === null ? {} : { starts: binding.startTime }),
            ...(binding.expireTime === null ? {} : { expires: binding.expireTime }),
            ...(binding.condition === null ? {} : { condition: binding.condition })
          }))
        }),
        ...(isEmpty(wordsOf(state.vocabulary)) ? {} : { decisions: wordsOf(state.vocabulary) }),
        ...(state.subscriptions.size === 0 ? {} : {
          subscriptions: [...state.subscriptions].sort(([a], [b]) => (a < b ? -1 : 1)).map((
            [, { group, subscription }]
          ) => ({
            sink: subscription.sink,
            ...(group === "" ? {} : { group })
          }))
        }),
        ...(state.providers.size === 0 ? {} : {
          identityProviders: Object.fromEntries(
            yield* Effect.forEach(
              byKey(Object.fromEntries(state.providers)),
              ([path, provider]) =>
                Effect.map(
                  secretIs(principal, provider, "", false),
                  (none) => [path, providerSpec(state, name, path, !none)]
                )
            )
          )
        })
      }
      return { organizations: { [name]: organization } }
    })

  /** The steps that make organization `name` as `wanted` says; `at` is its path in the document. */
  const stepsOf = (
    principal: Principal,
    name: string,
    wanted: Organization,
    options: Options
  ): Effect.Effect<Planned, ArborError> =>
    Effect.gen(function*() {
      const at = `organizations.${name}`
      const prune = options.prune === true
      const state = yield* stateOf(principal, name)
      const creates: Array<Step> = []
      const updates: Array<Step> = []
      const deletes: Array<Step> = []
      /** With `prune`, a delete of each of `existing` that `wanted` leaves out. */
      const pruning = <A>(
        existing: Iterable<readonly [string, A]>,
        wanted: { readonly has: (key: string) => boolean },
        kind: Change["kind"],
        pathOf: (key: string, resource: A) => string,
        remove: (resource: A) => Effect.Effect<unknown, ArborError>,
        binding?: (resource: A) => RoleBinding.RoleBinding
      ) => {
        if (!prune) return
        for (const [key, resource] of existing) {
          if (wanted.has(key)) continue
          deletes.push({
            change: { action: "delete", kind, path: pathOf(key, resource) },
            run: () => remove(resource),
            binding: binding?.(resource)
          })
        }
      }
      const full = (path: string) => path === "" ? name : joined(name, path)
      const uidOf = (uids: Map<string, Uid.Uid>, path: string) =>
        Effect.suspend(() => {
          const uid = uids.get(path)
          return uid === undefined
            ? internal(`the plan made no ${path}`, "PLAN")
            : Effect.succeed(uid)
        })
      const description = (text: string | undefined) => text === undefined ? {} : { description: text }

      if (state.org === undefined) {
        creates.push({
          change: { action: "create", kind: "organization", path: name },
          run: (uids) =>
            Effect.map(
              groups.createRoot(principal, { name, ...description(wanted.description) }),
              (org) => void uids.set("", org.uid)
            )
        })
      } else if ((wanted.description ?? "") !== state.org.description) {
        const org = state.org
        updates.push({
          change: { action: "update", kind: "organization", path: name, detail: "description" },
          run: () => groups.update(principal, org.uid, { description: wanted.description ?? "" }, "description")
        })
      }

      const misnamed = misnamedFolder(wanted.folders, at)
      if (misnamed !== undefined) {
        return yield* InvalidArgument.field(
          misnamed,
          "is no folder name: lowercase letters, digits, spaces, dots, underscores and dashes, at most 63, with no " +
            "space at either end and not only dots"
        )
      }
      const folders = foldersOf(wanted)
      /** A folder by path, as the document names it ("" for the organization). */
      const folderNamed = (path: string) => path === "" || folders.has(path) || (state.folders.has(path) && !prune)
      for (const [path, folder] of folders) {
        const current = state.folders.get(path)
        const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ""
        const folderName = path.slice(parent === "" ? 0 : parent.length + 1)
        if (current === undefined) {
          creates.push({
            change: { action: "create", kind: "folder", path: full(path) },
            batch: { _tag: "folder", path, parent, input: { name: folderName, ...description(folder.description) } }
          })
        } else if ((folder.description ?? "") !== current.description) {
          updates.push({
            change: { action: "update", kind: "folder", path: full(path), detail: "description" },
            run: () => groups.update(principal, current.uid, { description: folder.description ?? "" }, "description")
          })
        }
      }

      const wantedRoles = new Set<string>()
      for (const [roleName, spec] of byKey(wanted.roles)) {
        const listed = isList(spec) ? spec : spec.capabilities
        const capabilities: Array<Capability.Capability> = []
        for (const [i, written] of listed.entries()) {
          const capability = Capability.fromName(written)
          if (capability === undefined) {
            const field = `${at}.roles.${roleName}${isList(spec) ? "" : ".capabilities"}[${i}]`
            return yield* InvalidArgument.field(field, `is not a capability: ${written}`)
          }
          if (!capabilities.includes(capability)) capabilities.push(capability)
        }
        capabilities.sort()
        if (Role.builtInByName(roleName) !== undefined) {
          return yield* InvalidArgument.field(`${at}.roles.${roleName}`, "is the name of a built-in role")
        }
        wantedRoles.add(roleName)
        const roleDescription = isList(spec) ? "" : spec.description ?? ""
        const current = state.roles.get(roleName)
        if (current === undefined) {
          creates.push({
            change: { action: "create", kind: "role", path: full(roleName) },
            run: (uids) =>
              Effect.flatMap(uidOf(uids, ""), (org) =>
                Effect.map(
                  roles.create(principal, org, { name: roleName, description: roleDescription, capabilities }),
                  (created) => void uids.set(`role:${roleName}`, created.uid)
                ))
          })
          continue
        }
        const had = new Set<string>(current.capabilities)
        const detail = [
          ...capabilities.filter((c) => !had.has(c)).map((c) => `+${c}`),
          ...[...current.capabilities].sort().filter((c) => !capabilities.includes(c)).map((c) => `-${c}`),
          ...(roleDescription === current.description ? [] : ["description"])
        ]
        if (detail.length > 0) {
          updates.push({
            change: { action: "update", kind: "role", path: full(roleName), detail: detail.join(" ") },
            run: () =>
              roles.update(
                principal,
                current.uid,
                { description: roleDescription, capabilities },
                "description,capabilities"
              )
          })
        }
      }

      const wantedIdentities = new Map<string, typeof IdentitySpec.Type>()
      for (const [key, spec] of byKey(wanted.identities)) {
        const path = spec.group === undefined ? key : joined(spec.group, key)
        const folder = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ""
        const identityName = path.slice(folder === "" ? 0 : folder.length + 1)
        if (!folderNamed(folder)) {
          return yield* InvalidArgument.field(`${at}.identities.${key}`, `is in no folder of the document: ${folder}`)
        }
        if (wantedIdentities.has(path)) {
          return yield* InvalidArgument.field(`${at}.identities.${key}`, `names the identity ${path} twice`)
        }
        wantedIdentities.set(path, spec)
        const claimMatch = claimMatchOf(spec)
        const current = state.identities.get(path)
        if (current === undefined) {
          creates.push({
            change: { action: "create", kind: "identity", path: full(path) },
            batch: {
              _tag: "identity",
              path,
              resolve: (uids) =>
                Effect.map(uidOf(uids, folder), (groupUid) => ({
                  groupUid,
                  input: { name: identityName, ...description(spec.description), claimMatch },
                  at: `${at}.identities.${key}`
                }))
            }
          })
        } else if (
          claimKey(claimMatch) !== claimKey(current.claimMatch) || (spec.description ?? "") !== current.description
        ) {
          updates.push({
            change: { action: "update", kind: "identity", path: full(path), detail: "claimMatch, description" },
            run: () =>
              identities.update(
                principal,
                current.uid,
                { description: spec.description ?? "", claimMatch },
                "description,claimMatch"
              )
          })
        }
      }

      /** A role by name, as a binding, a provider's default role or a mapping names it; undefined if none. */
      const roleNamed = (roleName: string) =>
        Role.builtInByName(roleName) !== undefined || wantedRoles.has(roleName) ||
        (state.roles.has(roleName) && !prune)
      const roleUid = (uids: Map<string, Uid.Uid>, roleName: string) =>
        Effect.suspend(() => {
          const known = Role.builtInByName(roleName)?.uid ?? state.roles.get(roleName)?.uid
          return known === undefined ? uidOf(uids, `role:${roleName}`) : Effect.succeed(known)
        })

      const wantedProviders = new Set<string>()
      for (const [key, spec] of byKey(wanted.identityProviders)) {
        const field = `${at}.identityProviders.${key}`
        const path = spec.group === undefined ? key : joined(spec.group, key)
        const { folder, name: providerName } = split(path)
        if (!folderNamed(folder)) {
          return yield* InvalidArgument.field(field, `is in no folder of the document: ${folder}`)
        }
        if (wantedProviders.has(path)) {
          return yield* InvalidArgument.field(field, `names the identity provider ${path} twice`)
        }
        wantedProviders.add(path)
        if (!roleNamed(spec.defaultRole)) {
          return yield* InvalidArgument.field(`${field}.defaultRole`, `names no role: ${spec.defaultRole}`)
        }
        const clientSecret = spec.secretFrom === undefined ? "" : options.secretOf === undefined
          ? yield* InvalidArgument.field(
            `${field}.secretFrom`,
            "cannot be read here: apply the document with arbor, which reads it and sends what it read"
          )
          : yield* options.secretOf(spec.secretFrom, `${field}.secretFrom`)
        // Where the secret was read, shown in the plan: a reviewer sees which variable or file a change would send.
        const secretSource = spec.secretFrom === undefined
          ? undefined
          : `clientSecret from ${OrganizationDocument.sourceOf(spec.secretFrom).replace(":", " ")}`
        // A plan is made by applying and undoing: an unknown secret stands in as a placeholder that is never kept.
        const oidc = {
          issuer: spec.issuer,
          clientId: spec.clientId,
          clientSecret: clientSecret ?? unknownSecret,
          additionalScopes: spec.additionalScopes ?? [],
          pkceEnabled: spec.pkce ?? false,
          groupsClaim: spec.groupsClaim ?? ""
        }
        const fields = (uids: Map<string, Uid.Uid>) =>
          Effect.gen(function*() {
            if (clientSecret === undefined && options.validateOnly !== true) {
              return yield* InvalidArgument.field(
                "secretFrom",
                "was not read: a plan may leave it unknown, an apply not"
              )
            }
            return { description: spec.description ?? "", defaultRole: yield* roleUid(uids, spec.defaultRole), oidc }
          })
        const current = state.providers.get(path)
        if (current === undefined) {
          creates.push({
            at: field,
            change: {
              action: "create",
              kind: "identityProvider",
              path: full(path),
              ...(secretSource === undefined ? {} : { detail: secretSource })
            },
            run: (uids) =>
              Effect.gen(function*() {
                const parent = yield* uidOf(uids, folder)
                const created = yield* providers.create(principal, parent, {
                  name: providerName,
                  ...(yield* fields(uids))
                })
                uids.set(`provider:${path}`, created.uid)
              })
          })
        } else {
          const now = current.oidc
          const detail = [
            ...((spec.description ?? "") === current.description ? [] : ["description"]),
            ...(spec.defaultRole === state.roleNames.get(current.defaultRole) ? [] : ["defaultRole"]),
            ...(oidc.issuer === now.issuer ? [] : ["issuer"]),
            ...(oidc.clientId === now.clientId ? [] : ["clientId"]),
            // An unknown secret (a plan's caller could not read it) is not compared.
            ...(clientSecret === undefined || (yield* secretIs(principal, current, clientSecret, true))
              ? []
              : [secretSource ?? "clientSecret"]),
            ...(oidc.additionalScopes.join(" ") === now.additionalScopes.join(" ") ? [] : ["additionalScopes"]),
            ...(oidc.pkceEnabled === now.pkceEnabled ? [] : ["pkce"]),
            ...(oidc.groupsClaim === now.groupsClaim ? [] : ["groupsClaim"])
          ]
          if (detail.length > 0) {
            updates.push({
              at: field,
              change: { action: "update", kind: "identityProvider", path: full(path), detail: detail.join(", ") },
              run: (uids) =>
                Effect.flatMap(
                  fields(uids),
                  (patch) => providers.update(principal, current.uid, patch, "description,defaultRole,oidc")
                )
            })
          }
        }
        const had = state.mappings.get(path) ?? new Map<string, MappedAs>()
        const wantedMappings = new Set<string>()
        for (const [j, mapping] of (spec.mappings ?? []).entries()) {
          const where = `${field}.mappings[${j}]`
          if (!roleNamed(mapping.role)) {
            return yield* InvalidArgument.field(`${where}.role`, `names no role: ${mapping.role}`)
          }
          const scope = mapping.scope ?? folder
          if (!folderNamed(scope)) {
            return yield* InvalidArgument.field(`${where}.scope`, `names no folder of the document: ${scope}`)
          }
          if (!(folder === "" || scope === folder || scope.startsWith(`${folder}/`))) {
            return yield* InvalidArgument.field(
              `${where}.scope`,
              `is not at or below the provider's folder ${folder}`
            )
          }
          const key = mappingKey(mapping.externalGroup, mapping.role, scope)
          if (wantedMappings.has(key)) {
            continue
          }
          wantedMappings.add(key)
          if (had.has(key)) continue
          creates.push({
            at: where,
            change: {
              action: "create",
              kind: "mapping",
              path: `${full(path)}: ${mapping.externalGroup} → ${mapping.role} at ${full(scope)}`
            },
            run: (uids) =>
              Effect.gen(function*() {
                const provider = current?.uid ?? (yield* uidOf(uids, `provider:${path}`))
                yield* mappings.create(principal, provider, {
                  externalGroupId: mapping.externalGroup,
                  roleUid: yield* roleUid(uids, mapping.role),
                  scope: yield* uidOf(uids, scope)
                })
              })
          })
        }
        pruning(
          had,
          wantedMappings,
          "mapping",
          (_, { externalGroup, role, scope }) => `${full(path)}: ${externalGroup} → ${role} at ${full(scope)}`,
          ({ mapping }) => mappings.delete(principal, mapping.uid)
        )
      }

      const wantedBindings = new Set<string>()
      /** The document's identities' paths by their last name. */
      const pathsByName = new Map<string, Array<string>>()
      for (const path of wantedIdentities.keys()) {
        const last = path.slice(path.lastIndexOf("/") + 1)
        pathsByName.set(last, [...(pathsByName.get(last) ?? []), path])
      }
      for (const [i, binding] of (wanted.bindings ?? []).entries()) {
        const where = `${at}.bindings[${i}]`
        // An identity by its path, or by its name when one identity of the document has it (the fixture's way).
        const named = pathsByName.get(binding.identity) ?? []
        const identity = wantedIdentities.has(binding.identity) || (state.identities.has(binding.identity) && !prune)
          ? binding.identity
          : named.length === 1
          ? named[0]!
          : undefined
        if (identity === undefined) {
          return yield* InvalidArgument.field(
            `${where}.identity`,
            named.length > 1
              ? `names ${named.length} identities of the document: give its path (${named.join(", ")})`
              : `names no identity of the document: ${binding.identity}`
          )
        }
        if (!roleNamed(binding.role)) {
          return yield* InvalidArgument.field(`${where}.role`, `names no role: ${binding.role}`)
        }
        const group = binding.group ?? ""
        if (!folderNamed(group)) {
          return yield* InvalidArgument.field(`${where}.group`, `names no folder of the document: ${group}`)
        }
        const key = bindingKey(identity, binding.role, group)
        if (wantedBindings.has(key)) continue
        wantedBindings.add(key)
        const window = { startTime: binding.starts ?? null, expireTime: binding.expires ?? null }
        const iso = (time: DateTime.Utc | null) => time === null ? null : DateTime.formatIso(time)
        const current = state.bindings.get(key)
        const condition = binding.condition === undefined
          ? null
          : Schema.encodeSync(Condition.Condition)(binding.condition)
        if (current !== undefined) {
          // Its window and condition are the binding's to change: an update, not another binding.
          const was = current.binding.condition
          const changed = [
            ...(["startTime", "expireTime"] as const).filter((field) =>
              current.binding[field]?.epochMillis !== window[field]?.epochMillis
            ),
            ...((was === null ? null : JSON.stringify(Schema.encodeSync(Condition.Condition)(was))) ===
                (condition === null ? null : JSON.stringify(condition))
              ? []
              : ["condition" as const])
          ]
          if (changed.length > 0) {
            const uid = current.binding.uid
            const [first] = changed
            updates.push({
              at: `${where}.${first === "expireTime" ? "expires" : first === "startTime" ? "starts" : "condition"}`,
              change: {
                action: "update",
                kind: "binding",
                path: `${full(identity)} → ${binding.role} at ${full(group)}`,
                detail: changed.map((field) =>
                  field === "expireTime"
                    ? `expires ${iso(window.expireTime) ?? "never"}`
                    : field === "startTime"
                    ? `starts ${iso(window.startTime) ?? "at once"}`
                    : condition === null
                    ? "no condition"
                    : `if ${condition.expression}`
                ).join(", ")
              },
              run: () =>
                bindings.update(
                  principal,
                  uid,
                  { startTime: iso(window.startTime), expireTime: iso(window.expireTime), condition },
                  changed.join(",")
                )
            })
          }
          continue
        }
        creates.push({
          change: {
            action: "create",
            kind: "binding",
            path: `${full(identity)} → ${binding.role} at ${full(group)}`
          },
          batch: {
            _tag: "binding",
            resolve: (uids) =>
              Effect.gen(function*() {
                const groupUid = yield* uidOf(uids, group)
                const identityUid = state.identities.get(identity)?.uid ??
                  (yield* uidOf(uids, `identity:${identity}`))
                return {
                  groupUid,
                  input: {
                    identityUid,
                    roleUid: yield* roleUid(uids, binding.role),
                    ...(window.startTime === null ? {} : { startTime: DateTime.formatIso(window.startTime) }),
                    ...(window.expireTime === null ? {} : { expireTime: DateTime.formatIso(window.expireTime) }),
                    ...(condition === null ? {} : { condition })
                  }
                }
              })
          }
        })
      }

      const wantedSubscriptions = new Set<string>()
      for (const [i, spec] of (wanted.subscriptions ?? []).entries()) {
        const group = spec.group ?? ""
        if (!folderNamed(group)) {
          return yield* InvalidArgument.field(
            `${at}.subscriptions[${i}].group`,
            `names no folder of the document: ${group}`
          )
        }
        const key = subscriptionKey(spec.sink, group)
        if (wantedSubscriptions.has(key)) continue
        wantedSubscriptions.add(key)
        if (state.subscriptions.has(key)) continue
        creates.push({
          at: `${at}.subscriptions[${i}]`,
          change: { action: "create", kind: "subscription", path: `${full(group)} → ${spec.sink}` },
          run: (uids) =>
            Effect.flatMap(
              uidOf(uids, group),
              (parent) => subscriptions.create(principal, parent, { sink: spec.sink })
            )
        })
      }

      // The vocabulary is the organization's as a whole: replaced when the document's differs (emptied only by prune).
      const currentWords = wordsOf(state.vocabulary)
      const wantedWords = wanted.decisions === undefined ? (prune ? wordsOf(undefined) : undefined) : wanted.decisions
      if (wantedWords !== undefined && canonical(wantedWords) !== canonical(currentWords)) {
        const changed = (["subjects", "actions", "resources"] as const).filter((kind) =>
          canonical(wantedWords[kind]) !== canonical(currentWords[kind])
        )
        updates.push({
          at: `${at}.decisions`,
          change: {
            action: isEmpty(currentWords) ? "create" : isEmpty(wantedWords) ? "delete" : "update",
            kind: "decisions",
            path: name,
            detail: changed.join(", ")
          },
          run: (uids) => Effect.flatMap(uidOf(uids, ""), (org) => vocabularies.set(principal, org, wantedWords))
        })
      }

      pruning(
        state.subscriptions,
        wantedSubscriptions,
        "subscription",
        (_, { group, subscription }) => `${full(group)} → ${subscription.sink}`,
        ({ subscription }) => subscriptions.delete(principal, subscription.uid)
      )
      // A provider's mappings go with it.
      pruning(state.providers, wantedProviders, "identityProvider", full, (p) => providers.delete(principal, p.uid))
      pruning(
        state.bindings,
        wantedBindings,
        "binding",
        (_, { group, identity, role }) => `${full(identity)} → ${role} at ${full(group)}`,
        ({ binding }) => bindings.delete(principal, binding.uid),
        ({ binding }) => binding
      )
      pruning(state.identities, wantedIdentities, "identity", full, (i) => identities.delete(principal, i.uid))
      pruning(state.roles, wantedRoles, "role", full, (role) => roles.delete(principal, role.uid))
      pruning(
        [...state.folders].sort(([a], [b]) => b.split("/").length - a.split("/").length),
        folders,
        "folder",
        full,
        (folder) => groups.delete(principal, folder.uid)
      )
      yield* keepsOwners(
        principal,
        state,
        deletes.flatMap((step) => step.binding === undefined ? [] : [step.binding])
      )
      /** The uids of what exists, by path, before the steps make more. */
      const existing = new Map<string, Uid.Uid>([
        ...(state.org === undefined ? [] : [["", state.org.uid] as const]),
        ...[...state.folders].map(([path, folder]) => [path, folder.uid] as const)
      ])
      return { existing, steps: [...creates, ...updates, ...deletes], etag: etagOf(state) }
    })

  /**
   * Refuses deleting `doomed` bindings when one is the caller's own owner binding at the organization: a document
   * does not take its applier's ownership away. (That an organization keeps an owner at all is the engine's
   * invariant, which every change of the apply is held to: `iam/internal/ownership`.)
   */
  const keepsOwners = (principal: Principal, state: State, doomed: ReadonlyArray<RoleBinding.RoleBinding>) => {
    const org = state.org
    if (org === undefined || principal._tag !== "Identity") return Effect.void
    const own = doomed.some((b) =>
      b.role.uid === ownerRole && Uid.parentOrNull(b.uid) === org.uid && b.identity.uid === principal.uid
    )
    return own
      ? Effect.fail(
        new FailedPrecondition({
          summary: "the plan would take the caller's own ownership of the organization away",
          violations: [
            new PreconditionViolation({
              type: "OWN_OWNER_BINDING",
              subject: org.uid,
              description: "it deletes the caller's own owner binding at the organization"
            })
          ]
        })
      )
      : Effect.void
  }

  /** The steps of every organization of the document, each beside the uids of what exists. */
  const stepsOfDocument = (principal: Principal, document: Document, options: Options) =>
    Effect.gen(function*() {
      const steps: Array<Planned> = []
      for (const [name, organization] of byKey(document.organizations)) {
        steps.push(yield* stepsOf(principal, name, organization, options))
      }
      return steps
    })

  const planOf = (steps: ReadonlyArray<Planned>): Plan => ({
    changes: steps.flatMap((organization) => organization.steps.map((step) => step.change)),
    etag: createHash("sha256").update(steps.map((organization) => organization.etag).join(",")).digest("hex")
      .slice(0, 32)
  })

  /** The refusal of an apply to `organization` while another is changing it, to retry once it ends. */
  const inProgress = (organization: string) =>
    new Aborted({
      description: `a document is being applied to the organization ${organization}: retry once it is done`,
      reason: "APPLY_IN_PROGRESS",
      retryAfterSeconds: 1
    })
  /** The organizations an apply of this process is changing now. */
  const applying = new Set<string>()
  /**
   * `effect`, while no other apply changes one of `organizations`; else `Aborted`, to retry once it ends: two applies
   * of one organization would each plan from what the other is about to change (and, on a store whose transactions
   * run concurrently, one would fail at commit having done all its work). Another apply of this process is seen
   * before `effect` starts its transaction; another server's, by `claims`, inside it.
   */
  const alone = <A, E, R>(organizations: ReadonlyArray<string>, effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.suspend(() => {
        const busy = organizations.find((name) => applying.has(name))
        if (busy !== undefined) return Effect.fail(inProgress(busy))
        organizations.forEach((name) => applying.add(name))
        return Effect.void
      }),
      () => effect,
      () => Effect.sync(() => organizations.forEach((name) => applying.delete(name)))
    )
  /** Inside the apply's transaction: each of `organizations` claimed for it, or `Aborted` (`alone`). */
  const claims = (organizations: ReadonlyArray<string>) =>
    Effect.forEach(
      organizations,
      (name) =>
        Effect.flatMap(store.claim(`arbor.apply:${name}`), (claimed) =>
          claimed ? Effect.void : Effect.fail(inProgress(name))),
      { discard: true }
    )

  /** Makes a batch of creates of one kind (`runsOf`). */
  const createBatch = (principal: Principal, uids: Map<string, Uid.Uid>, batch: ReadonlyArray<Batched>) => {
    const folders = batch.flatMap((created) => created._tag === "folder" ? [created] : [])
    const named = batch.flatMap((created) => created._tag === "identity" ? [created] : [])
    const bound = batch.flatMap((created) => created._tag === "binding" ? [created] : [])
    return Effect.all([
      createFolders(principal, uids, folders),
      named.length === 0 ? Effect.void : Effect.flatMap(
        Effect.forEach(named, (identity) => identity.resolve(uids)),
        (creations) =>
          Effect.map(
            identities.createMany(principal, creations),
            (created) => named.forEach((identity, i) => uids.set(`identity:${identity.path}`, created[i]!.uid))
          )
      ),
      bound.length === 0 ? Effect.void : Effect.flatMap(
        Effect.forEach(bound, (binding) => binding.resolve(uids)),
        (creations) => bindings.createMany(principal, creations)
      )
    ], { discard: true })
  }

  /**
   * Creates `folders` (parents first, as the plan lists them) a level at a time, each level in one write, and notes
   * each one's uid by its path.
   */
  const createFolders = (principal: Principal, uids: Map<string, Uid.Uid>, folders: ReadonlyArray<FolderCreate>) => {
    const levels = new Map<number, Array<FolderCreate>>()
    for (const folder of folders) {
      const depth = folder.path.split("/").length
      const level = levels.get(depth)
      if (level === undefined) levels.set(depth, [folder])
      else level.push(folder)
    }
    return Effect.forEach([...levels].sort(([a], [b]) => a - b), ([, level]) =>
      Effect.gen(function*() {
        const creations: Array<{ readonly parentUid: string; readonly input: FolderCreate["input"] }> = []
        for (const folder of level) {
          const parentUid = uids.get(folder.parent)
          if (parentUid === undefined) return yield* internal(`the plan made no ${folder.parent}`, "PLAN")
          creations.push({ parentUid, input: folder.input })
        }
        const created = yield* groups.createMany(principal, creations)
        level.forEach((folder, i) => uids.set(folder.path, created[i]!.uid))
      }), { discard: true })
  }

  const apply = (principal: Principal, input: unknown, options: Options = {}) =>
    operation("Declarative.apply")(Effect.flatMap(decodeDocument(input), (document) =>
      alone(
        Object.keys(document.organizations),
        orInternal(store.transaction(Effect.gen(function*() {
          yield* claims(Object.keys(document.organizations))
          const steps = yield* stepsOfDocument(principal, document, options)
          const plan = planOf(steps)
          if (options.etag !== undefined && options.etag !== plan.etag) {
            return yield* new Aborted({
              description: "the organization changed since the plan was made; plan again",
              reason: "ETAG_MISMATCH"
            })
          }
          // All or nothing: a step that fails fails the apply, so no step needs a savepoint of its own.
          yield* Store.asOneWhole(Effect.forEach(steps, (organization) => {
            const uids = new Map(organization.existing)
            return Effect.forEach(runsOf(organization.steps), (run) =>
              Array.isArray(run)
                ? createBatch(principal, uids, run)
                : run.run(uids).pipe(
                  Effect.catchTag("InvalidArgument", (e) => Effect.fail(run.at === undefined ? e : e.within(run.at)))
                ), { discard: true })
          }, { discard: true }))
          // validateOnly: every change made, as the caller, and undone, so each is refused as it would be.
          if (options.validateOnly === true) return yield* new ValidatedOnly({ plan })
          return plan
        }))).pipe(Effect.catchTag("ValidatedOnly", ({ plan }) => Effect.succeed(plan)))
      )))

  /** The organization of uid `uid`, as `principal` may get it; INVALID_ARGUMENT for a folder's uid. */
  const organizationAt = (principal: Principal, uid: string) =>
    Effect.flatMap(groups.get(principal, uid), (group) =>
      Uid.parentOrNull(group.uid) === null
        ? Effect.succeed(group)
        : Effect.fail(InvalidArgument.field("uid", "is a folder's: a document is applied to an organization")))

  return {
    /** The organization of uid `uid` as a document (`exportOrganization`). */
    exportAt: (principal: Principal, uid: string) =>
      Effect.flatMap(organizationAt(principal, uid), (org) => exportOrganization(principal, org.name)),

    /**
     * `apply` of a document that names the organization of uid `uid` and no other (the API's
     * `POST /iam/v2beta1/groups/<uid>:apply`).
     */
    applyAt: (principal: Principal, uid: string, document: unknown, options: Options = {}) =>
      Effect.gen(function*() {
        const org = yield* organizationAt(principal, uid)
        const named = typeof document === "object" && document !== null && "organizations" in document &&
            typeof document.organizations === "object" && document.organizations !== null
          ? Object.keys(document.organizations)
          : undefined
        if (named !== undefined && (named.length !== 1 || named[0] !== org.name)) {
          return yield* InvalidArgument.field("organizations", `must name this organization only: ${org.name}`)
        }
        return yield* apply(principal, document, options)
      }),

    /**
     * The uids of organization `name`'s groups and identities by their paths below it (the organization's own
     * is ""), as `principal` may list them: what a document's names are, once applied.
     */
    uidsOf: (principal: Principal, name: string) =>
      Effect.map(stateOf(principal, name), (state) => ({
        groups: new Map<string, Uid.Uid>([
          ...(state.org === undefined ? [] : [["", state.org.uid] as const]),
          ...[...state.folders].map(([path, group]) => [path, group.uid] as const)
        ]),
        identities: new Map([...state.identities].map(([path, identity]) => [path, identity.uid] as const))
      })),

    /** The organization `name` as a document, as `principal` may list it. */
    exportOrganization: (principal: Principal, name: string) =>
      operation("Declarative.export")(exportOrganization(principal, name)),

    /** What applying `document` would change, as `principal`, without changing anything. */
    plan: (principal: Principal, document: unknown, options: Options = {}) =>
      operation("Declarative.plan")(
        Effect.map(
          Effect.flatMap(decodeDocument(document), (decoded) => stepsOfDocument(principal, decoded, options)),
          planOf
        )
      ),

    /**
     * Makes the document's organizations as it says, as `principal`: every change through the engine's services
     * (so each is refused as it would be made by hand), all in one transaction or none; answers the plan applied.
     */
    apply
  }
})

/** The Declarative service: export, plan and apply organizations as documents. */
export class Declarative extends Effect.Service<Declarative>()("@arbor/core/Declarative", { effect: make }) {}
