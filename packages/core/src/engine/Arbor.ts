/**
 * The whole engine as one Layer: every resource's service with authorization and change events, over a storage
 * Layer and a source of secrets.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as AuditTrail from "../events/AuditTrail.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Events from "../events/Events.js"
import * as Subscription from "../events/Subscription.js"
import * as Subscriptions from "../events/Subscriptions.js"
import * as Access from "../iam/Access.js"
import * as AccountAssociation from "../iam/AccountAssociation.js"
import * as AccountAssociations from "../iam/AccountAssociations.js"
import * as Authorization from "../iam/Authorization.js"
import * as DecisionVocabularies from "../iam/DecisionVocabularies.js"
import * as DecisionVocabulary from "../iam/DecisionVocabulary.js"
import * as Declarative from "../iam/Declarative.js"
import * as Elevation from "../iam/Elevation.js"
import * as Elevations from "../iam/Elevations.js"
import * as Eligibility from "../iam/Eligibility.js"
import * as ExternalGroupRoleMapping from "../iam/ExternalGroupRoleMapping.js"
import * as ExternalGroupRoleMappings from "../iam/ExternalGroupRoleMappings.js"
import * as Group from "../iam/Group.js"
import * as GroupAccessRequest from "../iam/GroupAccessRequest.js"
import * as GroupInvite from "../iam/GroupInvite.js"
import * as GroupInvites from "../iam/GroupInvites.js"
import * as Groups from "../iam/Groups.js"
import * as Identities from "../iam/Identities.js"
import * as Identity from "../iam/Identity.js"
import * as IdentityMetadata from "../iam/IdentityMetadata.js"
import * as IdentityProvider from "../iam/IdentityProvider.js"
import * as IdentityProviders from "../iam/IdentityProviders.js"
import * as Role from "../iam/Role.js"
import * as RoleBinding from "../iam/RoleBinding.js"
import * as RoleBindings from "../iam/RoleBindings.js"
import * as Roles from "../iam/Roles.js"
import * as Terms from "../iam/Terms.js"
import * as TermsAcceptance from "../iam/TermsAcceptance.js"
import * as ScimCredential from "../provisioning/ScimCredential.js"
import * as ScimCredentials from "../provisioning/ScimCredentials.js"
import * as ScimGroup from "../provisioning/ScimGroup.js"
import * as ScimGroups from "../provisioning/ScimGroups.js"
import * as ScimUser from "../provisioning/ScimUser.js"
import * as ScimUsers from "../provisioning/ScimUsers.js"
import * as Advisories from "../registry/Advisories.js"
import * as Advisory from "../registry/Advisory.js"
import * as Repo from "../registry/Repo.js"
import * as RepoReadme from "../registry/RepoReadme.js"
import * as Repos from "../registry/Repos.js"
import * as Tag from "../registry/Tag.js"
import * as Tags from "../registry/Tags.js"
import * as LastSeen from "../tokens/internal/lastSeen.js"
import * as RefreshToken from "../tokens/internal/refreshToken.js"
import * as People from "../tokens/internal/signIn/people.js"
import * as Person from "../tokens/internal/signIn/person.js"
import * as SignIn from "../tokens/SignIn.js"
import * as TokenIssuer from "../tokens/TokenIssuer.js"
import { Unavailable } from "./Errors.js"
import * as Versions from "./internal/storage/versions.js"
import * as MemoryStore from "./MemoryStore.js"
import * as Secrets from "./Secrets.js"
import type { StoreService, Table } from "./Store.js"
import { Store } from "./Store.js"

/** Every table the engine keeps its resources in, each after the tables its rows refer to. */
export const resourceTables: ReadonlyArray<Table> = [
  Group.table,
  Identity.table,
  Role.table,
  RoleBinding.table,
  IdentityProvider.table,
  AccountAssociation.table,
  GroupInvite.table,
  Repo.table,
  Tag.table,
  Advisory.table,
  Subscription.table,
  Person.table,
  TermsAcceptance.table,
  IdentityMetadata.table,
  RepoReadme.table,
  GroupAccessRequest.table,
  ExternalGroupRoleMapping.table,
  ScimCredential.table,
  ScimUser.table,
  ScimGroup.table,
  DecisionVocabulary.table,
  Eligibility.table,
  Elevation.table
]

/**
 * Every table the engine may keep in a store: its resources', refresh tokens, sign-ins in progress, the keys
 * processes share, the version rows of cached reads, and the change log.
 */
export const tables: ReadonlyArray<Table> = [
  ...resourceTables,
  RefreshToken.table,
  SignIn.transactionsTable,
  SignIn.devicesTable,
  TokenIssuer.signingKeysTable,
  Secrets.secretsTable,
  Versions.table,
  ChangeLog.table,
  Subscription.deliveriesTable
]

