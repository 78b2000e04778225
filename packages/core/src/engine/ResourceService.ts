/**
 * What the services of resources offer, declared once: each service states which of these it implements, and the
 * edges (REST, gRPC, the command-line client) map these interfaces rather than restating them.
 *
 * Inputs are `unknown`, because that is what they are: the request's body, which the engine decodes after the
 * permission check (a caller without access learns nothing from a body's errors) and whose every bad field it reports.
 */
import type * as Effect from "effect/Effect"
import type { Principal } from "../iam/Principal.js"
import type { ListFailure, ReadFailure, WriteFailure } from "./Errors.js"
import type { ListOptions, Page } from "./Lists.js"

/** A resource the caller lists and gets. */
export interface Readable<A, O extends ListOptions = ListOptions> {
  /** One page of the resources the caller may list. */
  readonly list: (principal: Principal, options?: O) => Effect.Effect<Page<A>, ListFailure>
  /** One resource by uid. */
  readonly get: (principal: Principal, uid: string) => Effect.Effect<A, ReadFailure>
}

/** A resource the caller also creates (below a parent) and deletes, but never changes. */
export interface Creatable<A, O extends ListOptions = ListOptions> extends Readable<A, O> {
  /** Creates a resource below `parent` from the fields of `input`. */
  readonly create: (principal: Principal, parent: string, input: unknown) => Effect.Effect<A, WriteFailure>
  readonly delete: (principal: Principal, uid: string) => Effect.Effect<void, WriteFailure>
}

/** A resource the caller also creates (below a parent), updates and deletes. */
export interface Writable<A, O extends ListOptions = ListOptions> extends Creatable<A, O> {
  /** Changes the fields present in `patch`, or those `updateMask` names (`*`: every mutable field). */
  readonly update: (
    principal: Principal,
    uid: string,
    patch: unknown,
    updateMask?: string
  ) => Effect.Effect<A, WriteFailure>
}
