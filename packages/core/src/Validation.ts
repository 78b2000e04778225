/**
 * Decoding of caller input into domain values, turning every schema failure into one field violation per bad
 * field.
 */
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { FieldViolation, InvalidArgument } from "./Errors.js"

/** The name of the field at `path` (`a.b[0].c`), after `prefix`; `request` for the whole input. */
export const fieldName = (path: ReadonlyArray<PropertyKey>, prefix = ""): string => {
  let out = prefix
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out === "" ? "request" : out
}

/** A missing field is "required", unless its schema says more (a name states its rule). */
const describe = (issue: ParseResult.ArrayFormatterIssue): string =>
  issue._tag === "Missing" && issue.message === "is missing" ? "is required" : issue.message

const isPrefix = (a: ReadonlyArray<PropertyKey>, b: ReadonlyArray<PropertyKey>) =>
  a.length < b.length && a.every((k, i) => k === b[i])

/** An optional field's `undefined` alternative failing beside the real failure. */
const isUndefinedAlternative = (issue: ParseResult.ArrayFormatterIssue) =>
  issue.message.startsWith("Expected undefined,")

/**
 * The field violations of a parse error, fields prefixed with `prefix`: one per field, the most specific (an issue
 * on an object is dropped when a field inside it has one).
 */
export const violations = (error: ParseResult.ParseError, prefix = ""): Array<FieldViolation> => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const specific = issues.filter((issue) =>
    !issues.some((other) => isPrefix(issue.path, other.path)) &&
    !(isUndefinedAlternative(issue) && issues.some((other) => other !== issue && !isUndefinedAlternative(other)))
  )
  const seen = new Set<string>()
  const out: Array<FieldViolation> = []
  for (const issue of specific) {
    const field = fieldName(issue.path, prefix)
    if (seen.has(field)) continue
    seen.add(field)
    out.push(new FieldViolation({ field, description: describe(issue) }))
  }
  return out
}

/** The InvalidArgument for a parse error. */
export const fromParseError = (error: ParseResult.ParseError, prefix = ""): InvalidArgument => {
  const [first, ...rest] = violations(error, prefix)
  return new InvalidArgument({
    violations: first === undefined
      ? [new FieldViolation({ field: prefix || "request", description: error.message })]
      : [first, ...rest]
  })
}

/** Decodes `input` with `schema`, reporting every bad field. */
export const decode =
  <A, I>(schema: Schema.Schema<A, I>, prefix = "") => (input: unknown): Effect.Effect<A, InvalidArgument> =>
    Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "ignore" })(input).pipe(
      Effect.mapError((error) => fromParseError(error, prefix))
    )
