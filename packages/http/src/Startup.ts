/**
 * What a person sees of the server's start and stop: a log line when it is ready (where it listens, where the API
 * reference is) and when it has stopped; when it cannot start, one plain line on stderr naming the setting or the
 * resource at fault and what to do, and the same reason as a JSON log line, never a stack dump.
 */
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"

/** The problems one configuration error holds, each as `NAME must …` (or `NAME: …` for the library's messages). */
const configProblems = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...configProblems(error.left), ...configProblems(error.right)]
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported": {
      const name = error.path.join(".")
      if (name === "") return [error.message]
      return [/^[a-z]/.test(error.message) ? `${name} ${error.message}` : `${name}: ${error.message}`]
    }
  }
}

/** The Node error code anywhere in `error`'s chain of causes. */
const codeOf = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; typeof current === "object" && current !== null && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** The message of `error`, with its cause's when that says more. */
const messageOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error && !error.message.includes(error.cause.message)
    ? `: ${error.cause.message}`
    : ""
  return `${error.message}${cause}`
}

/** Where the server was asked to listen, for naming it in an explanation. */
export interface Listening {
  readonly host: string
  readonly port: number
}

/** Why the server could not start, in plain words, with the fix where one is known. */
export const explain = (cause: Cause.Cause<unknown>, listening: Listening): string => {
  const failures = [...Cause.failures(cause), ...Cause.defects(cause)]
  const problems = failures.flatMap((failure): ReadonlyArray<string> => {
    if (ConfigError.isConfigError(failure)) return configProblems(failure)
    switch (codeOf(failure)) {
      case "EADDRINUSE":
        return [`port ${listening.port} on ${listening.host} is in use: stop what listens there, or set PORT`]
      case "EACCES":
        return [`port ${listening.port} may not be opened by this user: set PORT to 1024 or above`]
      case "EADDRNOTAVAIL":
        return [`${listening.host} is not an address of this machine: set ARBOR_HOST`]
      default:
        return [messageOf(failure)]
    }
  })
  return problems.length === 0 ? "it was stopped while starting" : problems.join("; ")
}

/**
 * Reports a start that failed: the plain line on stderr (`arbor: cannot start: …`) and an ERROR log line with the
 * same reason. An interruption (a signal while starting) is not a failure.
 */
export const report = (cause: Cause.Cause<unknown>, listening: Listening): Effect.Effect<void> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.void
  const reason = explain(cause, listening)
  return Effect.zipRight(
    Effect.sync(() => process.stderr.write(`arbor: cannot start: ${reason}\n`)),
    Effect.logError("cannot start").pipe(Effect.annotateLogs({ reason }))
  )
}
