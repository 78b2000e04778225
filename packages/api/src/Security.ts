/**
 * How a request says who it is: the bearer-token middleware that establishes the caller of every authenticated
 * endpoint, and the one that hands the token exchange its upstream token. The server implements both
 * (`@arbor/http`'s `Authentication`); clients send `authorization: Bearer <token>`.
 */
import * as Errors from "@arbor/core/Errors"
import type { Principal } from "@arbor/core/Principal"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import * as Context from "effect/Context"
import * as ErrorBody from "./ErrorBody.js"

/** The caller of a request, established by the bearer middleware. */
export class CurrentPrincipal extends Context.Tag("@arbor/api/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** The bearer-token middleware: provides the caller, or fails with 401. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@arbor/api/Authentication", {
  failure: ErrorBody.declared(
    Errors.Unauthenticated,
    401,
    "missing, malformed, expired or otherwise invalid bearer token"
  ),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The raw bearer of a token exchange: the workload's own OIDC token, verified by the engine. */
export class UpstreamToken extends Context.Tag("@arbor/api/UpstreamToken")<UpstreamToken, string>() {}

/** Hands the exchange its bearer; a missing one is 401. */
export class UpstreamBearer extends HttpApiMiddleware.Tag<UpstreamBearer>()("@arbor/api/UpstreamBearer", {
  failure: ErrorBody.declared(Errors.Unauthenticated, 401, "missing or malformed bearer token"),
  provides: UpstreamToken,
  security: {
    upstreamToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "the workload's own OIDC token (GitHub Actions, GitLab CI, Kubernetes, …)"
      )
    )
  }
}) {}

/**
 * Refuses a query parameter the method does not take, whatever the method (a DELETE's as a list's): 400
 * INVALID_ARGUMENT naming it, nothing done (DECISIONS §18, §20), as gRPC refuses a field it does not know. On every
 * group of the API (`ListQuery.declaredParameters` says what each endpoint takes).
 */
export class KnownParameters extends HttpApiMiddleware.Tag<KnownParameters>()("@arbor/api/KnownParameters", {
  failure: ErrorBody.declared(Errors.InvalidArgument, 400, "a query parameter the method does not take")
}) {}
