/**
 * The REST handlers: every domain's (`methods/`), over the engine's services. Each resource's handlers come from its
 * declaration (`internal/rest.ts`). The framework's types cannot merge a list of layers that each serve other groups,
 * so the domains are named here: one left out leaves its groups unserved, and the server does not type-check.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as EngineServices from "./EngineServices.js"
import * as Methods from "./methods/index.js"

/** Every handler, over the engine's services. */
export const layer = Layer.unwrapEffect(Effect.map(EngineServices.services, (engine) =>
  Layer.mergeAll(
    Methods.groups.rest(engine),
    Methods.identities.rest(engine),
    Methods.roles.rest(engine),
    Methods.roleBindings.rest(engine),
    Methods.elevations.rest(engine),
    Methods.identityProviders.rest(engine),
    Methods.accountAssociations.rest(engine),
    Methods.invites.rest(engine),
    Methods.registry.rest(engine),
    Methods.events.rest(engine),
    Methods.decisions.rest(engine),
    Methods.tokens.rest(engine)
  )))
