/**
 * CEL's timestamp methods in a time zone (`request.time.getHours("Europe/Berlin")`), as `@bufbuild/cel`'s own, with
 * the zone's offset cached: its own build a new `Intl.DateTimeFormat` at each call (about 90 µs), which a condition
 * decided at every request cannot afford. An IANA zone's offset is read once per zone and quarter hour (every
 * zone's transitions fall on a quarter hour of UTC) and kept for the quarter hour asked last; a fixed offset
 * (`+05:30`) is read from the text.
 */
import { type CelFunc, celMethod, CelScalar, objectType } from "@bufbuild/cel"
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt"

const quarterHour = 15 * 60_000

/** A formatter per IANA zone, and its offset at the quarter hour last asked; emptied when it grows past its bound. */
const formatters = new Map<string, Intl.DateTimeFormat>()
const offsets = new Map<string, { readonly bucket: number; readonly offset: number }>()

/** The offset from UTC of `zone` at `ms`, in milliseconds; throws for a zone that is not one. */
export const offsetOf = (zone: string, ms: number): number => {
  const bucket = Math.floor(ms / quarterHour)
  const cached = offsets.get(zone)
  if (cached !== undefined && cached.bucket === bucket) return cached.offset
  const fixed = /^([+-]?)(\d\d):(\d\d)$/.exec(zone)
  if (fixed !== null) {
    const offset = (fixed[1] === "-" ? -1 : 1) * (Number(fixed[2]) * 3_600_000 + Number(fixed[3]) * 60_000)
    if (offsets.size >= 1_000) offsets.clear()
    offsets.set(zone, { bucket, offset })
    return offset
  }
  let format = formatters.get(zone)
  if (format === undefined) {
    // Throws a RangeError for an unknown zone: the condition is then undecided.
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
    if (formatters.size >= 1_000) formatters.clear()
    formatters.set(zone, format)
  }
  const at = bucket * quarterHour
  const parts: Record<string, number> = {}
  for (const part of format.formatToParts(at)) parts[part.type] = Number(part.value)
  const local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!)
  const offset = local - at
  if (offsets.size >= 1_000) offsets.clear()
  offsets.set(zone, { bucket, offset })
  return offset
}

/** The moment `ms` as a date whose UTC fields are its local time in `zone` (UTC without one). */
const localAt = (ms: number, zone: string | undefined): Date =>
  new Date(zone === undefined ? ms : ms + offsetOf(zone, ms))

/** `timestamp` as a date whose UTC fields are its local time in `zone` (UTC without one). */
const localIn = (timestamp: Timestamp, zone: string | undefined): Date =>
  localAt(Number(timestamp.seconds) * 1000 + Math.floor(timestamp.nanos / 1e6), zone)

const dayOfYear = (date: Date) => Math.floor((date.getTime() - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000)

const fields: ReadonlyArray<readonly [string, (date: Date) => number]> = [
  ["getFullYear", (d) => d.getUTCFullYear()],
  ["getMonth", (d) => d.getUTCMonth()],
  ["getDate", (d) => d.getUTCDate()],
  ["getDayOfMonth", (d) => d.getUTCDate() - 1],
  ["getDayOfWeek", (d) => d.getUTCDay()],
  ["getDayOfYear", dayOfYear],
  ["getHours", (d) => d.getUTCHours()],
  ["getMinutes", (d) => d.getUTCMinutes()],
  ["getSeconds", (d) => d.getUTCSeconds()],
  ["getMilliseconds", (d) => d.getUTCMilliseconds()]
]

const TIMESTAMP = objectType(TimestampSchema)

const mod = (n: number, m: number) => ((n % m) + m) % m

/** The fields of a day read by arithmetic on a local time in milliseconds, not through a `Date`. */
const arithmetic: Readonly<Record<string, (local: number) => number>> = {
  getHours: (local) => Math.floor(mod(local, 86_400_000) / 3_600_000),
  getMinutes: (local) => Math.floor(mod(local, 3_600_000) / 60_000),
  getSeconds: (local) => Math.floor(mod(local, 60_000) / 1000),
  getMilliseconds: (local) => mod(local, 1000),
  // 1970-01-01 was a Thursday (4; Sunday is 0).
  getDayOfWeek: (local) => mod(Math.floor(local / 86_400_000) + 4, 7)
}

/**
 * What timestamp method `name` (`getHours`) reads of a local time in milliseconds (the moment plus its zone's
 * offset), if it is one.
 */
export const localField = (name: string): ((local: number) => number) | undefined => {
  if (Object.hasOwn(arithmetic, name)) return arithmetic[name]
  const field = fields.find(([method]) => method === name)?.[1]
  return field === undefined ? undefined : (local) => field(new Date(local))
}

/** The timestamp methods, with and without a zone, to put in place of the library's. */
export const methods: ReadonlyArray<CelFunc> = fields.flatMap(([name, field]) => [
  celMethod(name, TIMESTAMP, [], CelScalar.INT, function(this: { readonly message: Timestamp }) {
    return BigInt(field(localIn(this.message, undefined)))
  }),
  celMethod(name, TIMESTAMP, [CelScalar.STRING], CelScalar.INT, function(
    this: { readonly message: Timestamp },
    zone: string
  ) {
    return BigInt(field(localIn(this.message, zone)))
  })
])

/** A timestamp of `ms`, as CEL reads one (built directly: the message's reflective constructor costs a decision). */
export const timestampOf = (ms: number): Timestamp => ({
  $typeName: "google.protobuf.Timestamp",
  seconds: BigInt(Math.floor(ms / 1000)),
  nanos: (((ms % 1000) + 1000) % 1000) * 1_000_000
})
