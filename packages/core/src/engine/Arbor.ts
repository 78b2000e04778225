/**
 * The whole engine as one Layer: every resource's service with authorization and change events, over a storage
 * Layer and a source of secrets.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AuditTrail } from "../events/AuditTrail.js"
import * as ChangeLog from "../events/ChangeLog.js"
import { Events } from "../events/Events.js"
import * as Subscription from "../events/Subscription.js"
import { Subscriptions } from "../events/Subscriptions.js"
import { Access } from "../iam/Access.js"
import * as AccountAssociation from "../iam/AccountAssociation.js"
import { AccountAssociations } from "../iam/AccountAssociations.js"
import { Authorization } from "../iam/Authorization.js"
import { Declarative } from "../iam/Declarative.js"
import * as ExternalGroupRoleMapping from "../iam/ExternalGroupRoleMapping.js"
import { ExternalGroupRoleMappings } from "../iam/ExternalGroupRoleMappings.js"
import * as Group from "../iam/Group.js"
import * as GroupAccessRequest from "../iam/GroupAccessRequest.js"
import * as GroupInvite from "../iam/GroupInvite.js"
import { GroupInvites } from "../iam/GroupInvites.js"
import { Groups } from "../iam/Groups.js"
import { Identities } from "../iam/Identities.js"
import * as Identity from "../iam/Identity.js"
import * as IdentityMetadata from "../iam/IdentityMetadata.js"
import * as IdentityProvider from "../iam/IdentityProvider.js"
import { IdentityProviders } from "../iam/IdentityProviders.js"
import * as Role from "../iam/Role.js"
import * as RoleBinding from "../iam/RoleBinding.js"
import { RoleBindings } from "../iam/RoleBindings.js"
import { Roles } from "../iam/Roles.js"
import { Terms } from "../iam/Terms.js"
import * as TermsAcceptance from "../iam/TermsAcceptance.js"
import * as ScimCredential from "../provisioning/ScimCredential.js"
import { ScimCredentials } from "../provisioning/ScimCredentials.js"
import * as ScimUser from "../provisioning/ScimUser.js"
import { ScimUsers } from "../provisioning/ScimUsers.js"
import { Advisories } from "../registry/Advisories.js"
import * as Advisory from "../registry/Advisory.js"
import * as Repo from "../registry/Repo.js"
import * as RepoReadme from "../registry/RepoReadme.js"
import { Repos } from "../registry/Repos.js"
import * as Tag from "../registry/Tag.js"
import { Tags } from "../registry/Tags.js"
import { LastSeen } from "../tokens/internal/lastSeen.js"
import * as RefreshToken from "../tokens/internal/refreshToken.js"
import { People } from "../tokens/internal/signIn/people.js"
import * as Person from "../tokens/internal/signIn/person.js"
import * as SignIn from "../tokens/SignIn.js"
import * as TokenIssuer from "../tokens/TokenIssuer.js"
import { Unavailable } from "./Errors.js"
import * as Versions from "./internal/storage/versions.js"
import * as MemoryStore from "./MemoryStore.js"
import * as Secrets from "./Secrets.js"
import type { Store, StoreService, Table } from "./Store.js"

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
  | Declarative
  | ScimCredentials
  | ScimUsers
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
  ScimCredentials.Default,
  ScimUsers.Default,
  Access.Default
).pipe(
  Layer.provideMerge(People.Default),
  Layer.provideMerge(GroupInvites.Default),
  Layer.provideMerge(RoleBindings.Default),
  Layer.provideMerge(Layer.mergeAll(Authorization.Default, Events.Default, LastSeen.Default)),
  // Documents are applied through the services above, as a caller would make each change.
  (services) => Layer.provideMerge(Declarative.Default, services)
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
