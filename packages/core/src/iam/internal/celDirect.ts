/**
 * A direct evaluator for the common shapes of conditions (comparisons of fields and constants, `&&`, `||`, `!`,
 * `has()`, string tests, a timestamp's fields in a zone), beside `@bufbuild/cel`'s planner, whose general runtime
 * costs a few microseconds a decision. It answers only where its answer is CEL's: any other shape is not compiled,
 * and any value it is not sure of (a missing key, an error, types that differ, a number of another kind) is `Unsure`,
 * for the planner to decide. Checked against the CEL specification's conformance suite beside the planner. Its
 * string operations count their work against the condition's budget (`celCost`), as the planner's do.
 */
import type { Expr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js"
import { charge, textCost } from "./celCost.js"
import * as CelTime from "./celTime.js"

/** What the direct evaluator leaves to the planner. */
export const Unsure: unique symbol = Symbol("Unsure")
export type Unsure = typeof Unsure

/** A timestamp as the direct evaluator holds one: epoch milliseconds. */
export class Instant {
  constructor(readonly ms: number) {}
}

/**
 * A value: CEL's string, bool, null, double (a JS number), int (a bigint), a timestamp, or a map (a JS object or
 * `Map`, from the request) and list (an array), read only by selection and `has()`.
 */
type Value = string | boolean | null | number | bigint | Instant | object

/** An evaluation of a compiled expression over the variables `roots`. */
export type Direct = (roots: Readonly<Record<string, unknown>>) => Value | Unsure

const isMap = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !(value instanceof Instant) && !Array.isArray(value)

/** The entry `key` of a map, as CEL's selection reads it; Unsure when it has none. */
const entry = (map: object, key: string): unknown => {
  if (map instanceof Map) return map.has(key) ? map.get(key) : Unsure
  return Object.hasOwn(map, key) ? (map as Record<string, unknown>)[key] : Unsure
}

const has = (map: object, key: string): boolean => map instanceof Map ? map.has(key) : Object.hasOwn(map, key)

/** A value the direct evaluator reads as CEL does; Unsure for others (undefined, functions, big maps of unknowns). */
const known = (value: unknown): Value | Unsure => {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "bigint":
      return value
    case "number":
      return value
    case "object":
      return value
    default:
      return Unsure
  }
}

/** Same-kind scalars compared as CEL compares them; Unsure across kinds (CEL's numeric rules are the planner's). */
const surrogate = /[\uD800-\uDFFF]/

const ordered = (a: Value, b: Value): number | Unsure => {
  if (typeof a !== typeof b) return Unsure
  // Strings order by code point in CEL, by UTF-16 unit in JavaScript: the same but past the basic plane.
  if (typeof a === "string") charge(textCost(a, b as string))
  if (typeof a === "string" && (surrogate.test(a) || surrogate.test(b as string))) return Unsure
  if (typeof a === "string" || typeof a === "bigint") return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0
  if (typeof a === "number") {
    return Number.isNaN(a) || Number.isNaN(b)
      ? Unsure
      : a < (b as number)
      ? -1
      : a > (b as number)
      ? 1
      : 0
  }
  if (typeof a === "boolean") return a === b ? 0 : a ? 1 : -1
  if (a instanceof Instant && b instanceof Instant) return a.ms < b.ms ? -1 : a.ms > b.ms ? 1 : 0
  return Unsure
}

const equal = (a: Value, b: Value): boolean | Unsure => {
  if (a === null || b === null) return a === null && b === null ? true : Unsure
  const kind = typeof a
  if (kind !== typeof b) return Unsure
  if (kind === "object") return a instanceof Instant && b instanceof Instant ? a.ms === b.ms : Unsure
  // Strings (by code point), bools, ints and doubles (NaN unequal to itself, 0 to -0 equal) as CEL's equality.
  if (kind === "string") charge(textCost(a as string, b as string))
  return a === b
}

const comparisons: Readonly<Record<string, (order: number) => boolean>> = {
  "_<_": (o) => o < 0,
  "_<=_": (o) => o <= 0,
  "_>_": (o) => o > 0,
  "_>=_": (o) => o >= 0
}

const stringTests: Readonly<Record<string, (s: string, t: string) => boolean>> = {
  startsWith: (s, t) => s.startsWith(t),
  endsWith: (s, t) => s.endsWith(t),
  contains: (s, t) => s.includes(t)
}

/** The RFC 3339 text CEL's `timestamp()` takes, as far as the direct evaluator reads it: UTC, to the millisecond. */
const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/

/** An operator on two operands, each evaluated; Unsure when either is. */
const binary = (left: Direct, right: Direct, decide: (a: Value, b: Value) => boolean | Unsure): Direct => (roots) => {
  const a = left(roots)
  const b = right(roots)
  return a === Unsure || b === Unsure ? Unsure : decide(a, b)
}

