/**
 * Field rules shared by resources (DECISIONS §2): names, descriptions, timestamps.
 */
import * as Schema from "effect/Schema"

/** A resource name: `^[a-z0-9 ._-]{1,}$`, at most 63 characters. */
export const Name = Schema.String.pipe(
  Schema.filter((s) => /^[a-z0-9 ._-]{1,63}$/.test(s), {
    message: () => "must match the pattern ^[a-z0-9 ._-]{1,}$ and be at most 63 characters",
    identifier: "Name"
  })
)

/** A description: at most 512 characters, no newlines or tabs. */
export const Description = Schema.String.pipe(
  Schema.filter((s) => /^[\S ]{0,512}$/u.test(s), {
    message: () => "must be at most 512 characters with no newlines or tabs",
    identifier: "Description"
  })
)

/** An optional description that defaults to the empty string. */
export const OptionalDescription = Schema.optionalWith(Description, { default: () => "" })

/** A point in time, stored as epoch milliseconds. */
export const Timestamp = Schema.DateTimeUtcFromNumber

/** A point in time given by a caller: an RFC 3339 string. */
export const TimestampInput = Schema.DateTimeUtc
