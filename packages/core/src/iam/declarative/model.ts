/**
 * IAM as code's model (`Declarative`): a plan's changes and steps, what a plan reads of an organization, and the
 * pure helpers of planning.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import {
  type ArborError,
  FailedPrecondition,
  type InvalidArgument,
  PreconditionViolation
} from "../../engine/Errors.js"
import type { Page } from "../../engine/Lists.js"
import * as Store from "../../engine/Store.js"
import * as Uid from "../../engine/Uid.js"
import type * as Subscription from "../../events/Subscription.js"
import { Subscriptions } from "../../events/Subscriptions.js"
import type * as ClaimMatch from "../ClaimMatch.js"
import { DecisionVocabularies } from "../DecisionVocabularies.js"
import type * as DecisionVocabulary from "../DecisionVocabulary.js"
import type * as ExternalGroupRoleMapping from "../ExternalGroupRoleMapping.js"
import { ExternalGroupRoleMappings } from "../ExternalGroupRoleMappings.js"
import type * as Group from "../Group.js"
import { Groups } from "../Groups.js"
import { Identities } from "../Identities.js"
import type * as Identity from "../Identity.js"
import type * as IdentityProvider from "../IdentityProvider.js"
import { IdentityProviders } from "../IdentityProviders.js"
import { ownerRole } from "../internal/ownership.js"
import type { IdentitySpec, SecretFrom } from "../OrganizationDocument.js"
import type { Principal } from "../Principal.js"
import type * as Role from "../Role.js"
import type * as RoleBinding from "../RoleBinding.js"
import { RoleBindings } from "../RoleBindings.js"
import { Roles } from "../Roles.js"

/** The engine's services an apply goes through, as the caller: each change is refused as it would be made by hand. */
export const services = Effect.all({
  store: Store.Store,
  groups: Groups,
  roles: Roles,
  identities: Identities,
  bindings: RoleBindings,
  providers: IdentityProviders,
  mappings: ExternalGroupRoleMappings,
  subscriptions: Subscriptions,
  vocabularies: DecisionVocabularies
})
export type Services = Effect.Effect.Success<typeof services>

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
export interface State {
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
export interface MappedAs {
  readonly externalGroup: string
  readonly role: string
  readonly scope: string
  readonly mapping: ExternalGroupRoleMapping.ExternalGroupRoleMapping
}

/** A binding as the document writes it: its identity's and group's paths and its role's name. */
export interface BoundAs {
  readonly identity: string
  readonly role: string
  readonly group: string
  readonly binding: RoleBinding.RoleBinding
}

/** An organization's steps, the uids of what exists by path, and the etag of what the plan read. */
export interface Planned {
  readonly existing: Map<string, Uid.Uid>
  readonly steps: ReadonlyArray<Step>
  readonly etag: string
}

/** What stands for a client secret a plan's caller could not read: applied and undone, never kept. */
export const unknownSecret = "unknown: not read for this plan"

/** Ends a validateOnly apply's transaction, undoing its changes, with the plan they made. */
export class ValidatedOnly extends Data.TaggedError("ValidatedOnly")<{ readonly plan: Plan }> {}

/** What a plan read of an organization, as one value: each resource's uid and last update. */
export const etagOf = (state: State) =>
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
export type Step = RunStep | BatchStep

/** A change made by itself. */
export interface RunStep {
  readonly change: Change
  readonly run: (uids: Map<string, Uid.Uid>) => Effect.Effect<unknown, ArborError>
  /** The binding a delete removes. */
  readonly binding?: RoleBinding.RoleBinding | undefined
  /** Where in the document the change comes from: the engine's refusal of a field is named below it. */
  readonly at?: string | undefined
  readonly batch?: undefined
}

/** A create made in one write with the creates of its kind beside it in the plan (`createBatch`). */
export interface BatchStep {
  readonly change: Change
  readonly batch: Batched
  readonly binding?: undefined
}

export type Batched = FolderCreate | IdentityCreate | BindingCreate

/** A folder to create: its path and its parent's below the organization, and the create's body. */
export interface FolderCreate {
  readonly _tag: "folder"
  readonly path: string
  readonly parent: string
  readonly input: { readonly name: string; readonly description?: string }
}

/** An identity to create, by its path: its group, the create's body and its place in the document, once known. */
export interface IdentityCreate {
  readonly _tag: "identity"
  readonly path: string
  readonly resolve: (uids: Map<string, Uid.Uid>) => Effect.Effect<{
    readonly groupUid: Uid.Uid
    readonly input: unknown
    readonly at: string
  }, ArborError>
}

/** A binding to create: its group and the create's body, once the uids of what the apply made are known. */
export interface BindingCreate {
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
export const wordsOf = (vocabulary: DecisionVocabulary.Vocabulary | undefined): DecisionVocabulary.Vocabulary => ({
  subjects: vocabulary?.subjects ?? {},
  actions: vocabulary?.actions ?? {},
  resources: vocabulary?.resources ?? {}
})

/** A value as JSON with its object keys sorted: two vocabularies are the same when theirs are. */
export const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, inner: unknown) =>
    typeof inner === "object" && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner)

/** True for a vocabulary without a word. */
export const isEmpty = (words: DecisionVocabulary.Vocabulary) =>
  Object.keys(words.subjects).length + Object.keys(words.actions).length + Object.keys(words.resources).length === 0

export const bindingKey = (identity: string, role: string, group: string) => `${identity}\n${role}\n${group}`
export const mappingKey = (externalGroup: string, role: string, scope: string) => `${externalGroup}\n${role}\n${scope}`
export const subscriptionKey = (sink: string, group: string) => `${group}\n${sink}`
/** `steps` in order, each run of consecutive creates of one kind in a batch as one array of them. */
export const runsOf = (steps: ReadonlyArray<Step>): Array<RunStep | Array<Batched>> => {
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
export const split = (path: string) => {
  const at = path.lastIndexOf("/")
  return { folder: at < 0 ? "" : path.slice(0, at), name: path.slice(at + 1) }
}

export const joined = (parent: string, name: string) => parent === "" ? name : `${parent}/${name}`
export const byKey = <A>(record: { readonly [key: string]: A } | undefined): Array<readonly [string, A]> =>
  Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/** Every page of a list. */
export const all = <A>(list: (pageToken: string | undefined) => Effect.Effect<Page<A>, ArborError>) =>
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
export const claimMatchOf = (spec: typeof IdentitySpec.Type): ClaimMatch.ClaimMatch =>
  spec.claimMatch ?? { issuer: spec.issuer, subject: spec.subject }

/** A claim match as a comparable string: its fields sorted, absent ones left out. */
export const claimKey = (claimMatch: ClaimMatch.ClaimMatch | undefined) =>
  JSON.stringify(
    claimMatch,
    (_key, value: unknown) =>
      value !== null && typeof value === "object" && !Array.isArray(value)
        ? Object.fromEntries(
          Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))
        )
        : value
  )

/**
 * Refuses deleting `doomed` bindings when one is the caller's own owner binding at the organization: a document
 * does not take its applier's ownership away. (That an organization keeps an owner at all is the engine's
 * invariant, which every change of the apply is held to: `iam/internal/ownership`.)
 */
export const keepsOwners = (principal: Principal, state: State, doomed: ReadonlyArray<RoleBinding.RoleBinding>) => {
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
