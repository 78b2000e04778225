import { Validation } from "@arbor/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Refusal from "../src/testing/Refusal.js"

const Input = Schema.Struct({
  name: Schema.String,
  count: Schema.optional(Schema.Int),
  enabled: Schema.optional(Schema.Boolean),
  tags: Schema.optional(Schema.Array(Schema.String)),
  kind: Schema.optional(Schema.Literal("user", "workload")),
  claimMatch: Schema.optional(Schema.Struct({ issuer: Schema.String })),
  pattern: Schema.optional(Schema.String.pipe(Schema.pattern(/^[a-z]+$/, { message: () => "must be lowercase" })))
})

const violations = (input: unknown) =>
  Effect.map(
    Refusal.of(Validation.decode(Input)(input)),
    (error) => Object.fromEntries(error.violations.map((v) => [v.field, v.description]))
  )

describe("Validation", () => {
  it.effect("says what is wrong in the API's words, never the schema library's notation", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        yield* violations({
          name: 5,
          count: "three",
          enabled: "yes",
          tags: "a",
          kind: "robot",
          claimMatch: 7,
          pattern: "UPPER"
        }),
        {
          name: "must be a string",
          count: "must be a number",
          enabled: "must be true or false",
          tags: "must be an array",
          kind: "must be one of \"user\", \"workload\"",
          claimMatch: "must be an object",
          pattern: "must be lowercase"
        }
      )
      assert.deepStrictEqual(yield* violations({ claimMatch: { issuer: 1 } }), {
        name: "is required",
        "claimMatch.issuer": "must be a string"
      })
    }))

  it.effect("a body that is not an object: a JSON object is what it must be", () =>
    Effect.gen(function*() {
      for (const input of [[1, 2], "text", null, 3]) {
        assert.deepStrictEqual(yield* violations(input), { request: "must be a JSON object" })
      }
    }))
})
