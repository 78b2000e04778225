/**
 * Bearer authentication: a token issued by this service becomes the caller's principal; anything else is 401
 * with `WWW-Authenticate: Bearer`. What the principal may do is decided by the engine, per request.
 */
import { Errors, Principal, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Authentication } from "./Api.js"

/** The middleware, over the token issuer. */
export const layer = Layer.effect(
  Authentication,
  Effect.map(TokenIssuer.TokenIssuer, (issuer) => ({
    bearer: (token: Redacted.Redacted) => {
      const value = Redacted.value(token).trim()
      return value === ""
        ? Effect.fail(new Errors.Unauthenticated({ why: "a bearer token is required", reason: "MISSING_TOKEN" }))
        : Effect.map(issuer.verify(value), (verified) => Principal.identity(verified.identity))
    }
  }))
)
