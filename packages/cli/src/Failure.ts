/**
 * How a command fails, and the exit code each failure gives (0 ok, 1 error, 2 usage, 3 not logged in or token
 * expired, 4 permission denied, 5 not found). The server's own message is what the user sees, never a stack trace.
 */
import { ErrorBody } from "@arbor/api"
import * as Schema from "effect/Schema"

/** The command line is wrong. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {}

/** There is no usable token: log in first. */
export class NotLoggedIn extends Schema.TaggedError<NotLoggedIn>()("NotLoggedIn", { message: Schema.String }) {}

/** Anything else that stops a command, in words for the user. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", { message: Schema.String }) {}

/** The exit code of a failure. */
export const exitCode = (error: unknown): number => {
  const tag = (error as { _tag?: unknown } | null)?._tag
  if (tag === "UsageError") return 2
  if (tag === "NotLoggedIn" || tag === "Unauthenticated") return 3
  if (tag === "PermissionDenied") return 4
  if (tag === "NotFound") return 5
  return 1
}

/** The paths of names the person typed, by the uid each resolved to, so that messages can say them back. */
const typed = new Map<string, string>()

/** Remembers that the person named `uid` as `name` (a path of names). */
export const rememberName = (uid: string, name: string) => {
  if (name !== uid) typed.set(uid, name)
}

/** `message` with each uid the person named otherwise shown as they named it, the uid beside it. */
const inPersonsWords = (message: string) =>
  [...typed].reduce((text, [uid, name]) => text.replaceAll(`'${uid}'`, `'${name}' (${uid})`), message)

/** What the user is told of a failure: the server's message for its errors, a plain sentence for the rest. */
export const describe = (error: unknown): string => {
  if (ErrorBody.isArborError(error)) return inPersonsWords(error.message)
  const tag = (error as { _tag?: unknown } | null)?._tag
  if (tag === "RequestError") {
    return `cannot reach the server: ${(error as { cause?: { message?: string } }).cause?.message ?? "no answer"}`
  }
  if (tag === "ResponseError" || tag === "ParseError" || tag === "HttpApiDecodeError") {
    return "the server's answer was not understood (is --api the address of an Arbor server?)"
  }
  return (error as { message?: unknown } | null)?.message?.toString() ?? String(error)
}
