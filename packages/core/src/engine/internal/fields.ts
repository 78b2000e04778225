/**
 * Field rules shared by resources (docs/api.md §2): names, descriptions, timestamps.
 */
import * as Schema from "effect/Schema"

const nameRule = "must match the pattern ^[a-z0-9 ._-]{1,}$ and be at most 63 characters, " +
  "with no space at either end and not only dots"

/**
 * A resource name: `^[a-z0-9 ._-]{1,}$`, at most 63 characters, not starting or ending with a space and not made
 * only of dots (`.`, `..`). Every failure, a wrong type or null included, states the rule.
 */
export const Name = Schema.String.pipe(
  Schema.filter((s) => /^[a-z0-9 ._-]{1,63}$/.test(s) && !/^ | $/.test(s) && !/^\.+$/.test(s), {
    identifier: "Name"
  })
).annotations({ message: () => ({ message: nameRule, override: true }) })

/** A required name: missing, it is reported with the rule too (docs/api.md §2). */
export const RequiredName = Schema.propertySignature(Name).annotations({ missingMessage: () => nameRule })

/**
 * A description: at most 512 characters, no line breaks, tabs or other control characters, no lone surrogates, no
 * bidirectional overrides or isolates (which make text display other than it reads).
 */
export const Description = Schema.String.pipe(
  Schema.filter((s) => /^(?:(?![\p{Cc}\p{Cs}\u2028\u2029\u202A-\u202E\u2066-\u2069])[\S ]){0,512}$/u.test(s), {
    message: () =>
      "must be at most 512 characters with no line breaks, tabs, control characters or bidirectional overrides",
    identifier: "Description"
  })
)

/** An optional description that defaults to the empty string. */
export const OptionalDescription = Schema.optionalWith(Description, { default: () => "" })

/** A point in time, stored as epoch milliseconds. */
export const Timestamp = Schema.DateTimeUtcFromNumber

/** A point in time given by a caller: an RFC 3339 string. */
export const TimestampInput = Schema.DateTimeUtc
