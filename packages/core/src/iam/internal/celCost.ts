/**
 * The work a condition may do (DECISIONS §21), bounded by a cost budget per decision and per request, as cel-go's
 * cost tracking bounds it: past its budget a condition is undecided, so it grants nothing. A unit is about one term
 * of an expression evaluated once: each decision pays its terms up front, each turn of a comprehension its body's
 * terms, and each call of a function one unit more the longer the strings and lists it reads (a regular expression
 * its text times its pattern). Work is counted as it is done, so a spent budget stops an evaluation at its next
 * counted step, and an evaluation that spent it is undecided whatever it came to.
 *
 * Conditions are evaluated synchronously, one at a time: the meter of the one being evaluated is this module's.
 */
import { celEnv, type CelFunc, celFunc, celMethod, CelScalar, type CelValue, isCelError } from "@bufbuild/cel"
import { type Constant, type Expr_Comprehension, ExprSchema } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js"
import { create } from "@bufbuild/protobuf"
import { RE2JS } from "@bufbuild/re2"

/** The most units one decision may spend. */
export const perDecision = 20_000
/** The most units the decisions of one request (an evaluation, a batch, a search) may spend together. */
export const perRequest = 50_000

/** What a request has left to spend on its decisions' conditions. */
export interface Budget {
  left: number
}

/** A request's budget, full. */
export const budget = (): Budget => ({ left: perRequest })

/** Thrown by a counted step once the budget of the evaluation under way is spent. */
class Spent extends Error {
  override readonly message = "the condition's cost budget is spent"
}

/** The units left to the evaluation under way; undefined outside one. */
let meter: { left: number } | undefined

/** Counts `units` of work of the evaluation under way, and stops it once its budget is spent. */
export const charge = (units: number): void => {
  if (meter === undefined) return
  meter.left -= units
  if (meter.left < 0) throw new Spent()
}

/** The units a string operation reads: one, and one more per 16 characters. */
export const textCost = (a: string, b = ""): number => 1 + ((a.length + b.length) >> 4)

/** How an evaluation under a budget came out: its value, or spent (undecided). */
export type Metered<A> = { readonly spent: false; readonly value: A } | { readonly spent: true }

/**
 * Evaluates `evaluate`, which costs `terms` up front, with what is left of `request` (at most `perDecision`), and
 * takes what it spent from `request`. Spent when the budget ran out at any step, even one whose error the evaluation
 * absorbed.
 */
export const metered = <A>(request: Budget | undefined, terms: number, evaluate: () => A): Metered<A> => {
  const allowance = Math.min(perDecision, request?.left ?? perDecision)
  const running = { left: allowance - terms }
  if (running.left < 0) return { spent: true }
  meter = running
  try {
    const value = evaluate()
    return running.left < 0 ? { spent: true } : { spent: false, value }
  } catch (e) {
    if (e instanceof Spent) return { spent: true }
    throw e
  } finally {
    meter = undefined
    if (request !== undefined) request.left -= allowance - Math.max(running.left, 0)
  }
}

/** Compiled regular expressions by pattern, so that a pattern is compiled once, not at each call. */
const patterns = new Map<string, RE2JS>()

const compiledPattern = (pattern: string): RE2JS => {
  let compiled = patterns.get(pattern)
  if (compiled === undefined) {
    compiled = RE2JS.compile(pattern)
    if (patterns.size >= 1_000) patterns.clear()
    patterns.set(pattern, compiled)
  }
  return compiled
}

/** The units a value read whole costs: a string by its length, a list or map by its size. */
const sizeOf = (value: CelValue | undefined): number => {
  if (typeof value === "string") return value.length >> 4
  if (typeof value === "object" && value !== null && "size" in value && typeof value.size === "number") {
    return value.size
  }
  return 0
}

/** The standard functions, as the library defines them. */
const standard = celEnv().funcs

/**
 * Every standard function and method, each call counted: one unit, and the sizes of the strings, lists and maps it
 * reads; `matches` with its pattern compiled once.
 */
export const funcs: ReadonlyArray<CelFunc> = [...standard].map((original) => {
  const impl = function(this: CelValue | undefined, ...args: Array<CelValue>) {
    let units = 1 + sizeOf(this)
    for (const arg of args) units += sizeOf(arg)
    charge(units)
    const result = original.call(0, this, args)
    if (result === undefined || isCelError(result)) throw result ?? new Error(`no overload of ${original.name}`)
    return result
  }
  return original.target === undefined
    ? celFunc(original.name, original.arguments, original.result, impl)
    : celMethod(original.name, original.target, original.arguments, original.result, impl)
}).concat(
  celMethod("matches", CelScalar.STRING, [CelScalar.STRING], CelScalar.BOOL, function(pattern) {
    // Linear in the text for each state of the pattern's program (RE2).
    charge(1 + Math.ceil((this.length * Math.max(pattern.length, 1)) / 16))
    return compiledPattern(pattern).test(this)
  })
)

/** The name of the function that counts a comprehension's turns. */
const turn = "arbor.turn"

/** Counts one turn of a comprehension: its body's terms. Answers its argument (the loop's condition) unchanged. */
export const turnFunc: CelFunc = celFunc(turn, [CelScalar.DYN, CelScalar.INT], CelScalar.DYN, (condition, terms) => {
  charge(Number(terms))
  return condition
})

/**
 * `comprehension` with its loop condition counted: it pays `terms` (those its condition and step evaluate at each
 * turn) at each turn. The nodes it adds take ids after `ids.last`.
 */
export const countTurns = (comprehension: Expr_Comprehension, terms: number, ids: { last: bigint }): void => {
  const constant = (constantKind: Constant["constantKind"]) =>
    create(ExprSchema, { id: ++ids.last, exprKind: { case: "constExpr", value: { constantKind } } })
  comprehension.loopCondition = create(ExprSchema, {
    id: ++ids.last,
    exprKind: {
      case: "callExpr",
      value: {
        function: turn,
        args: [
          comprehension.loopCondition ?? constant({ case: "boolValue", value: true }),
          constant({ case: "int64Value", value: BigInt(terms) })
        ]
      }
    }
  })
}
