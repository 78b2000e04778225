/**
 * The Authentication service: a bearer token of this engine's `TokenIssuer` becomes the caller's principal, with what
 * its claims say of how it signed in (the upstream token it was exchanged for, a person's verified email, what it was
 * narrowed to, the group mappings and the identity provider of its sign-in); anything else is `Unauthenticated`. The
 * server's REST and gRPC surfaces and the guards of `@arbor/guards` use it alike.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Errors from "../engine/Errors.js"
import { operation } from "../engine/internal/tracing.js"
import * as Uid from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import { Authorization } from "../iam/Authorization.js"
import * as Capability from "../iam/Capability.js"
import * as Principal from "../iam/Principal.js"
import { TokenIssuer } from "./TokenIssuer.js"

/** The refusal of a request without a bearer token. */
export const missing = () => new Errors.Unauthenticated({ why: "a bearer token is required", reason: "MISSING_TOKEN" })

/** The bearer token of an `Authorization` header (or gRPC metadata) value, or "" when it carries none. */
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

/** The principal a verified token's claims name. */
export const principalOf = (identity: Uid.Uid, claims: Record<string, unknown>): Principal.Principal =>
  Principal.identity(identity, {
    act: Option.getOrUndefined(actOf(claims.act)),
    email: typeof claims.email === "string" ? claims.email : undefined,
    narrowed: narrowingOf(claims),
    mappings: claims.mappings === undefined ? undefined : strings(claims.mappings).filter(Uid.isUid),
    provider: Uid.isUid(claims.idp) ? claims.idp : undefined
  })

/**
 * A caller's authority as its token gives it, for what outlives one request (a watch stream): the principal as a
 * request with the same token would find it now, failing once such a request would be refused, and when the token
 * expires (epoch milliseconds).
 */
export interface Authority {
  readonly current: Effect.Effect<Principal.Principal, Errors.Unauthenticated | Errors.StoreFailure>
  readonly expiresAt: number
}

/** The Authentication service: who a bearer token speaks for, checked as every request checks it. */
export interface AuthenticationService {
  /**
   * The caller `token` names: `Unauthenticated` when it is missing (""), not this issuer's, expired, or from a
   * sign-in whose identity provider has since deprovisioned its person.
   */
  readonly authenticate: (
    token: string
  ) => Effect.Effect<Principal.Principal, Errors.StoreFailure | Errors.Unauthenticated>
  /** `token`'s authority, checked again by `current` with the same function as every request (`authenticate`). */
  readonly authority: (token: string) => Effect.Effect<Authority, Errors.StoreFailure | Errors.Unauthenticated>
}

/** Bearer tokens as principals. */
export class Authentication extends Effect.Service<Authentication>()("@arbor/core/Authentication", {
  effect: Effect.gen(function*() {
    const issuer = yield* TokenIssuer
    const authorization = yield* Authorization
    /**
     * The caller `token` names: `Unauthenticated` when it is missing (""), not this issuer's, expired, or from a
     * sign-in whose identity provider has since deprovisioned its person.
     */
    const authenticate = (
      token: string
    ): Effect.Effect<Principal.Principal, Errors.Unauthenticated | Errors.StoreFailure> =>
      operation("Authentication.authenticate")(
        token === ""
          ? Effect.fail(missing())
          : Effect.flatMap(
            issuer.verify(token),
            ({ claims, identity }) => authorization.admit(principalOf(identity, claims))
          )
      )
    const service: AuthenticationService = {
      authenticate,
      authority: (
        token: string
      ): Effect.Effect<Authority, Errors.Unauthenticated | Errors.StoreFailure> =>
        Effect.map(
          Effect.zipRight(authenticate(token), issuer.verify(token)),
          ({ claims }) => ({ current: authenticate(token), expiresAt: (claims.exp ?? 0) * 1000 })
        )
    }
    return service
  })
}) {}
