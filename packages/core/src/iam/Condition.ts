/**
 * Conditions on role bindings (DECISIONS §21; docs/api.md §15): a CEL expression over the moment, the resource and the
 * request's context, as Google Cloud IAM's `Expr`. A binding with a condition grants only where its condition is
 * true; one that cannot be decided (a missing attribute, an error, a value that is not a bool) grants nothing.
 *
 * Written conditions are type-checked against the environment below (`@marcbachmann/cel-js`'s checker: `@bufbuild/cel`
 * 0.6 has none) and evaluated by `@bufbuild/cel`, which runs the CEL specification's conformance suite, after the
 * direct evaluator (`internal/celDirect`) for the shapes it is sure of; each is compiled once per expression (when
 * written, and when a binding is loaded) and never per decision.
 */
import { type CelEnv, celEnv, type CelInput, isCelError, parse, plan } from "@bufbuild/cel"
import type { Expr } from "@bufbuild/cel-spec/cel/expr/syntax_pb.js"
import { Environment } from "@marcbachmann/cel-js"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as CelCost from "./internal/celCost.js"
import * as CelDirect from "./internal/celDirect.js"
import * as CelTime from "./internal/celTime.js"

/** The longest expression, in characters. */
export const maxExpressionLength = 1000
/** The most nodes an expression's syntax tree may have. */
export const maxNodes = 200
/** The most items of a list or entries of a map given to a condition (in properties and context). */
export const maxItems = 1000
/** The most values given to a condition in all (properties and context together). */
export const maxValues = 10_000
/** The most characters of strings (keys and values) given to a condition in all (properties and context together). */
export const maxCharacters = 100_000

/** What a request may spend on its decisions' conditions (`CelCost`): one for each request, shared by its decisions. */
export type Budget = CelCost.Budget
/** A request's budget, full. */
export const budget: () => Budget = CelCost.budget

/** A condition as written: the expression, and a title and description for people (as Google's `Expr`). */
export class Condition extends Schema.Class<Condition>("@arbor/core/Condition")({
  expression: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(maxExpressionLength, {
      message: () => `must be at most ${maxExpressionLength} characters`
    })
  ),
  title: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(256)), { default: () => "" }),
  description: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(1024)), { default: () => "" })
}) {}

/**
 * A condition as a caller writes it: its expression checked and type-checked in the conditions' environment, a
 * refusal pointing at the character it found wrong.
 */
export const Checked = Condition.pipe(
  Schema.filter((condition) =>
    Either.match(compile(condition.expression), {
      onLeft: (refusal) => ({
        path: ["expression"],
        message: `${refusal.message} (at character ${refusal.offset + 1})`
      }),
      onRight: () => true
    })
  )
)

/** What a decision gives a condition. Absent attributes are absent keys: a condition that reads one is undecided. */
export interface Attributes {
  /** The moment of the decision, epoch milliseconds: `request.time`. */
  readonly time: number
  readonly resource: {
    /** The uid decided on (or the application's id, through a decision vocabulary). */
    readonly uid: string
    /** `group`, another of Arbor's kinds, or a decision vocabulary's resource type. */
    readonly kind?: string | undefined
    /** The name of the group the decision is made at. */
    readonly name?: string | undefined
    /** The names of the groups from the organization down to the group the decision is made at, joined by `/`. */
    readonly path?: string | undefined
    /** AuthZEN's resource `properties`. */
    readonly properties?: { readonly [key: string]: unknown } | undefined
  }
  readonly subject: {
    readonly id: string
    readonly type: string
    /** AuthZEN's subject `properties`. */
    readonly properties?: { readonly [key: string]: unknown } | undefined
  }
  /** The action asked: its name as the request wrote it (a capability, or a decision vocabulary's word). */
  readonly action: {
    readonly name: string
    /** AuthZEN's action `properties`. */
    readonly properties?: { readonly [key: string]: unknown } | undefined
  }
  /** AuthZEN's `context`, or `Access.can`'s. */
  readonly context?: { readonly [key: string]: unknown } | undefined
  /** The request's budget, which its decisions share; none: the decision's own alone. */
  readonly budget?: Budget | undefined
}

/** How a condition came out: held, or not and why (false, or the error that left it undecided). */
export type Outcome = { readonly held: true } | { readonly held: false; readonly error?: string }

