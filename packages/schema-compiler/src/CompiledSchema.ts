/**
 * Decoders and encoders compiled once from a schema's AST, for the shapes resources take: structs and classes,
 * records, refinements, literals, unions, arrays and synchronous transformations. They run several times faster
 * than `Schema`'s general decoder and encoder, which interpret the AST on every call. A compiled one returns
 * `failed` for any input it does not accept, and also where it cannot be sure to agree (a transformation that does
 * not settle at once, an input two members of a union accept); the caller then asks the general one, which decides
 * and explains. So a compiled decoder or encoder can only be faster, never different.
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** What a compiled decoder or encoder returns for an input it does not accept, or cannot decide on. */
export const failed: unique symbol = Symbol.for("@arbor/schema-compiler/CompiledSchema/failed")

/** Within a compiled function: not for this compiler to decide (unlike a plain rejection, which a union tries past). */
const unsure: unique symbol = Symbol.for("@arbor/schema-compiler/CompiledSchema/unsure")

/** A compiled decoder or encoder: the result, or `failed`. */
export type Compiled = (input: unknown) => unknown

type Direction = "decode" | "encode"

const isSentinel = (value: unknown): boolean => value === failed || value === unsure

const options = AST.defaultParseOption

/** The value of a parse result that was computed synchronously and succeeded, `failed` if it failed, else `unsure`. */
const settled = (result: unknown): unknown =>
  Either.isEither(result) ? (Either.isRight(result) ? result.right : failed) : unsure

const guard = (is: (input: unknown) => boolean): Compiled => (input) => is(input) ? input : failed

const compiled = { decode: new WeakMap<AST.AST, Compiled | null>(), encode: new WeakMap<AST.AST, Compiled | null>() }

const finish = (run: Compiled | undefined): Compiled | undefined =>
  run === undefined ? undefined : (input) => {
    const value = run(input)
    return value === unsure ? failed : value
  }

/** A compiled decoder or encoder of values of type `A`: the value, or `failed`. */
export type Typed<A> = (input: unknown) => A | typeof failed

/**
 * `run`, typed as what it returns for the schema it was compiled from: a compiled function returns only what the
 * general one would for the same input, or `failed` (above).
 */
const typed = <A>(run: Compiled | undefined): Typed<A> | undefined => run as Typed<A> | undefined

/** The compiled decoder of `schema`, or undefined when it has a node this compiler does not cover. */
export const decoder = <A, I, R>(schema: Schema.Schema<A, I, R>): Typed<A> | undefined =>
  typed(finish(node(schema.ast, "decode")))

/** The compiled encoder of `schema`, or undefined when it has a node this compiler does not cover. */
export const encoder = <A, I, R>(schema: Schema.Schema<A, I, R>): Typed<I> | undefined =>
  typed(finish(node(schema.ast, "encode")))

const node = (ast: AST.AST, direction: Direction): Compiled | undefined => {
  let done = compiled[direction].get(ast)
  if (done === undefined) {
    done = make(ast, direction) ?? null
    compiled[direction].set(ast, done)
  }
  return done ?? undefined
}

/**
 * A transformation's step in `direction`, as the general decoder and encoder apply it (renaming and dropping
 * properties included).
 */
const transformationOf = (
  ast: AST.Transformation,
  direction: Direction
): (value: unknown, input: unknown) => unknown => {
  const transformation = ast.transformation
  switch (transformation._tag) {
    case "FinalTransformation": {
      const step = direction === "decode" ? transformation.decode : transformation.encode
      return (value, input) => settled(step(value, options, ast, input))
    }
    case "ComposeTransformation":
      return (value) => value
    case "TypeLiteralTransformation":
      return (value) => {
        const out = { ...(value as Record<PropertyKey, unknown>) }
        for (const pst of transformation.propertySignatureTransformations) {
          const [from, to, step] = direction === "decode"
            ? [pst.from, pst.to, pst.decode]
            : [pst.to, pst.from, pst.encode]
          const moved = step(Object.prototype.hasOwnProperty.call(out, from) ? Option.some(out[from]) : Option.none())
          delete out[from]
          if (Option.isSome(moved)) out[to] = moved.value
        }
        return out
      }
  }
}

/** A refinement's base, without the refinements stacked on it (what the general encoder encodes with). */
const unrefined = (ast: AST.AST): AST.AST => AST.isRefinement(ast) ? unrefined(ast.from) : ast

const make = (ast: AST.AST, direction: Direction): Compiled | undefined => {
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
      if (direction === "encode") {
        // The value is checked against the refined type, then encoded by the unrefined schema.
        const check = node(AST.typeAST(ast), "decode")
        const encode = node(unrefined(ast.from), "encode")
        if (check === undefined || encode === undefined) return undefined
        return (input) => {
          const value = check(input)
          return isSentinel(value) ? value : encode(value)
        }
      }
      const from = node(ast.from, direction)
      if (from === undefined) return undefined
      return (input) => {
        const value = from(input)
        return isSentinel(value) ? value : Option.isSome(ast.filter(value, options, ast)) ? failed : value
      }
    }
    case "Transformation": {
      const [first, last] = direction === "decode" ? [ast.from, ast.to] : [ast.to, ast.from]
      const from = node(first, direction)
      const to = node(last, direction)
      const transform = transformationOf(ast, direction)
      if (from === undefined || to === undefined) return undefined
      return (input) => {
        const value = from(input)
        if (isSentinel(value)) return value
        const transformed = transform(value, input)
        return isSentinel(transformed) ? transformed : to(transformed)
      }
    }
    case "Declaration": {
      const parse = (direction === "decode" ? ast.decodeUnknown : ast.encodeUnknown)(...ast.typeParameters)
      return (input) => settled(parse(input, options, ast))
    }
    case "Union": {
      const members = ast.types.map((member) => node(member, direction))
      if (members.some((m) => m === undefined)) return undefined
      // The general one tries members in an order of its own; agreeing with it is sure only when one accepts.
      return (input) => {
        let accepted: unknown = failed
        for (const member of members as ReadonlyArray<Compiled>) {
          const value = member(input)
          if (value === unsure || (value !== failed && accepted !== failed)) return unsure
          if (value !== failed) accepted = value
        }
        return accepted
      }
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
      const element = node(ast.rest[0]!.type, direction)
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
        run: node(ps.type, direction)
      }))
      // Records: string keys only (the general one lists other kinds of keys differently).
      const values = ast.indexSignatures.map((is) =>
        is.parameter._tag === "StringKeyword" ? node(is.type, direction) : undefined
      )
      if (properties.some((p) => p.run === undefined) || values.some((v) => v === undefined)) return undefined
      const declared = new Set<PropertyKey>(properties.map((p) => p.name))
      return (input) => {
        if (typeof input !== "object" || input === null || Array.isArray(input)) return failed
        const record = input as Record<PropertyKey, unknown>
        const out: Record<PropertyKey, unknown> = {}
        for (const p of properties) {
          if (p.optional && !Object.prototype.hasOwnProperty.call(record, p.name)) continue
          const value = p.run!(record[p.name])
          if (isSentinel(value)) return value
          out[p.name] = value
        }
        for (const run of values as ReadonlyArray<Compiled>) {
          for (const key of Object.keys(record)) {
            const value = run(record[key])
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
