/**
 * Errors on the wire (docs/api.md §6): every failure, from the engine or from HTTP itself, is
 * `{"code", "message", "details"}` with exactly one `ErrorInfo` and the detail of its kind, under the HTTP status
 * that google/rpc/code.proto gives its code. `render` turns an engine error into that body; `parse` turns a body
 * back into the engine error, so a client fails with the same typed errors as the engine.
 */
import * as Errors from "@arbor/core/Errors"
import type { HttpApi, HttpApiGroup } from "@effect/platform"
import { HttpApiSchema } from "@effect/platform"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** google.rpc codes used here, by name. */
export const codes = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16
} as const
export type CodeName = keyof typeof codes

/** HTTP status by google.rpc code. */
export const httpStatus: Readonly<Record<number, number>> = {
  3: 400,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  10: 409,
  12: 501,
  13: 500,
  14: 503,
  16: 401
}

const codeOf: { readonly [Tag in Errors.ArborError["_tag"]]: CodeName } = {
  InvalidArgument: "INVALID_ARGUMENT",
  NotFound: "NOT_FOUND",
  AlreadyExists: "ALREADY_EXISTS",
  PermissionDenied: "PERMISSION_DENIED",
  Unauthenticated: "UNAUTHENTICATED",
  ResourceExhausted: "RESOURCE_EXHAUSTED",
  FailedPrecondition: "FAILED_PRECONDITION",
  Aborted: "ABORTED",
  Unavailable: "UNAVAILABLE",
  Internal: "INTERNAL"
}

/** True for an engine error: an `Error` whose tag is one of theirs. */
export const isArborError = (u: unknown): u is Errors.ArborError =>
  u instanceof Error && "_tag" in u && typeof u._tag === "string" && Object.hasOwn(codeOf, u._tag)

const typeUrl = (kind: string) => `type.googleapis.com/google.rpc.${kind}`

/** The JSON body of an error. */
export const ErrorBody = Schema.Struct({
  code: Schema.Number.annotations({ description: "google.rpc.Code" }),
  message: Schema.String,
  details: Schema.Array(
    Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
      Schema.extend(Schema.Struct({ "@type": Schema.String }))
    )
  )
}).annotations({ identifier: "Status", description: "google.rpc.Status" })
export type ErrorBody = typeof ErrorBody.Type

/** A rendered error: status, body, and headers to add. */
export interface Rendered {
  readonly status: number
  readonly body: ErrorBody
  readonly headers: Readonly<Record<string, string>>
}

/** Renders an engine error, with `domain` as `ErrorInfo.domain`. */
/**
 * The HTTP status of an error: its code's (google/rpc/code.proto), but 413 for a body over the limit (DECISIONS §20),
 * whose code stays INVALID_ARGUMENT.
 */
export const statusOf = (error: Errors.ArborError, code: number): number =>
  error._tag === "InvalidArgument" && error.reason === tooLargeReason ? 413 : httpStatus[code]!

/** The reason of a body over the limit. */
export const tooLargeReason = "REQUEST_TOO_LARGE"

export const render = (error: Errors.ArborError, domain: string): Rendered => {
  const name = codeOf[error._tag]
  const code = codes[name]
  const metadata: Record<string, string> = {}
  const details: Array<{ readonly "@type": string; readonly [key: string]: unknown }> = []
  switch (error._tag) {
    case "InvalidArgument":
      details.push({
        "@type": typeUrl("BadRequest"),
        fieldViolations: error.violations.map((v) => ({ field: v.field, description: v.description }))
      })
      break
    case "NotFound":
      details.push({ "@type": typeUrl("ResourceInfo"), resourceType: error.resourceType, resourceName: error.uid })
      break
    case "AlreadyExists":
      details.push({
        "@type": typeUrl("ResourceInfo"),
        resourceType: error.resourceType,
        description: error.description
      })
      break
    case "PermissionDenied":
      metadata.capability = error.capability
      metadata.resource = error.resource
      break
    case "FailedPrecondition":
      details.push({
        "@type": typeUrl("PreconditionFailure"),
        violations: error.violations.map((v) => ({ type: v.type, subject: v.subject, description: v.description }))
      })
      break
    case "ResourceExhausted":
      details.push({ "@type": typeUrl("RetryInfo"), retryDelay: `${error.retryAfterSeconds}s` })
      break
    case "Aborted":
      details.push({ "@type": typeUrl("RetryInfo"), retryDelay: `${error.retryAfterSeconds ?? 1}s` })
      break
  }
  return {
    status: statusOf(error, code),
    body: {
      code,
      message: error.message,
      details: [{ "@type": typeUrl("ErrorInfo"), reason: error.reason ?? name, domain, metadata }, ...details]
    },
    headers: error._tag === "Unauthenticated"
      ? { "www-authenticate": "Bearer" }
      : error._tag === "ResourceExhausted"
      ? { "retry-after": String(error.retryAfterSeconds) }
      : error._tag === "Unavailable"
      ? { "retry-after": "1" }
      : error._tag === "Aborted" && error.retryAfterSeconds !== undefined
      ? { "retry-after": String(error.retryAfterSeconds) }
      : {}
  }
}

const ErrorInfo = Schema.Struct({
  reason: Schema.optional(Schema.String),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})
const BadRequest = Schema.Struct({
  fieldViolations: Schema.Array(Schema.Struct({ field: Schema.String, description: Schema.String }))
})
const ResourceInfo = Schema.Struct({
  resourceType: Schema.optionalWith(Schema.String, { default: () => "" }),
  resourceName: Schema.optionalWith(Schema.String, { default: () => "" }),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
})
const RetryInfo = Schema.Struct({ retryDelay: Schema.String })
const PreconditionFailure = Schema.Struct({
  violations: Schema.Array(Schema.Struct({ type: Schema.String, subject: Schema.String, description: Schema.String }))
})