/** A condition ready to decide. */
export interface Compiled {
  readonly expression: string
  /** True when it reads `resource.name` or `resource.path`, which a decision finds by reading the groups. */
  readonly readsNames: boolean
  /** True when it reads anything of the resource: else it comes out alike for every resource of one request. */
  readonly readsResource: boolean
  readonly decide: (attributes: Attributes) => Outcome
}

/** Why an expression was refused: a message and the character offset it points at. */
export interface Refusal {
  readonly message: string
  readonly offset: number
}

/** The environment conditions are checked in: each variable and field with its type. */
const checker = new Environment({ limits: { maxAstNodes: maxNodes, maxDepth: 32 } })
  .registerType("arbor.Request", { ctor: Object, fields: { time: "google.protobuf.Timestamp" } })
  .registerType("arbor.Resource", {
    ctor: Object,
    fields: { uid: "string", kind: "string", name: "string", path: "string", properties: "map<string, dyn>" }
  })
  .registerType("arbor.Subject", {
    ctor: Object,
    fields: { id: "string", type: "string", properties: "map<string, dyn>" }
  })
  .registerType("arbor.Action", { ctor: Object, fields: { name: "string", properties: "map<string, dyn>" } })
  .registerVariable("request", "arbor.Request")
  .registerVariable("resource", "arbor.Resource")
  .registerVariable("subject", "arbor.Subject")
  .registerVariable("action", "arbor.Action")
  .registerVariable("context", "map<string, dyn>")

/**
 * The CEL environment conditions are evaluated in: the library's standard one, with the timestamp methods reading a
 * zone's offset from a cache. Public so that its conformance can be checked against the CEL specification's suite.
 */
export const environment: CelEnv = celEnv({ funcs: [...CelCost.funcs, CelCost.turnFunc, ...CelTime.methods] })

/** The variables of the environment. */
type Root = "request" | "resource" | "subject" | "action" | "context"
const roots: ReadonlySet<string> = new Set<Root>(["request", "resource", "subject", "action", "context"])

/** Every node of `expr`, with how many comprehensions enclose its evaluation per item (their loop bodies). */
const walk = (expr: Expr | undefined, visit: (expr: Expr, loops: number) => void, loops = 0): void => {
  if (expr === undefined) return
  visit(expr, loops)
  const kind = expr.exprKind
  switch (kind.case) {
    case "selectExpr":
      return walk(kind.value.operand, visit, loops)
    case "callExpr":
      walk(kind.value.target, visit, loops)
      for (const arg of kind.value.args) walk(arg, visit, loops)
      return
    case "listExpr":
      for (const element of kind.value.elements) walk(element, visit, loops)
      return
    case "structExpr":
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === "mapKey") walk(entry.keyKind.value, visit, loops)
        walk(entry.value, visit, loops)
      }
      return
    case "comprehensionExpr":
      walk(kind.value.iterRange, visit, loops)
      walk(kind.value.accuInit, visit, loops)
      walk(kind.value.loopCondition, visit, loops + 1)
      walk(kind.value.loopStep, visit, loops + 1)
      walk(kind.value.result, visit, loops)
      return
    default:
      return
  }
}

const firstLine = (text: string) => text.split("\n", 1)[0] ?? text

