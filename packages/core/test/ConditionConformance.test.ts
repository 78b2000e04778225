/**
 * The CEL that conditions are evaluated in (docs/api.md §2), checked against the CEL specification's conformance
 * suite as `@bufbuild/cel-spec` publishes it: every test of the standard language's sections whose expression stands
 * alone (no variables, no test messages) gives the value or the error the specification says, with Arbor's own
 * timestamp methods (a zone's offset cached) in place of the library's. The direct evaluator that decides the common
 * shapes of conditions before the planner is held to the same tests: where it answers, it answers as they say.
 */
import { isCelError, parse, plan } from "@bufbuild/cel"
import type { Value } from "@bufbuild/cel-spec/cel/expr/value_pb.js"
import type { SerializedIncrementalTestSuite } from "@bufbuild/cel-spec/testdata/tests.js"
import { getConformanceSuite } from "@bufbuild/cel-spec/testdata/tests.js"
import { assert, describe, it } from "vitest"
import * as CelDirect from "../src/iam/internal/celDirect.js"
import { Condition } from "../src/index.js"

/** The standard language's sections (the extensions, which conditions do not offer, left out). */
const sections = [
  "basic",
  "comparisons",
  "conversions",
  "dynamic",
  "fields",
  "fp_math",
  "integer_math",
  "lists",
  "logic",
  "macros",
  "plumbing",
  "string",
  "timestamps"
]

/** Tests the library does not pass, by name: newer syntax (quoted field names) and a map literal that repeats a key in another numeric type. */
const knownDeviations = [
  "fields/quoted_map_fields/field_access_slash",
  "fields/quoted_map_fields/field_access_dash",
  "fields/quoted_map_fields/field_access_dot",
  "fields/quoted_map_fields/has_field_slash",
  "fields/quoted_map_fields/has_field_dash",
  "fields/quoted_map_fields/has_field_dot",
  "fields/qualified_identifier_resolution/map_value_repeat_key_heterogeneous"
]

/** A scalar `Value` as CEL's JavaScript values hold it; undefined for others. */
const scalarOf = (value: Value): unknown => {
  const kind = value.kind
  switch (kind.case) {
    case "boolValue":
    case "stringValue":
    case "doubleValue":
      return kind.value
    case "int64Value":
    case "uint64Value":
      return BigInt(kind.value)
    case "nullValue":
      return null
    default:
      return undefined
  }
}

interface Outcome {
  readonly name: string
  readonly passed: boolean
  /** How the direct evaluator came out: not compiled, unsure (left to the planner), right or wrong. */
  readonly direct: "none" | "unsure" | "right" | "wrong"
}

const run = (
  suite: ReturnType<typeof getConformanceSuite> | SerializedIncrementalTestSuite,
  path: ReadonlyArray<string>
) => {
  const outcomes: Array<Outcome> = []
  const visit = (node: ReturnType<typeof getConformanceSuite>, at: ReadonlyArray<string>) => {
    for (const child of node.suites ?? []) visit(child as ReturnType<typeof getConformanceSuite>, [...at, child.name])
    for (const test of node.tests ?? []) {
      const original = test.original
      if (Object.keys(original.bindings).length > 0 || original.typeEnv.length > 0 || original.container !== "") {
        continue
      }
      const matcher = original.resultMatcher
      const expected = matcher.case === "value" ? scalarOf(matcher.value) : undefined
      if (matcher.case === "value" ? expected === undefined : matcher.case !== "evalError") continue
      let result: unknown
      try {
        result = plan(Condition.environment, parse(original.expr))()
      } catch (e) {
        result = e
      }
      const value = typeof result === "object" && result !== null && "value" in result ? result.value : result
      const as = (found: unknown) =>
        matcher.case === "evalError"
          ? isCelError(found) || found instanceof Error
          : found === expected || (Number.isNaN(found) && Number.isNaN(expected))
      let direct: Outcome["direct"] = "none"
      try {
        const compiled = CelDirect.compile(parse(original.expr).expr)
        if (compiled !== undefined) {
          const decided = compiled({})
          direct = decided === CelDirect.Unsure
            ? "unsure"
            : matcher.case !== "evalError" && as(decided)
            ? "right"
            : "wrong"
        }
      } catch {
        direct = "none"
      }
      outcomes.push({ name: [...at, original.name].join("/"), passed: as(value), direct })
    }
  }
  visit(suite as ReturnType<typeof getConformanceSuite>, path)
  return outcomes
}

describe("the CEL of conditions, by the specification's conformance suite", () => {
  it("passes every standalone test of the standard language, time zones included", () => {
    const suites = getConformanceSuite().suites ?? []
    const outcomes = sections.flatMap((name) => {
      const suite = suites.find((s) => s.name === name)
      assert.isDefined(suite, `the conformance data has a section ${name}`)
      return run(suite!, [name])
    })
    assert.isAbove(outcomes.length, 800)
    const failed = outcomes.filter((o) => !o.passed).map((o) => o.name)
    assert.deepStrictEqual(failed, knownDeviations)
    const zones = outcomes.filter((o) => o.name.startsWith("timestamps/timestamp_selectors_tz/"))
    assert.strictEqual(zones.length, 12)
    // Where the direct evaluator answers, it answers as the specification says; and it answers often.
    assert.deepStrictEqual(outcomes.filter((o) => o.direct === "wrong").map((o) => o.name), [])
    assert.isAbove(outcomes.filter((o) => o.direct === "right").length, 150)
    assert.isAbove(zones.filter((o) => o.direct === "right").length, 6, "a timestamp's fields in a zone")
  })
})
