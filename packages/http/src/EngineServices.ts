/**
 * The engine's services that the API's two surfaces call, the REST handlers and the gRPC mapping, gathered once.
 */
import {
  Access,
  AccountAssociationChecks,
  AccountAssociations,
  Advisories,
  AuditTrail,
  Authentication,
  DecisionVocabularies,
  Declarative,
  Elevations,
  ExternalGroupRoleMappings,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  RefreshTokens,
  Repos,
  RoleBindings,
  Roles,
  ScimCredentials,
  Store,
  Sts,
  Subscriptions,
  Tags,
  Terms,
  TokenIssuer
} from "@arbor/core"
import * as Effect from "effect/Effect"

/** Every service a surface maps onto. */
export const services = Effect.all({
  groups: Groups.Groups,
  identities: Identities.Identities,
  roles: Roles.Roles,
  bindings: RoleBindings.RoleBindings,
  providers: IdentityProviders.IdentityProviders,
  associations: AccountAssociations.AccountAssociations,
  checks: AccountAssociationChecks.AccountAssociationChecks,
  invites: GroupInvites.GroupInvites,
  repos: Repos.Repos,
  tags: Tags.Tags,
  advisories: Advisories.Advisories,
  auditTrail: AuditTrail.AuditTrail,
  subscriptions: Subscriptions.Subscriptions,
  mappings: ExternalGroupRoleMappings.ExternalGroupRoleMappings,
  terms: Terms.Terms,
  declarative: Declarative.Declarative,
  scim: ScimCredentials.ScimCredentials,
  access: Access.Access,
  vocabularies: DecisionVocabularies.DecisionVocabularies,
  elevations: Elevations.Elevations,
  store: Store.Store,
  sts: Sts.Sts,
  refreshTokens: RefreshTokens.RefreshTokens,
  tokens: TokenIssuer.TokenIssuer,
  authentication: Authentication.Authentication
})

/** The engine's services, as each surface receives them. */
export type Services = Effect.Effect.Success<typeof services>
