/**
 * Bearer authentication: a token issued by this service becomes the caller's principal (the engine's
 * `Authentication`); anything else is 401 with `WWW-Authenticate: Bearer`. What the principal may do is decided by
 * the engine, per request.
 */
import { Authentication, UpstreamBearer } from "@arbor/api/Api"
import { Authentication as Engine } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/** The refusal of a request without a bearer token. */
export const missing = Engine.missing

/** The bearer token of an `authorization` header or metadata value, or "" when it carries none. */
export const bearerIn = Engine.bearerIn

/** The middleware, over the engine's authentication. */
export const layer = Layer.effect(
  Authentication,
  Effect.map(Engine.Authentication, (engine) => ({
    // The middleware may fail only as 401: a store that fails is a defect, rendered as what it is (500, or 503 when
    // the store cannot be reached) by the error rendering, which sees defects.
    bearer: (token: Redacted.Redacted) =>
      engine.authenticate(Redacted.value(token).trim()).pipe(
        Effect.catchTags({ Internal: Effect.die, Unavailable: Effect.die })
      )
  }))
)

/** The token exchange's bearer, handed to the engine as it is: the engine verifies it. */
export const upstreamLayer = Layer.succeed(UpstreamBearer, {
  upstreamToken: (token: Redacted.Redacted) => {
    const value = Redacted.value(token).trim()
    return value === "" ? Effect.fail(missing()) : Effect.succeed(value)
  }
})
