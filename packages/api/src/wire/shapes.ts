/**
 * How a resource is shaped on the wire (`Wire`): times, durations and uids as JSON writes them, and a resource's two
 * shapes, v2beta1 and v1 (`resource`: v1 renames `uid`, `createTime` and `updateTime`).
 */
import { Uid as CoreUid } from "@arbor/core/Uid"
import * as EffectDuration from "effect/Duration"
import * as Schema from "effect/Schema"

/** A time: RFC 3339 UTC with milliseconds. */
export const Time = Schema.DateTimeUtc.annotations({
  jsonSchema: { type: "string", format: "date-time", description: "RFC 3339 UTC with milliseconds" }
})

/** A duration as protobuf's JSON writes one: seconds, with up to nine decimals, and `s` (`"3600s"`). */
export const Duration = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^\d{1,12}(\.\d{1,9})?s$/)),
  Schema.DurationFromSelf,
  {
    strict: true,
    decode: (json) => EffectDuration.millis(Number(json.slice(0, -1)) * 1000),
    encode: (duration) => `${EffectDuration.toMillis(duration) / 1000}s`
  }
).annotations({ jsonSchema: { type: "string", description: "seconds and 's', as \"3600s\"" } })

/** A uid (docs/api.md §1). */
export const Uid = CoreUid.annotations({
  jsonSchema: { type: "string", description: "hierarchical uid: 40 hex characters, then '/' and 16 per level" }
})

export const Strings = Schema.Array(Schema.String)
export const Reference = Schema.Struct({ uid: Uid, name: Schema.String, description: Schema.String })
export const times = { createTime: Time, updateTime: Time }

export const v1Names = { uid: "id", createTime: "createdAt", updateTime: "updatedAt" } as const
export type V1Name = keyof typeof v1Names

/** A struct's fields with the keys v1 renames taking their v1 names on the wire; the decoded keys stay. */
export type V1Fields<F extends Schema.Struct.Fields> = {
  readonly [K in keyof F]: K extends V1Name ? F[K] extends Schema.Schema.All ? Schema.PropertySignature<
        ":",
        Schema.Schema.Type<F[K]>,
        typeof v1Names[K],
        ":",
        Schema.Schema.Encoded<F[K]>,
        false,
        Schema.Schema.Context<F[K]>
      >
    : F[K]
    : F[K]
}

export const v1Fields = <F extends Schema.Struct.Fields>(fields: F): V1Fields<F> =>
  Object.fromEntries(
    Object.entries(fields).map(([key, field]) =>
      key in v1Names && Schema.isSchema(field)
        ? [key, Schema.propertySignature(field).pipe(Schema.fromKey(v1Names[key as V1Name]))]
        : [key, field]
    )
  ) as V1Fields<F>

/** One shape of a resource on the wire, from its JSON to the engine's class. */
export const shape = <A, T, I, R>(
  identifier: string,
  target: Schema.Schema<A>,
  struct: Schema.Schema<T, I, R>,
  decode: (wire: T) => A,
  encode: (value: A) => T
): Schema.Schema<A, I, R> =>
  Schema.transform(struct, target, { strict: true, decode, encode }).annotations({ identifier })

/** A resource's two shapes: v2beta1 and v1. */
export interface Resource<A, V2, V1, R = never> {
  readonly v2: Schema.Schema<A, V2, R>
  readonly v1: Schema.Schema<A, V1, R>
}

/** A resource whose v1 shape is its v2 shape with v1's names. */
export const resource = <A, F extends Schema.Struct.Fields>(
  identifier: string,
  target: Schema.Schema<A>,
  fields: F,
  decode: (wire: Schema.Schema.Type<Schema.Struct<F>>) => A,
  encode: (value: A) => Schema.Schema.Type<Schema.Struct<F>>
): Resource<
  A,
  Schema.Schema.Encoded<Schema.Struct<F>>,
  Schema.Schema.Encoded<Schema.Struct<V1Fields<F>>>,
  Schema.Struct.Context<F> | Schema.Struct.Context<V1Fields<F>>
> => ({
  v2: shape(identifier, target, Schema.Struct(fields), decode, encode),
  // `fromKey` renames only the keys on the wire: decoded, a v1 shape is its v2 shape.
  v1: shape(
    `${identifier}V1`,
    target,
    // The same values under the same keys, which the type system cannot see through `V1Fields`: a declared identity.
    Schema.transform(Schema.Struct(v1Fields(fields)), Schema.typeSchema(Schema.Struct(fields)), {
      strict: false,
      decode: (decoded) => decoded,
      encode: (value) => value
    }),
    decode,
    encode
  )
})