/** The engine's services. */
export type Services =
  | Groups.Groups
  | Identities.Identities
  | Roles.Roles
  | RoleBindings.RoleBindings
  | IdentityProviders.IdentityProviders
  | AccountAssociations.AccountAssociations
  | GroupInvites.GroupInvites
  | Repos.Repos
  | Tags.Tags
  | Advisories.Advisories
  | AuditTrail.AuditTrail
  | Subscriptions.Subscriptions
  | Terms.Terms
  | ExternalGroupRoleMappings.ExternalGroupRoleMappings
  | Declarative.Declarative
  | ScimCredentials.ScimCredentials
  | ScimUsers.ScimUsers
  | ScimGroups.ScimGroups
  | DecisionVocabularies.DecisionVocabularies
  | Elevations.Elevations
  | Access.Access
  | People.People
  | Authorization.Authorization
  | Events.Events
  | LastSeen.LastSeen

/** Services built one after another in a context `B`, each from what it holds and the services built before it. */
interface Building<B, C, E, R> {
  /** The services built. */
  readonly built: Effect.Effect<Context.Context<C>, E, R>
  /**
   * And the service `tag`, built by `make`: whatever `make` needs that is not built yet stays a requirement, so a
   * service added before one it uses is a type error where the engine's Layer is declared.
   */
  readonly and: <I, S, A, E2, R2>(
    tag: Context.Tag<I, S> & { readonly make: (service: A) => S },
    make: Effect.Effect<A, E2, R2>
  ) => Building<B, C | I, E | E2, R | Exclude<R2, B | C>>
}

/** Starts building services in `context`, which they may use and which the services built leave out. */
const buildingIn = <B>(context: Context.Context<B>) => {
  const next = <C, E, R>(built: Effect.Effect<Context.Context<C>, E, R>): Building<B, C, E, R> => ({
    built,
    and: (tag, make) =>
      next(Effect.flatMap(built, (services) =>
        Effect.map(
          Effect.provide(make, Context.merge(context, services)),
          (service) => Context.add(services, tag, tag.make(service))
        )))
  })
  return next(Effect.succeed(Context.empty()))
}

/**
 * Every service, built in one effect, each after those it uses, so that the engine is one Layer: a Layer per service
 * cost about 0.2 ms each to build (a fiber, a scope and memoization each), most of an empty engine's build, which
 * every test suite on the in-memory store pays.
 */
const services: Effect.Effect<Context.Context<Services>, never, Store | Secrets.Secrets | Scope.Scope> = Effect
  .flatMap(Effect.context<Store | Secrets.Secrets | Scope.Scope>(), (context) =>
    buildingIn(context)
      .and(Authorization.Authorization, Authorization.make)
      .and(Events.Events, Events.make)
      .and(LastSeen.LastSeen, LastSeen.make)
      .and(RoleBindings.RoleBindings, RoleBindings.make)
      .and(GroupInvites.GroupInvites, GroupInvites.make)
      .and(People.People, People.make)
      .and(Groups.Groups, Groups.make)
      .and(Identities.Identities, Identities.make)
      .and(Roles.Roles, Roles.make)
      .and(IdentityProviders.IdentityProviders, IdentityProviders.make)
      .and(AccountAssociations.AccountAssociations, AccountAssociations.make)
      .and(Repos.Repos, Repos.make)
      .and(Tags.Tags, Tags.make)
      .and(Advisories.Advisories, Advisories.make)
      .and(AuditTrail.AuditTrail, AuditTrail.make)
      .and(Subscriptions.Subscriptions, Subscriptions.make)
      .and(Terms.Terms, Terms.make)
      .and(ExternalGroupRoleMappings.ExternalGroupRoleMappings, ExternalGroupRoleMappings.make)
      .and(ScimCredentials.ScimCredentials, ScimCredentials.make)
      .and(ScimUsers.ScimUsers, ScimUsers.make)
      .and(ScimGroups.ScimGroups, ScimGroups.make)
      .and(DecisionVocabularies.DecisionVocabularies, DecisionVocabularies.make)
      .and(Elevations.Elevations, Elevations.make)
      .and(Access.Access, Access.make)
      // Documents are applied through the services above, as a caller would make each change.
      .and(Declarative.Declarative, Declarative.make)
      .built)

/** The engine over a store and secrets the caller provides. */
export const layer: Layer.Layer<Services, never, Store | Secrets.Secrets> = Layer.scopedContext(services)

/** The engine over a fresh in-memory store with ephemeral secrets: for tests and demos. One Layer, as `layer` is. */
export const layerMemory: Layer.Layer<Services | Store | MemoryStore.MemoryStore | Secrets.Secrets> = Layer
  .scopedContext(Effect.flatMap(MemoryStore.make, (store) => {
    const context = Context.make(Store, store).pipe(
      Context.add(MemoryStore.MemoryStore, store),
      Context.add(Secrets.Secrets, Secrets.ephemeral())
    )
    return Effect.map(Effect.provide(services, context), (built) => Context.merge(context, built))
  }))

/** Succeeds when `store` answers a read, as a readiness probe asks; `Unavailable` when it does not. */
export const ready = (store: StoreService): Effect.Effect<void, Unavailable> =>
  store.count(Versions.table, {}).pipe(
    Effect.asVoid,
    Effect.mapError((error) =>
      new Unavailable({
        description: "the store does not answer",
        reason: "STORE_UNAVAILABLE",
        logDetail: String(error.cause)
      })
    )
  )
