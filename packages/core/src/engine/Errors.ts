/**
 * The engine's typed errors, one per google.rpc code in use. Each carries what an edge needs to render it (a
 * message, an optional specific reason, and its detail payload) and nothing about transports.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** One invalid field of a request, named as the API names it (`name`, `claimMatch.issuer`, `page_size`). */
export class FieldViolation extends Schema.Class<FieldViolation>("@arbor/core/FieldViolation")({
  field: Schema.String,
  description: Schema.String
}) {}

/** One unmet precondition: its type (`RESOURCE_NOT_EMPTY`), the resource it concerns, and a description. */
export class PreconditionViolation extends Schema.Class<PreconditionViolation>("@arbor/core/PreconditionViolation")({
  type: Schema.String,
  subject: Schema.String,
  description: Schema.String
}) {}

/** A more specific UPPER_SNAKE reason than the code's own name, for `ErrorInfo.reason`. */
const reason = Schema.optional(Schema.String)

/** The request is malformed: one violation per bad field (code 3). */
export class InvalidArgument extends Schema.TaggedError<InvalidArgument>()("InvalidArgument", {
  violations: Schema.NonEmptyArray(FieldViolation),
  reason
}) {
  override get message(): string {
    const first = this.violations[0]
    return `Invalid argument: ${first.field}: ${first.description}`
  }

  /** One violation. */
  static field(field: string, description: string): InvalidArgument {
    return new InvalidArgument({ violations: [new FieldViolation({ field, description })] })
  }

  /** The same violations, each field below `path` (`sink` within `subscriptions[0]`: `subscriptions[0].sink`). */
  within(path: string): InvalidArgument {
    const [first, ...rest] = this.violations
    const moved = (v: FieldViolation) => new FieldViolation({ ...v, field: `${path}.${v.field}` })
    return new InvalidArgument({ violations: [moved(first), ...rest.map(moved)], reason: this.reason })
  }
}

/** The resource does not exist, and the caller may know that (code 5). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resourceType: Schema.String,
  uid: Schema.String,
  reason
}) {
  override get message(): string {
    return `Not found: ${this.resourceType} ${this.uid}`
  }
}

/** A create or rename collides with an existing resource (code 6). */
export class AlreadyExists extends Schema.TaggedError<AlreadyExists>()("AlreadyExists", {
  resourceType: Schema.String,
  description: Schema.String,
  reason
}) {
  override get message(): string {
    return `Already exists: ${this.description}`
  }
}

/** The caller lacks `capability` on `resource`, or the resource might not exist (code 7). */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  capability: Schema.String,
  resource: Schema.String,
  reason,
  /** Why, for the server's log only; never shown to the caller. */
  logDetail: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `Permission '${this.capability}' denied on resource '${this.resource}' (or it might not exist)`
  }
}

/** No valid credentials (code 16). `why` is safe to show to the caller. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  why: Schema.String,
  reason
}) {
  override get message(): string {
    return `Unauthenticated: ${this.why}`
  }
}

/** Too many requests of this kind for now: retry after `retryAfterSeconds` (code 8). */
export class ResourceExhausted extends Schema.TaggedError<ResourceExhausted>()("ResourceExhausted", {
  description: Schema.String,
  retryAfterSeconds: Schema.Int,
  reason
}) {
  override get message(): string {
    return `Resource exhausted: ${this.description}`
  }
}

/** The system is not in a state that allows the operation (code 9). */
export class FailedPrecondition extends Schema.TaggedError<FailedPrecondition>()("FailedPrecondition", {
  summary: Schema.String,
  violations: Schema.NonEmptyArray(PreconditionViolation),
  reason
}) {
  override get message(): string {
    return `Precondition failed: ${this.summary}`
  }
}

/** The operation lost a race with a concurrent one and may be retried (code 10). */
export class Aborted extends Schema.TaggedError<Aborted>()("Aborted", {
  description: Schema.String,
  reason,
  /** When retrying the same request later may succeed (another's work on the same thing ends): after how long. */
  retryAfterSeconds: Schema.optional(Schema.Int)
}) {
  override get message(): string {
    return `Aborted: ${this.description}`
  }
}

/** A service the operation needs (an upstream provider) cannot be reached now; a retry may succeed (code 14). */
export class Unavailable extends Schema.TaggedError<Unavailable>()("Unavailable", {
  description: Schema.String,
  reason,
  /** Why, for the server's log only; never shown to the caller. */
  logDetail: Schema.optional(Schema.String),
  /**
   * The failure underneath, for logs only (and for a store, to see a lost race worth retrying in it), never for
   * callers.
   */
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `Unavailable: ${this.description}`
  }
}

/** Something failed inside the engine; `cause` is for logs only, never for callers (code 13). */
export class Internal extends Schema.TaggedError<Internal>()("Internal", {
  cause: Schema.optional(Schema.Defect),
  reason
}) {
  override get message(): string {
    return "Internal error"
  }
}

/**
 * Fails with an internal error of `cause`, which is logged here, once, at level ERROR, in the fiber that met it (so
 * beside its request's id): the caller is told nothing of it, the operator everything (DECISIONS §20).
 */
export const internal = (cause: unknown, reason?: string, logged = true): Effect.Effect<never, Internal> => {
  const failure = Effect.fail(new Internal({ cause, ...(reason === undefined ? {} : { reason }) }))
  return logged
    ? Effect.zipRight(
      Effect.logError(`internal error${reason === undefined ? "" : ` (${reason})`}`, Cause.die(cause)),
      failure
    )
    : failure
}

/**
 * Fails with UNAVAILABLE for a store that cannot be reached now (`cause` logged here, once, at WARN, beside the
 * request's id): the caller is told to retry (DECISIONS §20), never that something broke inside.
 */
export const storeUnavailable = (
  cause: unknown,
  logged = true,
  /** Reachable, but concurrent writes kept winning the race this one lost (the store gave up retrying it). */
  contended = false
): Effect.Effect<never, Unavailable> => {
  const failure = Effect.fail(
    new Unavailable({
      description: contended
        ? "concurrent writes kept conflicting with this one; retry shortly"
        : "the store cannot be reached now; retry shortly",
      reason: "STORE_UNAVAILABLE",
      cause
    })
  )
  return logged ? Effect.zipRight(Effect.logWarning("the store cannot be reached", Cause.die(cause)), failure) : failure
}

/** Any error the engine's services fail with. */
export const ArborError = Schema.Union(
  InvalidArgument,
  NotFound,
  AlreadyExists,
  PermissionDenied,
  Unauthenticated,
  ResourceExhausted,
  FailedPrecondition,
  Aborted,
  Unavailable,
  Internal
)
export type ArborError = typeof ArborError.Type

/** What any operation that reads or writes the store may fail with: the store out of reach, or a fault inside. */
export type StoreFailure = Internal | Unavailable

/** What a list may fail with: a bad option (a filter, an order, a page token) besides the store's failures. */
export type ListFailure = StoreFailure | InvalidArgument

/** What reading one resource may fail with: it is missing, or the caller may not read it. */
export type ReadFailure = ListFailure | NotFound | PermissionDenied

/** What a write may fail with: a name taken, a precondition unmet, a conflicting write (an etag), besides a read's. */
export type WriteFailure = ReadFailure | AlreadyExists | FailedPrecondition | Aborted
