/**
 * Every domain the server serves. gRPC registers each from `domains`: a domain left out leaves its methods
 * `UNIMPLEMENTED`, which the gRPC tests call on every service of the reference protos. REST merges each domain's
 * handlers by name (`Handlers`): one left out leaves HttpApi groups unserved, which the server refuses to type-check.
 */
import { accountAssociations } from "./accountAssociations.js"
import { decisions } from "./decisions.js"
import { elevations } from "./elevations.js"
import { events } from "./events.js"
import { groups } from "./groups.js"
import { identities } from "./identities.js"
import { identityProviders } from "./identityProviders.js"
import { invites } from "./invites.js"
import { registry } from "./registry.js"
import { roleBindings } from "./roleBindings.js"
import { roles } from "./roles.js"
import { tokens } from "./tokens.js"

export const domains = [
  groups,
  identities,
  roles,
  roleBindings,
  elevations,
  identityProviders,
  accountAssociations,
  invites,
  registry,
  events,
  decisions,
  tokens
] as const

export {
  accountAssociations,
  decisions,
  elevations,
  events,
  groups,
  identities,
  identityProviders,
  invites,
  registry,
  roleBindings,
  roles,
  tokens
}
