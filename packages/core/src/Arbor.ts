/**
 * The whole engine as one Layer: every resource's service with authorization and change events, over a storage
 * Layer and a source of secrets.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Access } from "./Access.js"
import * as AccountAssociation from "./AccountAssociation.js"
import { AccountAssociations } from "./AccountAssociations.js"
import { Advisories } from "./Advisories.js"
import * as Advisory from "./Advisory.js"
import { AuditTrail } from "./AuditTrail.js"
import { Authorization } from "./Authorization.js"
import * as ChangeLog from "./ChangeLog.js"
import { Unavailable } from "./Errors.js"
import { Events } from "./Events.js"
import * as ExternalGroupRoleMapping from "./ExternalGroupRoleMapping.js"
import { ExternalGroupRoleMappings } from "./ExternalGroupRoleMappings.js"
import * as Group from "./Group.js"
import * as GroupAccessRequest from "./GroupAccessRequest.js"
import * as GroupInvite from "./GroupInvite.js"
import { GroupInvites } from "./GroupInvites.js"
import { Groups } from "./Groups.js"
import { Identities } from "./Identities.js"
import * as Identity from "./Identity.js"
import * as IdentityMetadata from "./IdentityMetadata.js"
import * as IdentityProvider from "./IdentityProvider.js"
import { IdentityProviders } from "./IdentityProviders.js"
import { People } from "./internal/signIn/people.js"
import * as Person from "./internal/signIn/person.js"
import * as Versions from "./internal/storage/versions.js"
import { LastSeen } from "./internal/tokens/lastSeen.js"
import * as RefreshToken from "./internal/tokens/refreshToken.js"
import * as MemoryStore from "./MemoryStore.js"
import * as Repo from "./Repo.js"
import * as RepoReadme from "./RepoReadme.js"
import { Repos } from "./Repos.js"
import * as Role from "./Role.js"
import * as RoleBinding from "./RoleBinding.js"
import { RoleBindings } from "./RoleBindings.js"
import { Roles } from "./Roles.js"
import * as ScimCredential from "./ScimCredential.js"
import { ScimProvisioning } from "./ScimProvisioning.js"
import * as ScimUser from "./ScimUser.js"
import * as Secrets from "./Secrets.js"
import * as SignIn from "./SignIn.js"
import type { Store, StoreService, Table } from "./Store.js"
import * as Subscription from "./Subscription.js"
import { Subscriptions } from "./Subscriptions.js"
import * as Tag from "./Tag.js"
import { Tags } from "./Tags.js"
import { Terms } from "./Terms.js"
import * as TermsAcceptance from "./TermsAcceptance.js"
import * as TokenIssuer from "./TokenIssuer.js"

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
  ScimUser.table
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
  | Groups
  | Identities
  | Roles
  | RoleBindings
  | IdentityProviders
  | AccountAssociations
  | GroupInvites
  | Repos
  | Tags
  | Advisories
  | AuditTrail
  | Subscriptions
  | Terms
  | ExternalGroupRoleMappings
  | ScimProvisioning
  | Access
  | People
  | Authorization
  | Events
  | LastSeen

/** The engine over a store and secrets the caller provides. */
export const layer: Layer.Layer<Services, never, Store | Secrets.Secrets> = Layer.mergeAll(
  Groups.Default,
  Identities.Default,
  Roles.Default,
  IdentityProviders.Default,
  AccountAssociations.Default,
  Repos.Default,
  Tags.Default,
  Advisories.Default,
  AuditTrail.Default,
  Subscriptions.Default,
  Terms.Default,
  ExternalGroupRoleMappings.Default,
  ScimProvisioning.Default,
  Access.Default
).pipe(
  Layer.provideMerge(People.Default),
  Layer.provideMerge(GroupInvites.Default),
  Layer.provideMerge(RoleBindings.Default),
  Layer.provideMerge(Layer.mergeAll(Authorization.Default, Events.Default, LastSeen.Default))
)

/** The engine over a fresh in-memory store with ephemeral secrets: for tests and demos. */
export const layerMemory: Layer.Layer<Services | Store | MemoryStore.MemoryStore | Secrets.Secrets> = layer.pipe(
  Layer.provideMerge(MemoryStore.layer),
  Layer.provideMerge(Secrets.layerEphemeral)
)

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
