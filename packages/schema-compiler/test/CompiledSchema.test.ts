import { CompiledSchema } from "@arbor/schema-compiler"
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"

class Item extends Schema.Class<Item>("Item")({
  uid: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{8}$/)),
  name: Schema.String,
  count: Schema.Int.pipe(Schema.nonNegative()),
  tags: Schema.Array(Schema.Literal("a", "b")),
  note: Schema.optionalWith(Schema.String, { exact: true }),
  at: Schema.Union(Schema.Number, Schema.Null),
  labels: Schema.Record({ key: Schema.String, value: Schema.Boolean })
}) {}

const general = Schema.decodeUnknownEither(Item)
const compiled = CompiledSchema.decoder(Item)!

describe("CompiledSchema", () => {
  it("compiles a class of structs, refinements, literals, unions, arrays and records", () => {
    assert.isDefined(compiled)
    assert.isDefined(CompiledSchema.encoder(Item))
  })

  it("decodes as Schema does, or defers: never different", () => {
    const encoded = Arbitrary.make(Schema.encodedSchema(Item))
    const anything = FastCheck.oneof(encoded, FastCheck.anything(), encoded.map((e) => ({ ...e, count: -1 })))
    FastCheck.assert(
      FastCheck.property(anything, (input) => {
        const expected = general(input)
        const actual = compiled(input)
        if (Either.isLeft(expected)) assert.strictEqual(actual, CompiledSchema.failed)
        else if (actual !== CompiledSchema.failed) assert.deepStrictEqual(actual, expected.right)
      }),
      { numRuns: 500 }
    )
  })

  it("accepts what Schema accepts, as the class", () => {
    const value = compiled({ uid: "0123abcd", name: "n", count: 1, tags: ["a"], at: null, labels: { x: true } })
    assert.instanceOf(value, Item)
    assert.strictEqual(
      compiled({ uid: "nope", name: "n", count: 1, tags: [], at: 1, labels: {} }),
      CompiledSchema.failed
    )
  })
})
