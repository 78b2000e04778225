/**
 * Decoders compiled once from a schema's AST, for the shapes stored rows take: structs and classes, refinements,
 * literals, unions, arrays and synchronous transformations. They run several times faster than the general
 * decoder, which interprets the AST on every call. A compiled decoder returns `failed` for any input it does not
 * accept, and also where it cannot be sure to agree (a transformation that does not settle at once, an input two
 * members of a union accept); the caller then asks the general decoder, which decides and explains. So a compiled
 * decoder can only be faster, never different.
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as AST from "effect/SchemaAST"

/** What a compiled decoder returns for an input it does not accept, or cannot decide on. */
export const failed: unique symbol = Symbol.for("@arbor/core/decoder/failed")

/** Within a decoder: the input is not for this compiler to decide (not a plain rejection, which a union tries past). */
const unsure: unique symbol = Symbol.for("@arbor/core/decoder/unsure")

/** A compiled decoder: the decoded value, or `failed`. */
export type Decoder = (input: unknown) => unknown

const isSentinel = (value: unknown): boolean => value === failed || value === unsure

const options = AST.defaultParseOption

/** The value of a parse result that was computed synchronously and succeeded, `failed` if it failed, else `unsure`. */
const settled = (result: unknown): unknown =>
  Either.isEither(result) ? (Either.isRight(result) ? result.right : failed) : unsure

const guard = (is: (input: unknown) => boolean): Decoder => (input) => is(input) ? input : failed

const compiled = new WeakMap<AST.AST, Decoder | null>()

/** The decoder of `ast`, or undefined when it has a node this compiler does not cover (then use the general one). */
export const compile = (ast: AST.AST): Decoder | undefined => {
  const decoder = node(ast)
  return decoder === undefined ? undefined : (input) => {
    const value = decoder(input)
    return value === unsure ? failed : value
  }
}

const node = (ast: AST.AST): Decoder | undefined => {
  let decoder = compiled.get(ast)
  if (decoder === undefined) {
    decoder = make(ast) ?? null
    compiled.set(ast, decoder)
  }
  return decoder ?? undefined
}

/** A transformation's decoding step, as the general decoder applies it (renaming and dropping properties included). */
const transformationOf = (ast: AST.Transformation): (value: unknown, input: unknown) => unknown => {
  const transformation = ast.transformation
  switch (transformation._tag) {
    case "FinalTransformation":
      return (value, input) => settled(transformation.decode(value, options, ast, input))
    case "ComposeTransformation":
      return (value) => value
    case "TypeLiteralTransformation":
      return (value) => {
        const out = { ...(value as Record<PropertyKey, unknown>) }
        for (const { decode, from, to } of transformation.propertySignatureTransformations) {
          const moved = decode(Object.prototype.hasOwnProperty.call(out, from) ? Option.some(out[from]) : Option.none())
          delete out[from]
          if (Option.isSome(moved)) out[to] = moved.value
        }
        return out
      }
  }
}

const make = (ast: AST.AST): Decoder | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return guard((u) => typeof u === "string")
    case "NumberKeyword":
      return guard((u) => typeof u === "number")
    case "BooleanKeyword":
      return guard((u) => typeof u === "boolean")
    case "UndefinedKeyword":
      return guard((u) => u === undefined)
    case "UnknownKeyword":
    case "AnyKeyword":
      return (input) => input
    case "Literal":
      return guard((u) => u === ast.literal)
    case "Enums":
      return guard((u) => ast.enums.some(([, value]) => value === u))
    case "Refinement": {
      const from = node(ast.from)
      if (from === undefined) return undefined
      return (input) => {
        const value = from(input)
        return isSentinel(value) ? value : Option.isSome(ast.filter(value, options, ast)) ? failed : value
      }
    }
    case "Transformation": {
      const from = node(ast.from)
      const to = node(ast.to)
      const transform = transformationOf(ast)
      if (from === undefined || to === undefined) return undefined
      return (input) => {
        const value = from(input)
        if (isSentinel(value)) return value
        const transformed = transform(value, input)
        return isSentinel(transformed) ? transformed : to(transformed)
      }
    }
    case "Declaration": {
      const parse = ast.decodeUnknown(...ast.typeParameters)
      return (input) => settled(parse(input, options, ast))
    }
    case "Union": {
      const members = ast.types.map(node)
      if (members.some((m) => m === undefined)) return undefined
      // The general decoder tries members in an order of its own; agreeing with it is sure only when one accepts.
      return (input) => {
        let accepted: unknown = failed
        for (const member of members as ReadonlyArray<Decoder>) {
          const value = member(input)
          if (value === unsure || (value !== failed && accepted !== failed)) return unsure
          if (value !== failed) accepted = value
        }
        return accepted
      }
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
      const element = node(ast.rest[0]!.type)
      if (element === undefined) return undefined
      return (input) => {
        if (!Array.isArray(input)) return failed
        const out = new Array(input.length)
        for (let i = 0; i < input.length; i++) {
          const value = element(input[i])
          if (isSentinel(value)) return value
          out[i] = value
        }
        return out
      }
    }
    case "TypeLiteral": {
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
        return guard((u) => u !== null && u !== undefined)
      }
      const properties = ast.propertySignatures.map((ps) => ({
        name: ps.name,
        optional: ps.isOptional,
        decode: node(ps.type)
      }))
      // Records: string keys only (the general decoder lists other kinds of keys differently).
      const values = ast.indexSignatures.map((is) => is.parameter._tag === "StringKeyword" ? node(is.type) : undefined)
      if (properties.some((p) => p.decode === undefined) || values.some((v) => v === undefined)) return undefined
      const declared = new Set<PropertyKey>(properties.map((p) => p.name))
      return (input) => {
        if (typeof input !== "object" || input === null || Array.isArray(input)) return failed
        const record = input as Record<PropertyKey, unknown>
        const out: Record<PropertyKey, unknown> = {}
        for (const p of properties) {
          if (p.optional && !Object.prototype.hasOwnProperty.call(record, p.name)) continue
          const value = p.decode!(record[p.name])
          if (isSentinel(value)) return value
          out[p.name] = value
        }
        for (const decode of values as ReadonlyArray<Decoder>) {
          for (const key of Object.keys(record)) {
            const value = decode(record[key])
            if (isSentinel(value)) return value
            if (!declared.has(key)) out[key] = value
          }
        }
        return out
      }
    }
    default:
      return undefined
  }
}