/** `expr` compiled for direct evaluation, or undefined when it has a shape the direct evaluator leaves alone. */
export const compile = (expr: Expr | undefined): Direct | undefined => {
  if (expr === undefined) return undefined
  const kind = expr.exprKind
  switch (kind.case) {
    case "constExpr": {
      const constant = kind.value.constantKind
      switch (constant.case) {
        case "stringValue":
        case "boolValue":
        case "doubleValue":
        case "int64Value": {
          const value = constant.value
          return () => value
        }
        case "nullValue":
          return () => null
        default:
          return undefined
      }
    }
    case "identExpr": {
      const name = kind.value.name
      return (roots) => Object.hasOwn(roots, name) ? known(roots[name]) : Unsure
    }
    case "selectExpr": {
      const operand = compile(kind.value.operand)
      if (operand === undefined) return undefined
      const field = kind.value.field
      if (kind.value.testOnly) {
        return (roots) => {
          const map = operand(roots)
          return map !== Unsure && isMap(map) ? has(map, field) : Unsure
        }
      }
      return (roots) => {
        const map = operand(roots)
        return map !== Unsure && isMap(map) ? known(entry(map, field)) : Unsure
      }
    }
    case "callExpr":
      return call(kind.value.function, kind.value.target, kind.value.args)
    default:
      return undefined
  }
}

const call = (fn: string, target: Expr | undefined, args: ReadonlyArray<Expr>): Direct | undefined => {
  const compiled = args.map(compile)
  if (compiled.some((a) => a === undefined)) return undefined
  const [left, right] = compiled as Array<Direct>
  if (target === undefined) {
    switch (fn) {
      case "_&&_":
      case "_||_": {
        if (compiled.length !== 2) return undefined
        // The side that decides alone (false for &&, true for ||) absorbs the other's errors, as CEL's logic does.
        const decides = fn === "_||_"
        return (roots) => {
          const a = left!(roots)
          if (a === decides) return decides
          const b = right!(roots)
          if (b === decides) return decides
          return typeof a === "boolean" && typeof b === "boolean" ? !decides : Unsure
        }
      }
      case "!_":
        return compiled.length === 1
          ? (roots) => {
            const a = left!(roots)
            return typeof a === "boolean" ? !a : Unsure
          }
          : undefined
      case "_==_":
      case "_!=_": {
        if (compiled.length !== 2) return undefined
        const negated = fn === "_!=_"
        return binary(left!, right!, (a, b) => {
          const same = equal(a, b)
          return same === Unsure ? Unsure : same !== negated
        })
      }
      case "timestamp": {
        const arg = args[0]?.exprKind
        if (
          compiled.length !== 1 || arg?.case !== "constExpr" || arg.value.constantKind.case !== "stringValue" ||
          !rfc3339.test(arg.value.constantKind.value)
        ) return undefined
        const text = arg.value.constantKind.value
        const ms = Date.parse(text)
        // Only a date that exists, in the years CEL allows; any other is the planner's.
        if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== text.slice(0, 19)) return undefined
        const year = new Date(ms).getUTCFullYear()
        if (year < 1 || year > 9999) return undefined
        const instant = new Instant(ms)
        return () => instant
      }
      default: {
        const test = Object.hasOwn(comparisons, fn) ? comparisons[fn] : undefined
        if (test === undefined || compiled.length !== 2) return undefined
        return binary(left!, right!, (a, b) => {
          const order = ordered(a, b)
          return order === Unsure ? Unsure : test(order)
        })
      }
    }
  }
  const receiver = compile(target)
  if (receiver === undefined) return undefined
  const test = Object.hasOwn(stringTests, fn) ? stringTests[fn] : undefined
  if (test !== undefined) {
    if (compiled.length !== 1) return undefined
    return (roots) => {
      const s = receiver(roots)
      const t = left!(roots)
      if (typeof s !== "string" || typeof t !== "string") return Unsure
      charge(textCost(s, t))
      return test(s, t)
    }
  }
  const field = CelTime.localField(fn)
  if (field === undefined || compiled.length > 1) return undefined
  return (roots) => {
    const at = receiver(roots)
    if (!(at instanceof Instant)) return Unsure
    const zone = left === undefined ? undefined : left(roots)
    if (zone !== undefined && typeof zone !== "string") return Unsure
    try {
      return BigInt(field(zone === undefined ? at.ms : at.ms + CelTime.offsetOf(zone, at.ms)))
    } catch {
      // A zone that is not one: the planner's error.
      return Unsure
    }
  }
}
