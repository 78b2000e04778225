/**
 * The piece of the server's middleware that renders every failure as a google.rpc.Status body (SCIM's error body
 * under `/scim/`): engine errors,
 * undecodable parameters and bodies, unknown routes and methods, defects. No framework default error body reaches
 * a client.
 */
import { isArborError, render } from "@arbor/api/ErrorBody"
import * as Scim from "@arbor/api/Scim"
import { Errors, Validation } from "@arbor/core"
import { type HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as CurrentRequest from "./CurrentRequest.js"

interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly _tag?: string
}

/** Undecodable parameters or bodies as one violation per field. */
const fromIssues = (issues: ReadonlyArray<Issue>): Errors.InvalidArgument => {
  const seen = new Set<string>()
  const violations: Array<Errors.FieldViolation> = []
  for (const issue of issues) {
    const field = Validation.fieldName(issue.path)
    if (seen.has(field)) continue
    seen.add(field)
    violations.push(new Errors.FieldViolation({ field, description: Validation.describeIssue(issue) }))
  }
  const [first, ...rest] = violations
  return first === undefined
    ? Errors.InvalidArgument.field("request", "is not valid")
    : new Errors.InvalidArgument({ violations: [first, ...rest] })
}

const issuesOf = (error: object): ReadonlyArray<Issue> =>
  "issues" in error && Array.isArray(error.issues) ? error.issues : []

/** The engine error a failure stands for, or undefined for an unexpected one (a defect). */
export const classify = (
  error: unknown,
  request: HttpServerRequest.HttpServerRequest
): Errors.ArborError | undefined => {
  if (isArborError(error)) return error
  if (ParseResult.isParseError(error)) return fromIssues(ParseResult.ArrayFormatter.formatErrorSync(error))
  if (Predicate.isTagged(error, "HttpApiDecodeError")) return fromIssues(issuesOf(error))
  if (Predicate.isTagged(error, "RouteNotFound")) {
    return new Errors.NotFound({ resourceType: "route", uid: `${request.method} ${request.url.split("?")[0]}` })
  }
  // A body that `RequestLimits` already read, checked for size and encoding, and kept: what fails now is its JSON.
  if (error instanceof HttpServerError.RequestError) {
    return new Errors.InvalidArgument({
      violations: [
        new Errors.FieldViolation({
          field: "body",
          description: error.reason === "Decode" ? "is not valid JSON" : "could not be read"
        })
      ],
      reason: "MALFORMED_BODY"
    })
  }
  return undefined
}

/** `app`, every failure answered as a google.rpc.Status body with `domain` as its `ErrorInfo.domain`. */
export const middleware = (domain: string) => <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<never, R> =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const current = CurrentRequest.of(request)
      const respond = (error: Errors.ArborError) => {
        if (error._tag === "PermissionDenied" && current !== undefined) current.denied = error.logDetail
        const rendered = request.url.startsWith("/scim/") ? Scim.error(error) : render(error, domain)
        return HttpServerResponse.unsafeJson(rendered.body, { status: rendered.status, headers: rendered.headers })
      }
      // Some request errors (a malformed JSON body) arrive as defects: classify those too.
      const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
      const known = Option.isSome(failure) ? classify(failure.value, request) : undefined
      if (known !== undefined) return respond(known)
      // A client that went away interrupts its request: nothing to report, and nobody to answer.
      if (Cause.isInterruptedOnly(cause)) return respond(new Errors.Internal({ reason: "CANCELLED" }))
      yield* Effect.logError("request failed", cause)
      return respond(new Errors.Internal({}))
    }))
