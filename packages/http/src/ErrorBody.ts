/**
 * Errors on the wire (docs/api.md §6): every failure, from the engine or from HTTP itself, becomes
 * `{"code", "message", "details"}` with exactly one `ErrorInfo` and the detail of its kind, under the HTTP status
 * that google/rpc/code.proto gives its code. This module is the only place that renders errors.
 */
import type { Errors } from "@arbor/core"
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

const codeOf: Readonly<Record<Errors.ArborError["_tag"], CodeName>> = {
  InvalidArgument: "INVALID_ARGUMENT",
  NotFound: "NOT_FOUND",
  AlreadyExists: "ALREADY_EXISTS",
  PermissionDenied: "PERMISSION_DENIED",
  Unauthenticated: "UNAUTHENTICATED",
  FailedPrecondition: "FAILED_PRECONDITION",
  Aborted: "ABORTED",
  Internal: "INTERNAL"
}

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
    case "Aborted":
      details.push({ "@type": typeUrl("RetryInfo"), retryDelay: "1s" })
      break
  }
  return {
    status: httpStatus[code]!,
    body: {
      code,
      message: error.message,
      details: [{ "@type": typeUrl("ErrorInfo"), reason: error.reason ?? name, domain, metadata }, ...details]
    },
    headers: error._tag === "Unauthenticated" ? { "www-authenticate": "Bearer" } : {}
  }
}
