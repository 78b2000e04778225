/**
 * `arbor iam`: organizations, folders, identities (with `create github|gitlab|kubernetes`, which build the claim
 * match from flags), roles (and `capabilities`), role bindings, invites, identity providers and their group mappings,
 * account associations and terms, an organization's decision vocabulary, and `check` (a decision); one module a resource under `iam/`, their `list`, `describe` and `delete` from `iam/resource`.
 */
import { Command } from "@effect/cli"
import * as Help from "../Help.js"
import { accountAssociations } from "./iam/accountAssociations.js"
import { check } from "./iam/check.js"
import { decisionVocabulary } from "./iam/decisionVocabulary.js"
import { approvals, elevate, eligibilities } from "./iam/elevations.js"
import { externalGroupRoleMappings } from "./iam/externalGroupRoleMappings.js"
import { folders, organizations } from "./iam/groups.js"
import { identities } from "./iam/identities.js"
import { identityProviders } from "./iam/identityProviders.js"
import { invites } from "./iam/invites.js"
import { roleBindings } from "./iam/roleBindings.js"
import { roles } from "./iam/roles.js"
import { terms } from "./iam/terms.js"

/** `arbor iam`. */
export const iam = Command.make("iam").pipe(
  Command.withDescription(
    "Organizations, folders, identities, roles, role bindings, invites, identity providers (and their group " +
      "mappings), account associations, terms and decision vocabularies; check asks for a decision."
  ),
  Help.withSubcommands([
    organizations,
    folders,
    identities,
    roles,
    roleBindings,
    invites,
    identityProviders,
    externalGroupRoleMappings,
    accountAssociations,
    terms,
    decisionVocabulary,
    eligibilities,
    elevate,
    approvals,
    check
  ])
)
