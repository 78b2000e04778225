/**
 * Decoding of caller input into domain values, turning every schema failure into one field violation per bad
 * field.
 */
import { CompiledSchema } from "@arbor/schema-compiler"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { FieldViolation, InvalidArgument } from "./Errors.js"

/** The rules of a resource's name and description (docs/api.md §2), for clients that check a field as it is typed. */
export { Description, Name } from "./internal/fields.js"

/** The name of the field at `path` (`a.b[0].c`), after `prefix`; `request` for the whole input. */
export const fieldName = (path: ReadonlyArray<PropertyKey>, prefix = ""): string => {
  let out = prefix
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out === "" ? "request" : out
}

/** What the schema library names a type (`string`, `Int`, `{ readonly name: string }`), in the API's words. */
const expected = (type: string): string => {
  if (type === "string" || type.startsWith("a string")) return "must be a string"
  if (type === "number" || type === "Int" || /^(NonNegative|Positive)?Int$|^NonNegative$/.test(type)) {
    return "must be a number"
  }
  if (type === "boolean") return "must be true or false"
  if (type.startsWith("Struct") || type.startsWith("{") || type.startsWith("Record")) return "must be an object"
  if (/^(ReadonlyArray|Array)<|^readonly \[|^\[/.test(type)) return "must be an array"
  if (/^"[^"]*"( \| "[^"]*")+$/.test(type)) return `must be one of ${type.split(" | ").join(", ")}`
  if (/^"[^"]*"$/.test(type)) return `must be ${type}`
  return "has the wrong type"
}

/**
 * An issue's description in the API's words: a missing field is "required", a field of the wrong type says which
 * type it must have, an unknown field is named as such; a schema's own message (a name states its rule) as written.
 * Never the schema library's notation (`Expected Struct (Encoded side), actual [1,2]`).
 */
export const describeIssue = (
  issue: { readonly _tag?: string; readonly message: string; readonly path: ReadonlyArray<PropertyKey> }
): string => {
  if (issue._tag === "Missing" && issue.message === "is missing") return "is required"
  if (issue._tag === "Unexpected" && issue.message.startsWith("is unexpected")) return "is not a field of this request"
  const library = /^Expected (.+?)(?: \(\w+ side\))?, actual [\s\S]*$/.exec(issue.message)
  if (library === null) return issue.message
  const description = expected(library[1]!)
  return issue.path.length === 0 && description === "must be an object" ? "must be a JSON object" : description
}

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
  const byField = new Map<string, Array<string>>()
  for (const issue of specific) {
    const field = fieldName(issue.path, prefix)
    byField.set(field, [...(byField.get(field) ?? []), describeIssue(issue)])
  }
  return [...byField].map(([field, [first, ...rest]]) => {
    // A union of literals fails once per member: together they are the values the field may take.
    const literals = [first!, ...rest].map((description) => /^must be (".*")$/.exec(description)?.[1])
    const description = rest.length > 0 && literals.every((literal) => literal !== undefined)
      ? `must be one of ${literals.join(", ")}`
      : first!
    return new FieldViolation({ field, description })
  })
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

/**
 * Decodes `input` with `schema`, reporting every bad field. Input it accepts takes the schema's compiled decoder
 * (`CompiledSchema`, several times faster, the same values); input it refuses or cannot decide on, the general one,
 * which explains.
 */
export const decode = <A, I>(schema: Schema.Schema<A, I>, prefix = "") => {
  const compiled = CompiledSchema.decoder(schema)
  return (input: unknown): Effect.Effect<A, InvalidArgument> => {
    const value = compiled === undefined ? CompiledSchema.failed : compiled(input)
    return value !== CompiledSchema.failed
      ? Effect.succeed(value)
      : Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "ignore" })(input).pipe(
        Effect.mapError((error) => fromParseError(error, prefix))
      )
  }
}

/** Whether `ast` could take `input`, an object or an array (anything else: no). */
const takesShape = (ast: AST.AST, input: unknown): boolean => {
  if (typeof input !== "object" || input === null) return false
  switch (ast._tag) {
    case "TypeLiteral":
      return !Array.isArray(input)
    case "TupleType":
      return Array.isArray(input)
    case "Union":
      return ast.types.some((member) => takesShape(member, input))
    case "Transformation":
    case "Refinement":
      return takesShape(ast.from, input)
    case "Suspend":
      return takesShape(ast.f(), input)
    case "Declaration":
    case "UnknownKeyword":
    case "AnyKeyword":
    case "ObjectKeyword":
      return true
    default:
      return false
  }
}

/**
 * True when `input` holds, at any depth, a key that `ast` (the encoded side of a schema) does not declare. Objects
 * with an index signature (records) take any key; a union declares what any of its members does.
 */
const hasUnknownKey = (ast: AST.AST, input: unknown): boolean => {
  switch (ast._tag) {
    case "TypeLiteral": {
      if (typeof input !== "object" || input === null || Array.isArray(input) || ast.indexSignatures.length > 0) {
        return false
      }
      for (const [key, value] of Object.entries(input)) {
        const declared = ast.propertySignatures.find((signature) => signature.name === key)
        if (declared === undefined || hasUnknownKey(declared.type, value)) return true
      }
      return false
    }
    case "TupleType":
      return Array.isArray(input) && input.some((item, i) => {
        const type = ast.elements[i]?.type ?? ast.rest[0]?.type
        return type !== undefined && hasUnknownKey(type, item)
      })
    case "Union": {
      // The members that could take an object or an array like `input`: it has an unknown key if each finds one.
      const shaped = ast.types.filter((member) => takesShape(member, input))
      return shaped.length > 0 && shaped.every((member) => hasUnknownKey(member, input))
    }
    case "Transformation":
    case "Refinement":
      return hasUnknownKey(ast.from, input)
    case "Suspend":
      return hasUnknownKey(ast.f(), input)
    default:
      return false
  }
}

/** Each schema's encoded side, computed once. */
const encodedSides = new WeakMap<AST.AST, AST.AST>()
const encodedOf = (ast: AST.AST) => {
  let encoded = encodedSides.get(ast)
  if (encoded === undefined) encodedSides.set(ast, encoded = AST.encodedAST(ast))
  return encoded
}

/**
 * Decodes a request's body with `schema` as every method of the API does (DECISIONS §18, §20; AIP-203): the fields
 * the engine computes (`outputOnly`: `uid`, `createTime`, a binding's embedded `identity`, …) are ignored, any other
 * field the schema does not declare, at any depth, is refused by name with nothing done (a misspelt or unsupported
 * field, `expireTime` where bindings have none, never silently dropped), and every bad field is reported together.
 * Input with no unknown field takes `decode`'s compiled decoder.
 */
export const decodeRequest = <A, I>(
  schema: Schema.Schema<A, I>,
  options: { readonly outputOnly?: ReadonlyArray<string>; readonly prefix?: string } = {}
) => {
  const lenient = decode(schema, options.prefix)
  const encoded = encodedOf(schema.ast)
  const ignored = new Set(["uid", "createTime", "updateTime", ...(options.outputOnly ?? [])])
  return (input: unknown): Effect.Effect<A, InvalidArgument> => {
    const body = typeof input === "object" && input !== null && !Array.isArray(input) &&
        Object.keys(input).some((key) => ignored.has(key))
      ? Object.fromEntries(Object.entries(input).filter(([key]) => !ignored.has(key)))
      : input
    return hasUnknownKey(encoded, body)
      ? Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(body).pipe(
        Effect.mapError((error) => fromParseError(error, options.prefix))
      )
      : lenient(body)
  }
}