/** Checks, type-checks and plans `expression`, or says what is wrong with it and where. */
export const compile = (expression: string): Either.Either<Compiled, Refusal> => {
  if (expression.length > maxExpressionLength) {
    return Either.left({ message: `must be at most ${maxExpressionLength} characters`, offset: maxExpressionLength })
  }
  let checked: ReturnType<typeof checker.check>
  try {
    checked = checker.check(expression)
  } catch (e) {
    return Either.left({ message: firstLine(e instanceof Error ? e.message : String(e)), offset: 0 })
  }
  if (!checked.valid) {
    const error = checked.error as (Error & { readonly node?: { readonly pos?: number } }) | undefined
    return Either.left({
      message: firstLine(error?.message ?? "is not a valid expression"),
      offset: error?.node?.pos ?? 0
    })
  }
  if (checked.type !== "bool" && checked.type !== "dyn") {
    return Either.left({ message: `must be a bool, not ${checked.type}`, offset: 0 })
  }
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(expression)
  } catch (e) {
    const location = (e as { readonly location?: { readonly start?: { readonly offset?: number } } }).location
    return Either.left({
      message: String(e instanceof Error ? e.message : e).replace(/^<input>:\d+:\d+: /, ""),
      offset: location?.start?.offset ?? 0
    })
  }
  const positions = parsed.sourceInfo?.positions ?? {}
  let nodes = 0
  let nested: Expr | undefined
  let readsNames = false
  const reads = new Set<Root>()
  // The roots whose properties are read (or which are read whole): only theirs are held to the limits.
  const readsValues = new Set<Root>()
  // Parents are visited before their children: an identifier met here is known to be selected from or not.
  const selected = new Map<Expr, string>()
  walk(parsed.expr, (expr, loops) => {
    nodes++
    const kind = expr.exprKind
    if (kind.case === "comprehensionExpr" && loops > 0) nested ??= expr
    if (kind.case === "selectExpr" && kind.value.operand !== undefined) {
      selected.set(kind.value.operand, kind.value.field)
      const operand = kind.value.operand.exprKind
      if (operand.case === "identExpr" && operand.value.name === "resource") {
        readsNames ||= kind.value.field === "name" || kind.value.field === "path"
      }
    } else if (kind.case === "identExpr" && roots.has(kind.value.name)) {
      const root = kind.value.name as Root
      reads.add(root)
      const field = selected.get(expr)
      if (field === undefined || field === "properties" || root === "context") readsValues.add(root)
      // `resource` itself, not one of its fields: it may be read whole.
      if (root === "resource") readsNames ||= field === undefined
    }
  })
  if (nodes > maxNodes) return Either.left({ message: `must have at most ${maxNodes} terms`, offset: 0 })
  if (nested !== undefined) {
    return Either.left({
      message: "comprehensions (all, exists, map, filter) may not be nested",
      offset: positions[String(nested.id)] ?? 0
    })
  }
  // The common shapes decided directly (before the tree is counted); what it is not sure of, by the planner.
  const direct = CelDirect.compile(parsed.expr)
  // Each comprehension pays its body's terms at each turn; new nodes take ids past the parser's.
  const ids = { last: 0n }
  walk(parsed.expr, (expr) => {
    if (expr.id > ids.last) ids.last = expr.id
  })
  walk(parsed.expr, (expr) => {
    if (expr.exprKind.case !== "comprehensionExpr") return
    const comprehension = expr.exprKind.value
    let terms = 0
    const count = () => terms++
    walk(comprehension.loopCondition, count)
    walk(comprehension.loopStep, count)
    CelCost.countTurns(comprehension, terms, ids)
  })
  const program = plan(environment, parsed)
  const flags: Reads = {
    request: reads.has("request"),
    resource: reads.has("resource"),
    subject: reads.has("subject"),
    action: reads.has("action"),
    context: reads.has("context")
  }
  const valueFlags: Reads = {
    request: false,
    resource: readsValues.has("resource"),
    subject: readsValues.has("subject"),
    action: readsValues.has("action"),
    context: readsValues.has("context")
  }
  const limited = valueFlags.resource || valueFlags.subject || valueFlags.action || valueFlags.context
  const evaluate = (attributes: Attributes): Outcome => {
    if (limited && !withinLimits(attributes, valueFlags)) {
      return {
        held: false,
        error: `properties and context may hold at most ${maxValues} values and ${maxCharacters} characters`
      }
    }
    if (direct !== undefined) {
      const decided = direct(rootsOf(attributes, flags))
      if (decided === true) return held
      if (decided === false) return notHeld
    }
    const result = program(activationOf(attributes, flags))
    if (result === true) return { held: true }
    if (isCelError(result)) return { held: false, error: result.message }
    return result === false ? { held: false } : { held: false, error: "did not evaluate to a bool" }
  }
  return Either.right({
    expression,
    readsNames,
    readsResource: reads.has("resource"),
    decide: (attributes) => {
      const outcome = CelCost.metered(attributes.budget, nodes, () => evaluate(attributes))
      return outcome.spent ? spent : outcome.value
    }
  })
}

const spent: Outcome = {
  held: false,
  error: `its cost budget is spent (at most ${CelCost.perDecision} units a decision, ${CelCost.perRequest} a request)`
}

/** Compiled conditions by expression, so that each is compiled once however many bindings carry it. */
const compiledCache = new Map<string, Compiled>()

/**
 * `expression` compiled, from the cache when it has been before. One that no longer compiles (written by another
 * version) decides nothing: it is never held.
 */
