/**
 * The guard for `@effect/platform`'s HttpApi: the `ArborBearer` middleware makes the bearer token the caller's
 * principal (`ArborPrincipal`; 401 otherwise), and `requireCapability` in a handler asks for a capability at the group
 * the request names (403 otherwise). Declare `ArborBearer` on the group and `PermissionDenied` (403) on the endpoint.
 */
import * as ErrorBody from "@arbor/api/ErrorBody"
import { Authentication, Errors } from "@arbor/core"
import type { Access, Principal } from "@arbor/core"
import { HttpApiBuilder, HttpApiMiddleware, HttpApiSecurity, HttpServerResponse } from "@effect/platform"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Guard from "./Guard.js"

/** The caller of a guarded request. */
export class ArborPrincipal
  extends Context.Tag("@arbor/guards/ArborPrincipal")<ArborPrincipal, Principal.Principal>()
{}

/** The middleware: a bearer token of the engine, or 401 with the engine's error body. */
export class ArborBearer extends HttpApiMiddleware.Tag<ArborBearer>()("@arbor/guards/ArborBearer", {
  failure: ErrorBody.declared(
    Errors.Unauthenticated,
    401,
    "missing, malformed, expired or otherwise invalid bearer token"
  ),
  provides: ArborPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/**
 * A 401 names the scheme it wants (RFC 6750 §3), which HttpApi's own error encoding leaves out: the middleware's
 * refusal is answered here, with the engine's error body and `WWW-Authenticate: Bearer`.
 */
const challenge = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(app, (cause) => {
    // The router's failures are typed `never`, yet arrive: the middleware's refusal among them.
    const failure = Cause.squash(cause)
    if (!(failure instanceof Errors.Unauthenticated)) return Effect.failCause(cause)
    const rendered = ErrorBody.render(failure, "iam.arbor.dev")
    return Effect.succeed(
      HttpServerResponse.unsafeJson(rendered.body, { status: rendered.status, headers: rendered.headers })
    )
  })
)

/** The middleware's implementation, over the engine's `Authentication`; with it, the 401s' challenge. */
export const layer = Layer.merge(
  Layer.effect(
    ArborBearer,
    Effect.map(Authentication.Authentication, (authentication) => ({
      bearer: (token: Redacted.Redacted) =>
        authentication.authenticate(Redacted.value(token).trim()).pipe(
          Effect.catchTags({ Internal: Effect.die, Unavailable: Effect.die })
        )
    }))
  ),
  challenge
)

/** The 403 a guarded endpoint declares (`.addError(HttpApiGuard.Forbidden)`). */
export const Forbidden = ErrorBody.declared(
  Errors.PermissionDenied,
  403,
  "the caller does not hold the capability there"
)

/** In a handler: the caller, once it holds `capability` at `group`; PermissionDenied (403) otherwise. */
export const requireCapability = (
  capability: string,
  group: string
): Effect.Effect<Principal.Principal, Errors.PermissionDenied, ArborPrincipal | Access.Access> => {
  const held = Guard.capability(capability)
  // A store that fails is a defect here, answered by the framework.
  return Effect.flatMap(ArborPrincipal, (principal) => Guard.authorize(principal, held, group)).pipe(
    Effect.catchTags({ Internal: Effect.die, Unavailable: Effect.die })
  )
}