/** The first detail of `kind` in a body, decoded; undefined when absent or malformed. */
const detail = <A, I>(body: ErrorBody, kind: string, schema: Schema.Schema<A, I>): A | undefined => {
  const found = body.details.find((d) => d["@type"] === typeUrl(kind))
  return found === undefined ? undefined : Option.getOrUndefined(Schema.decodeUnknownOption(schema)(found))
}

/** The text after the engine's own prefix of a message (`Aborted: `), or the whole message. */
const after = (message: string, prefix: string) => message.startsWith(prefix) ? message.slice(prefix.length) : message

/**
 * The engine error a body stands for, or undefined for a code the engine does not use. Each error's fields come
 * from the detail `render` writes for it; a missing detail leaves them empty rather than failing.
 */
export const parse = (body: ErrorBody): Errors.ArborError | undefined => {
  const info = detail(body, "ErrorInfo", ErrorInfo)
  const name = (Object.keys(codes) as Array<CodeName>).find((n) => codes[n] === body.code)
  const reason = info?.reason === undefined || info.reason === name ? {} : { reason: info.reason }
  switch (name) {
    case "INVALID_ARGUMENT": {
      const [first, ...rest] = (detail(body, "BadRequest", BadRequest)?.fieldViolations ?? []).map((v) =>
        new Errors.FieldViolation(v)
      )
      const violations = first === undefined
        ? [new Errors.FieldViolation({ field: "request", description: body.message })] as const
        : [first, ...rest] as const
      return new Errors.InvalidArgument({ violations, ...reason })
    }
    case "NOT_FOUND": {
      const resource = detail(body, "ResourceInfo", ResourceInfo)
      return new Errors.NotFound({
        resourceType: resource?.resourceType ?? "",
        uid: resource?.resourceName ?? "",
        ...reason
      })
    }
    case "ALREADY_EXISTS":
      return new Errors.AlreadyExists({
        resourceType: detail(body, "ResourceInfo", ResourceInfo)?.resourceType ?? "",
        description: after(body.message, "Already exists: "),
        ...reason
      })
    case "PERMISSION_DENIED":
      return new Errors.PermissionDenied({
        capability: info?.metadata?.capability ?? "",
        resource: info?.metadata?.resource ?? "",
        ...reason
      })
    case "UNAUTHENTICATED":
      return new Errors.Unauthenticated({ why: after(body.message, "Unauthenticated: "), ...reason })
    case "RESOURCE_EXHAUSTED":
      return new Errors.ResourceExhausted({
        description: after(body.message, "Resource exhausted: "),
        retryAfterSeconds: Math.max(
          0,
          Math.ceil(Number.parseFloat(detail(body, "RetryInfo", RetryInfo)?.retryDelay ?? "0") || 0)
        ),
        ...reason
      })
    case "FAILED_PRECONDITION": {
      const [first, ...rest] = (detail(body, "PreconditionFailure", PreconditionFailure)?.violations ?? []).map((v) =>
        new Errors.PreconditionViolation(v)
      )
      const summary = after(body.message, "Precondition failed: ")
      const violations = first === undefined
        ? [new Errors.PreconditionViolation({ type: "", subject: "", description: summary })] as const
        : [first, ...rest] as const
      return new Errors.FailedPrecondition({ summary, violations, ...reason })
    }
    case "ABORTED":
      return new Errors.Aborted({ description: after(body.message, "Aborted: "), ...reason })
    case "UNAVAILABLE":
      return new Errors.Unavailable({ description: after(body.message, "Unavailable: "), ...reason })
    case "INTERNAL":
      return new Errors.Internal({ ...reason })
  }
  return undefined
}

/**
 * The wire form of one engine error, for an API declaration: decodes a body of the error's code into the error,
 * and encodes the error as `render` does (under the domain `arbor`; the server renders with its own).
 */
export const schema = <A extends Errors.ArborError, I>(error: Schema.Schema<A, I>): Schema.Schema<A, ErrorBody> => {
  const target = Schema.typeSchema(error)
  return Schema.transformOrFail(ErrorBody, target, {
    strict: true,
    decode: (body, _, ast) => {
      const parsed = parse(body)
      return parsed !== undefined && Schema.is(target)(parsed)
        ? ParseResult.succeed(parsed)
        : ParseResult.fail(new ParseResult.Type(ast, body, "a body of another code"))
    },
    encode: (e) => ParseResult.succeed(render(e, "arbor").body)
  })
}

/** A declared error: the engine's error, under the status of its code. */
export const declared = <A extends Errors.ArborError, I>(
  error: Schema.Schema<A, I>,
  status: number,
  description: string
) => schema(error).annotations({ ...HttpApiSchema.annotations({ status }), description })

/** An API that may answer every error of the engine, each under its status (docs/api.md §6). */
export const declareErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  api
    .addError(declared(Errors.InvalidArgument, 400, "invalid argument (code 3)"))
    .addError(declared(Errors.FailedPrecondition, 400, "failed precondition (code 9)"))
    .addError(declared(Errors.PermissionDenied, 403, "permission denied (code 7), whether or not the resource exists"))
    .addError(declared(Errors.NotFound, 404, "not found (code 5)"))
    .addError(declared(Errors.AlreadyExists, 409, "already exists (code 6)"))
    .addError(declared(Errors.ResourceExhausted, 429, "resource exhausted (code 8): too many requests; retry later"))
    .addError(declared(Errors.Aborted, 409, "aborted (code 10): retry"))
    .addError(declared(Errors.Internal, 500, "internal error (code 13)"))
    .addError(declared(Errors.Unavailable, 503, "unavailable (code 14): a service it needs cannot be reached; retry"))
