/**
 * Bearer authentication: a token issued by this service becomes the caller's principal; anything else is 401
 * with `WWW-Authenticate: Bearer`. What the principal may do is decided by the engine, per request.
 */
import { Authentication, UpstreamBearer } from "@arbor/api/Api"
import { Authorization, Capability, ChangeLog, Errors, Principal, TokenIssuer, Uid } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/** The refusal of a request without a bearer token. */
export const missing = () => new Errors.Unauthenticated({ why: "a bearer token is required", reason: "MISSING_TOKEN" })

/** The bearer token of an `authorization` header or metadata value, or "" when it carries none. */
export const bearerIn = (authorization: string | null | undefined): string =>
  /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim() ?? ""

const actOf = Schema.decodeUnknownOption(ChangeLog.Act)

/** The strings of a claim; none when it is not an array of strings (a narrowing claim then narrows to nothing). */
const strings = (claim: unknown): ReadonlyArray<string> =>
  Array.isArray(claim) ? claim.filter((value): value is string => typeof value === "string") : []

/** What a token is narrowed to (`cap`, `scopes`), when it is. */
const narrowingOf = (claims: Record<string, unknown>): Principal.Narrowing | undefined =>
  claims.cap === undefined && claims.scopes === undefined ? undefined : {
    ...(claims.cap === undefined
      ? {}
      : { capabilities: strings(claims.cap).flatMap((name) => Capability.fromName(name) ?? []) }),
    ...(claims.scopes === undefined ? {} : { scopes: strings(claims.scopes).filter(Uid.isUid) })
  }

/**
 * The caller a bearer token names, verified by `issuer`, with the upstream token it was exchanged for and a person's
 * verified email (which the change log records of its writes), what the token was narrowed to, the group mappings
 * its sign-in gave and the organization's provider it came through; a missing token, or one whose sign-in's provider
 * has since deprovisioned its person, is 401.
 */
export const principal = (
  issuer: TokenIssuer.TokenIssuer,
  authorization: Authorization.Authorization,
  token: string
) =>
  token === ""
    ? Effect.fail(missing())
    : Effect.flatMap(issuer.verify(token), ({ claims, identity }) =>
      authorization.admit(Principal.identity(identity, {
        act: Option.getOrUndefined(actOf(claims.act)),
        email: typeof claims.email === "string" ? claims.email : undefined,
        narrowed: narrowingOf(claims),
        mappings: claims.mappings === undefined ? undefined : strings(claims.mappings).filter(Uid.isUid),
        provider: Uid.isUid(claims.idp) ? claims.idp : undefined
      })))

/** The middleware, over the token issuer and authorization. */
export const layer = Layer.effect(
  Authentication,
  Effect.zipWith(TokenIssuer.TokenIssuer, Authorization.Authorization, (issuer, authorization) => ({
    // The middleware may fail only as 401: a store that fails is a defect, rendered as 500.
    bearer: (token: Redacted.Redacted) =>
      principal(issuer, authorization, Redacted.value(token).trim()).pipe(Effect.catchTag("Internal", Effect.die))
  }))
)

/** The token exchange's bearer, handed to the engine as it is: the engine verifies it. */
export const upstreamLayer = Layer.succeed(UpstreamBearer, {
  upstreamToken: (token: Redacted.Redacted) => {
    const value = Redacted.value(token).trim()
    return value === "" ? Effect.fail(missing()) : Effect.succeed(value)
  }
})