export const compiled = (expression: string): Compiled => {
  const cached = compiledCache.get(expression)
  if (cached !== undefined) return cached
  const made = Either.getOrElse(compile(expression), (refusal): Compiled => ({
    expression,
    readsNames: false,
    readsResource: false,
    decide: () => ({ held: false, error: refusal.message })
  }))
  if (compiledCache.size >= 10_000) compiledCache.clear()
  compiledCache.set(expression, made)
  return made
}

/**
 * True unless `value` holds more than `budget.values` values, `budget.characters` characters of strings (keys
 * included), or a list or map of more than `maxItems`.
 */
const bounded = (value: unknown, budget: { values: number; characters: number }): boolean => {
  if (--budget.values < 0) return false
  if (typeof value === "string") return (budget.characters -= value.length) >= 0
  if (value === null || typeof value !== "object") return true
  if (Array.isArray(value)) {
    if (value.length > maxItems) return false
    for (const item of value) if (!bounded(item, budget)) return false
    return true
  }
  // Its own entries counted and walked as they come, nothing copied: a decision's properties are read at each one.
  let items = 0
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    if (++items > maxItems || (budget.characters -= key.length) < 0) return false
    if (!bounded((value as Record<string, unknown>)[key], budget)) return false
  }
  return true
}

/** Which variables a condition reads. */
type Reads = Readonly<Record<Root, boolean>>

const held: Outcome = { held: true }
const notHeld: Outcome = { held: false }

/**
 * True unless the properties and context a condition reads the values of (`reads`) are over the limits; their walk is
 * counted as work of the decision (a unit per 16 values).
 */
const withinLimits = (attributes: Attributes, reads: Reads): boolean => {
  const budget = { values: maxValues, characters: maxCharacters }
  const within = (!reads.resource || attributes.resource.properties === undefined ||
    bounded(attributes.resource.properties, budget)) &&
    (!reads.subject || attributes.subject.properties === undefined || bounded(attributes.subject.properties, budget)) &&
    (!reads.action || attributes.action.properties === undefined || bounded(attributes.action.properties, budget)) &&
    (!reads.context || attributes.context === undefined || bounded(attributes.context, budget))
  CelCost.charge((maxValues - budget.values) >> 4)
  return within
}

/** The variables a condition reads (`reads`) as the direct evaluator reads them: plain objects, a time an instant. */
const rootsOf = (attributes: Attributes, reads: Reads): Record<string, unknown> => {
  const roots: Record<string, unknown> = {}
  if (reads.request) roots.request = { time: new CelDirect.Instant(attributes.time) }
  if (reads.resource) {
    const resource = attributes.resource
    roots.resource = resource.properties === undefined ? { ...resource, properties: {} } : resource
  }
  if (reads.subject) {
    const subject = attributes.subject
    roots.subject = subject.properties === undefined ? { ...subject, properties: {} } : subject
  }
  if (reads.action) {
    const action = attributes.action
    roots.action = action.properties === undefined ? { ...action, properties: {} } : action
  }
  if (reads.context) roots.context = attributes.context ?? {}
  return roots
}

/** The variables a condition reads (`reads`), as the planner reads them (within the limits, checked before). */
const activationOf = (attributes: Attributes, reads: Reads): Record<string, CelInput> => {
  const { action, context, resource, subject } = attributes
  const activation: Record<string, CelInput> = {}
  if (reads.request) activation.request = new Map([["time", CelTime.timestampOf(attributes.time)]]) as CelInput
  if (reads.resource) {
    const fields = new Map<string, unknown>([["uid", resource.uid], ["properties", resource.properties ?? {}]])
    if (resource.kind !== undefined) fields.set("kind", resource.kind)
    if (resource.name !== undefined) fields.set("name", resource.name)
    if (resource.path !== undefined) fields.set("path", resource.path)
    activation.resource = fields as CelInput
  }
  if (reads.subject) {
    activation.subject = new Map<string, unknown>([
      ["id", subject.id],
      ["type", subject.type],
      ["properties", subject.properties ?? {}]
    ]) as CelInput
  }
  if (reads.action) {
    activation.action = new Map<string, unknown>([
      ["name", action.name],
      ["properties", action.properties ?? {}]
    ]) as CelInput
  }
  if (reads.context) activation.context = (context ?? {}) as CelInput
  return activation
}
