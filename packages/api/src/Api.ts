/**
 * The HTTP API: every v2beta1 resource (docs/api.md §3), the v1 compatibility surface (docs/api.md §9), health, and
 * the token exchange with its discovery documents. The server implements it and `HttpApiClient.make(Api)` calls it,
 * with the engine's resource classes as results and the engine's errors as failures. Each resource's endpoints come
 * from its declaration in `Resources`; the custom methods, a module per resource, and the token service are in
 * `methods/`, and this assembles them.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import * as ErrorBody from "./ErrorBody.js"
import { truthful } from "./internal/openApi.js"
import { AccountAssociationChecks } from "./methods/accountAssociations.js"
import { Decisions, DecisionsMetadata, DecisionVocabularies, OrganizationDecisions } from "./methods/decisions.js"
import { Elevations, Eligibilities } from "./methods/elevations.js"
import { AuditTrail } from "./methods/events.js"
import { Organizations, OrganizationsAsCode, Terms, VerifiedOrganizations } from "./methods/groups.js"
import { IdentityLookup, OwnMetadata } from "./methods/identities.js"
import { MappingBatches, ScimCredentials } from "./methods/identityProviders.js"
import { InviteCodes } from "./methods/invites.js"
import { RepoReadmes } from "./methods/registry.js"
import { RoleBindingBatches } from "./methods/roleBindings.js"
import { Health, TokenService } from "./methods/tokens.js"
import * as Resources from "./Resources.js"

export * from "./methods/accountAssociations.js"
export * from "./methods/decisions.js"
export * from "./methods/elevations.js"
export * from "./methods/events.js"
export * from "./methods/groups.js"
export * from "./methods/identities.js"
export * from "./methods/identityProviders.js"
export * from "./methods/invites.js"
export { customMethodPaths, uidCustomMethods } from "./methods/paths.js"
export * from "./methods/registry.js"
export * from "./methods/roleBindings.js"
export * from "./methods/tokens.js"
export { Authentication, CurrentPrincipal, UpstreamBearer, UpstreamToken } from "./Security.js"

/** Every path of the API, with the errors any endpoint may answer. */
export const Api = ErrorBody.declareErrors(
  HttpApi.make("arbor")
    .add(Resources.groups.group)
    .add(Organizations)
    .add(VerifiedOrganizations)
    .add(OrganizationsAsCode)
    .add(Resources.identities.group)
    .add(IdentityLookup)
    .add(OwnMetadata)
    .add(Resources.roles.group)
    .add(Resources.roleBindings.group)
    .add(RoleBindingBatches)
    .add(Eligibilities)
    .add(Elevations)
    .add(Resources.identityProviders.group)
    .add(ScimCredentials)
    .add(Resources.accountAssociations.group)
    .add(AccountAssociationChecks)
    .add(Resources.groupInvites.group)
    .add(Resources.externalGroupRoleMappings.group)
    .add(MappingBatches)
    .add(InviteCodes)
    .add(Resources.repos.group)
    .add(RepoReadmes)
    .add(Resources.tags.group)
    .add(Resources.advisories.group)
    .add(AuditTrail)
    .add(Decisions)
    .add(OrganizationDecisions)
    .add(DecisionVocabularies)
    .add(DecisionsMetadata)
    .add(Resources.subscriptions.group)
    .add(Terms)
    .add(Resources.groupsV1.group)
    .add(Resources.identitiesV1.group)
    .add(Resources.rolesV1.group)
    .add(Resources.roleBindingsV1.group)
    .add(Resources.reposV1.group)
    .add(Resources.tagsV1.group)
    .add(TokenService)
    .add(Health)
)
  .annotate(OpenApi.Title, "Arbor management API")
  .annotate(OpenApi.Version, "2.0.0-beta.1")
  .annotate(
    OpenApi.Description,
    "Groups, identities, roles, role bindings, identity providers, account associations and group invites; " +
      "registry repos and tags; vulnerability advisories. Errors are google.rpc.Status bodies. Query parameters are " +
      "snake_case; each is also accepted in camelCase (pageSize, uidp.descendantsOf, …)."
  )
  .annotate(OpenApi.Servers, [{ url: "/", description: "this server" }])
  .annotate(OpenApi.License, { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" })
  .annotate(OpenApi.Transform, (spec) => truthful(spec as OpenApi.OpenAPISpec))
