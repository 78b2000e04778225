/**
 * Field rules shared by resources (docs/api.md §2): names, descriptions, timestamps.
 */
import * as DateTime from "effect/DateTime"
import * as ParseResult from "effect/ParseResult"
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

/** An RFC 3339 date-time (section 5.6): a date, `T`, a time with optional fractions of a second, an offset. */
const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/

/** The years a timestamp may name: those of RFC 3339 and of `google.protobuf.Timestamp`. */
const firstYear = 1
const lastYear = 9999

/**
 * True when `text` is an RFC 3339 date-time naming a real moment: a day the month has, hours, minutes and seconds in
 * range (no leap second), an offset of less than a day, and a year from 0001 to 9999 before and after its offset.
 */
const isRfc3339 = (text: string, utc: DateTime.Utc): boolean => {
  const match = rfc3339.exec(text)
  if (match === null) return false
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match.slice(1).map((part) =>
    Number(part ?? 0)
  ) as [number, number, number, number, number, number, number, number]
  // The last day of the month: day 0 of the next.
  const lastDay = new Date(0)
  lastDay.setUTCFullYear(year, month, 0)
  const utcYear = DateTime.getPartUtc(utc, "year")
  return year >= firstYear && month >= 1 && month <= 12 && day >= 1 && day <= lastDay.getUTCDate() && hour <= 23 &&
    minute <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59 && utcYear >= firstYear &&
    utcYear <= lastYear
}

/**
 * A point in time given by a caller: an RFC 3339 date-time from 0001 to 9999 that names a real day
 * (`2027-02-30T00:00:00Z`, a date alone, `+275760-09-13T00:00:00Z` are refused, never read as another moment).
 */
export const TimestampInput = Schema.transformOrFail(Schema.String, Schema.DateTimeUtcFromSelf, {
  strict: true,
  decode: (text, _, ast) => {
    const utc = DateTime.make(text.toUpperCase())
    return utc._tag === "Some" && isRfc3339(text, DateTime.toUtc(utc.value))
      ? ParseResult.succeed(DateTime.toUtc(utc.value))
      : ParseResult.fail(
        new ParseResult.Type(
          ast,
          text,
          "must be an RFC 3339 date-time from year 0001 to 9999 on a real day, such as \"2027-01-31T09:00:00Z\""
        )
      )
  },
  encode: (utc) => ParseResult.succeed(DateTime.formatIso(utc))
})
