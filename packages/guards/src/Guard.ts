/**
 * A guard: the bearer token of a request becomes the caller's principal (the engine's `Authentication`), which must
 * hold a capability at the group the request names (`Access.can`, the decision every API operation makes, from the
 * current bindings). A refusal is the engine's own error body: 401 with `WWW-Authenticate: Bearer` without a valid
 * token, 403 without the capability. The framework adapters (`Express`, `Hono`, `HttpApiGuard`) are thin over it.
 */
import * as ErrorBody from "@arbor/api/ErrorBody"
import { Access, Authentication, Capability, Errors, Uid } from "@arbor/core"
import type { Principal } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ManagedRuntime from "effect/ManagedRuntime"

/** What a guard answers a refused request with: the engine's error body, its status and headers. */
export interface Refusal {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

/** A guard's decision: the caller, or the refusal to answer. */
export type Decision =
  | { readonly allowed: true; readonly principal: Principal.Principal }
  | { readonly allowed: false; readonly refusal: Refusal }

/** A guard over an engine. */
export interface Guard {
  /**
   * Decides a request: its `Authorization` header must carry a token of the engine whose principal holds
   * `capability` at `group`.
   */
  readonly check: (
    authorization: string | null | undefined,
    capability: Capability.Capability,
    group: string
  ) => Promise<Decision>
}

/** A capability named in either spelling; a name that is none is the guard's author's mistake, thrown at once. */
export const capability = (name: string): Capability.Capability => {
  const known = Capability.fromName(name)
  if (known === undefined) throw new TypeError(`'${name}' is not an Arbor capability`)
  return known
}

/** `principal`, once it holds `capability` at `group`; PermissionDenied otherwise (and for a group that is no uid). */
export const authorize = (principal: Principal.Principal, held: Capability.Capability, group: string) =>
  Effect.flatMap(Access.Access, (access) =>
    Uid.isUid(group)
      ? Effect.flatMap(access.can(principal, held, group), (can) =>
        can
          ? Effect.succeed(principal)
          : Effect.fail(new Errors.PermissionDenied({ capability: held, resource: group })))
      : Effect.fail(new Errors.PermissionDenied({ capability: held, resource: group })))

/**
 * A guard over `runtime`, an engine with its token issuer (`Authentication`) and `Access`; refusals name
 * `errorDomain` as the API's do.
 */
export const make = (
  runtime: ManagedRuntime.ManagedRuntime<Authentication.Authentication | Access.Access, unknown>,
  options: { readonly errorDomain?: string } = {}
): Guard => {
  const domain = options.errorDomain ?? "iam.arbor.dev"
  return {
    check: (authorization, held, group) =>
      runtime.runPromise(
        Effect.gen(function*() {
          const authentication = yield* Authentication.Authentication
          const principal = yield* authentication.authenticate(Authentication.bearerIn(authorization))
          return yield* authorize(principal, held, group)
        }).pipe(Effect.either)
      ).then(Either.match({
        onLeft: (error): Decision => ({ allowed: false, refusal: ErrorBody.render(error, domain) }),
        onRight: (principal): Decision => ({ allowed: true, principal })
      }))
  }
}
