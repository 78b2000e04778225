/**
 * Bearer authentication: a token issued by this service becomes the caller's principal; anything else is 401
 * with `WWW-Authenticate: Bearer`. What the principal may do is decided by the engine, per request.
 */
import { Authentication, UpstreamBearer } from "@arbor/api/Api"
import { Errors, Principal, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/** The refusal of a request without a bearer token. */
export const missing = () => new Errors.Unauthenticated({ why: "a bearer token is required", reason: "MISSING_TOKEN" })

/** The bearer token of an `authorization` header or metadata value, or "" when it carries none. */
export const bearerIn = (authorization: string | null | undefined): string =>
  /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim() ?? ""

/** The caller a bearer token names, verified by `issuer`; a missing one is 401. */
export const principal = (issuer: TokenIssuer.TokenIssuer, token: string) =>
  token === ""
    ? Effect.fail(missing())
    : Effect.map(issuer.verify(token), (verified) => Principal.identity(verified.identity))

/** The middleware, over the token issuer. */
export const layer = Layer.effect(
  Authentication,
  Effect.map(TokenIssuer.TokenIssuer, (issuer) => ({
    bearer: (token: Redacted.Redacted) => principal(issuer, Redacted.value(token).trim())
  }))
)

/** The token exchange's bearer, handed to the engine as it is: the engine verifies it. */
export const upstreamLayer = Layer.succeed(UpstreamBearer, {
  upstreamToken: (token: Redacted.Redacted) => {
    const value = Redacted.value(token).trim()
    return value === "" ? Effect.fail(missing()) : Effect.succeed(value)
  }
})
