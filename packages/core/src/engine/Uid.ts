/**
 * Hierarchical identifiers: a root uid is 40 hex characters, a child uid is its parent's uid plus `/` and 16 hex
 * characters. Ancestry is by whole segments, so `a/b` is an ancestor of `a/b/c` and never of `a/bc`.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { InvalidArgument } from "./Errors.js"

const uidPattern = /^[0-9a-f]{40}(?:\/[0-9a-f]{16})*$/

/** A valid uid, root or child. */
export const Uid = Schema.String.pipe(
  Schema.filter((s) => uidPattern.test(s), {
    message: () => "must be a uid: 40 hex characters, then any number of '/' and 16 hex characters",
    identifier: "Uid"
  }),
  Schema.brand("Uid")
)
export type Uid = typeof Uid.Type

/** True when `s` is a well-formed uid. */
export const isUid = (s: unknown): s is Uid => typeof s === "string" && uidPattern.test(s)

/** Treats `s` as a uid without checking it; for values the engine itself produced or already validated. */
export const unsafeMake = (s: string): Uid => s as Uid

/** Random bytes drawn from a pool refilled 4 KiB at a time (one system call per ~200 uids, not per uid). */
const pool = new Uint8Array(4096)
let poolOffset = pool.length
const hexDigits = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

const hex = (bytes: number): string => {
  if (poolOffset + bytes > pool.length) {
    crypto.getRandomValues(pool)
    poolOffset = 0
  }
  let out = ""
  for (let i = poolOffset; i < poolOffset + bytes; i++) out += hexDigits[pool[i]!]
  poolOffset += bytes
  return out
}

/** A new random root uid (20 random bytes). */
export const makeRoot = (): Uid => hex(20) as Uid

/** A new random child uid under `parent` (8 random bytes). */
export const makeChild = (parent: Uid): Uid => `${parent}/${hex(8)}` as Uid

/** The parent of a child uid; none for a root uid. */
export const parent = (uid: Uid): Option.Option<Uid> => {
  const i = uid.lastIndexOf("/")
  return i < 0 ? Option.none() : Option.some(uid.slice(0, i) as Uid)
}

/** The parent uid, or `null` for a root uid. */
export const parentOrNull = (uid: Uid): Uid | null => {
  const i = uid.lastIndexOf("/")
  return i < 0 ? null : uid.slice(0, i) as Uid
}

/** The root (organization) uid that `uid` lives under, `uid` itself for a root. */
export const rootOf = (uid: Uid): Uid => {
  const i = uid.indexOf("/")
  return i < 0 ? uid : uid.slice(0, i) as Uid
}

/** Number of segments below the root: 0 for a root uid. */
export const depth = (uid: Uid): number => {
  let n = 0
  for (let i = 0; i < uid.length; i++) if (uid.charCodeAt(i) === 47) n++
  return n
}

/**
 * True when `ancestor` is a strict ancestor of `uid`, by whole segments. Every decision asks it of each grant:
 * `lastIndexOf(ancestor, 0) === 0` compares in place, where Node 20's `startsWith` costs about four times as much.
 */
export const isAncestor = (ancestor: string, uid: string): boolean =>
  uid.length > ancestor.length && uid.charCodeAt(ancestor.length) === 47 && uid.lastIndexOf(ancestor, 0) === 0

/** True when `ancestor` is `uid` or one of its ancestors. */
export const isAncestorOrSelf = (ancestor: string, uid: string): boolean =>
  ancestor === uid || isAncestor(ancestor, uid)

/** The strict ancestors of `uid`, root first. */
export const ancestors = (uid: Uid): Array<Uid> => {
  const out: Array<Uid> = []
  for (let i = uid.indexOf("/"); i >= 0; i = uid.indexOf("/", i + 1)) out.push(uid.slice(0, i) as Uid)
  return out
}

/**
 * A half-open range of uids `[from, to)` in binary string order. Because `/` sorts just below `0`, the strict
 * descendants of `p` are exactly `[p + "/", p + "0")`.
 */
export interface Range {
  readonly from: string
  readonly to: string
}

/** The strict descendants of `uid`. */
export const descendants = (uid: string): Range => ({ from: `${uid}/`, to: `${uid}0` })

/** `uid` and its descendants. */
export const subtree = (uid: string): Range => ({ from: uid, to: `${uid}0` })

/** `uid` alone (no valid uid sorts between `uid` and `uid + "/"`). */
export const only = (uid: string): Range => ({ from: uid, to: `${uid}/` })

/** True when `uid` lies in `range`. */
export const inRange = (range: Range, uid: string): boolean => uid >= range.from && uid < range.to

/** Sorts ranges and merges overlapping or touching ones, dropping empty ones. */
export const normalizeRanges = (ranges: ReadonlyArray<Range>): Array<Range> => {
  const sorted = ranges.filter((r) => r.from < r.to).sort((a, b) => a.from < b.from ? -1 : a.from > b.from ? 1 : 0)
  const out: Array<Range> = []
  for (const r of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && r.from <= last.to) {
      if (r.to > last.to) out[out.length - 1] = { from: last.from, to: r.to }
    } else {
      out.push(r)
    }
  }
  return out
}

/** The intersection of two unions of ranges, normalized. */
export const intersectRanges = (a: ReadonlyArray<Range>, b: ReadonlyArray<Range>): Array<Range> => {
  const out: Array<Range> = []
  for (const x of a) {
    for (const y of b) {
      const from = x.from > y.from ? x.from : y.from
      const to = x.to < y.to ? x.to : y.to
      if (from < to) out.push({ from, to })
    }
  }
  return normalizeRanges(out)
}

/** Validates a uid given by a caller, naming `field` in the error. */
export const parse = (value: string, field = "uid"): Effect.Effect<Uid, InvalidArgument> =>
  isUid(value) ? Effect.succeed(value) : Effect.fail(InvalidArgument.field(field, `'${value}' is not a valid uid`))
