/**
 * How an identity is assumed: the claims an upstream OIDC token must carry (`ClaimMatch`), or, for issuers that
 * are not reachable online, the issuer's public keys held by the engine (`StaticKeys`).
 *
 * Patterns are regular expressions that must match the whole value, run on a linear-time engine (RE2 semantics),
 * so no pattern can make matching slow.
 */
import * as Schema from "effect/Schema"
import { RE2JS } from "re2js"
import { Timestamp, TimestampInput } from "../engine/internal/fields.js"

/** Compiles a pattern for whole-value matching; throws on an invalid one. */
export const compilePattern = (pattern: string): RE2JS => RE2JS.compile(pattern)

/** Why `pattern` is not a valid RE2 expression, or undefined when it is. */
export const patternError = (pattern: string): string | undefined => {
  try {
    compilePattern(pattern)
    return undefined
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

const maxPatternLength = 1024

/** A whole-value regular expression (RE2 syntax). */
export const Pattern = Schema.String.pipe(
  Schema.filter((s) => {
    if (s.length === 0 || s.length > maxPatternLength) return `must be a pattern of 1 to ${maxPatternLength} characters`
    const error = patternError(s)
    return error === undefined || `is not a valid RE2 pattern: ${error}`
  }, { identifier: "Pattern" })
)

const NonEmpty = Schema.String.pipe(
  Schema.filter((s) => s.length > 0 && s.length <= 1024, { message: () => "must be 1 to 1024 characters" })
)

/** A token issuer: an `http(s)://` URL (plain http is further restricted to loopback by configuration). */
export const IssuerUrl = Schema.String.pipe(
  Schema.filter((s) => {
    if (!URL.canParse(s)) return "must be an https:// URL"
    const url = new URL(s)
    return (url.protocol === "https:" || url.protocol === "http:") && url.hostname !== "" || "must be an https:// URL"
  }, { identifier: "IssuerUrl" })
)

const ClaimMap = <A, I>(value: Schema.Schema<A, I>) =>
  Schema.Record({ key: Schema.String, value }).pipe(
    Schema.filter((r) => Object.keys(r).length <= 32 || "may hold at most 32 claims")
  )

/** The claims a token must carry; stored as given. */
export const ClaimMatch = Schema.Struct({
  issuer: Schema.optional(Schema.String),
  issuerPattern: Schema.optional(Schema.String),
  subject: Schema.optional(Schema.String),
  subjectPattern: Schema.optional(Schema.String),
  audience: Schema.optional(Schema.String),
  audiencePattern: Schema.optional(Schema.String),
  claims: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  claimPatterns: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})
export type ClaimMatch = typeof ClaimMatch.Type

const oneOf = (value: Record<string, unknown>, exact: string, pattern: string, required: boolean) => {
  const hasExact = value[exact] !== undefined
  const hasPattern = value[pattern] !== undefined
  if (hasExact && hasPattern) return [{ path: [pattern], message: `set either ${exact} or ${pattern}, not both` }]
  if (required && !hasExact && !hasPattern) return [{ path: [exact], message: `is required (or ${pattern})` }]
  return []
}

/** A claim match given by a caller: exactly one of issuer/issuerPattern and subject/subjectPattern. */
export const ClaimMatchInput = Schema.Struct({
  issuer: Schema.optional(IssuerUrl),
  issuerPattern: Schema.optional(Pattern),
  subject: Schema.optional(NonEmpty),
  subjectPattern: Schema.optional(Pattern),
  audience: Schema.optional(NonEmpty),
  audiencePattern: Schema.optional(Pattern),
  claims: Schema.optional(ClaimMap(Schema.String)),
  claimPatterns: Schema.optional(ClaimMap(Pattern))
}).pipe(
  Schema.filter((cm) => {
    const issues = [
      ...oneOf(cm, "issuer", "issuerPattern", true),
      ...oneOf(cm, "subject", "subjectPattern", true),
      ...oneOf(cm, "audience", "audiencePattern", false)
    ]
    return issues.length === 0 ? true : issues
  })
)

const privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

/** Why `text` is not a JWKS of public keys, or undefined when it is. */
export const jwksError = (text: string): string | undefined => {
  let jwks: unknown
  try {
    jwks = JSON.parse(text)
  } catch {
    return "must be a JWKS JSON document"
  }
  const keys = typeof jwks === "object" && jwks !== null ? (jwks as { keys?: unknown }).keys : undefined
  if (!Array.isArray(keys) || keys.length === 0) return "must be a JWKS with at least one key"
  for (const key of keys) {
    if (typeof key !== "object" || key === null || typeof key.kty !== "string") return "every key needs a kty"
    if (!["RSA", "EC", "OKP"].includes(key.kty)) return `key type ${key.kty} is not an asymmetric public key`
    if (privateMembers.some((m) => m in key)) return "must hold public keys only, never private key material"
  }
  return undefined
}

/** Public keys of an offline issuer, valid until `expirationTime`. */
export const StaticKeys = Schema.Struct({
  issuer: Schema.String,
  subject: Schema.String,
  issuerKeys: Schema.String,
  expirationTime: Timestamp
})
export type StaticKeys = typeof StaticKeys.Type

/** Static keys given by a caller; `expirationTime` defaults to, and may not exceed, 365 days after create. */
export const StaticKeysInput = Schema.Struct({
  issuer: IssuerUrl,
  subject: NonEmpty,
  issuerKeys: Schema.String.pipe(
    Schema.filter((s) => s.length <= 65536 || "must be at most 64 KiB"),
    Schema.filter((s) => jwksError(s) ?? true)
  ),
  expirationTime: Schema.optional(TimestampInput)
})
export type StaticKeysInput = typeof StaticKeysInput.Encoded

const compiled = new Map<string, RE2JS>()

/** True when `pattern` matches the whole of `value`; compiled patterns are kept (a bounded number). */
const matchesWhole = (pattern: string, value: string): boolean => {
  let re = compiled.get(pattern)
  if (re === undefined) {
    re = compilePattern(pattern)
    if (compiled.size >= 1000) compiled.delete(compiled.keys().next().value!)
    compiled.set(pattern, re)
  }
  return re.matches(value)
}

/**
 * A claim of a token payload by name: a top-level claim, or, when none has that name, a dotted path into nested
 * objects whose steps are the longest keys that fit (`kubernetes.io.namespace` is `namespace` inside the
 * `kubernetes.io` object).
 */
export const claimAt = (payload: Readonly<Record<string, unknown>>, name: string): unknown => {
  if (Object.hasOwn(payload, name)) return payload[name]
  let best: string | undefined
  for (const key of Object.keys(payload)) {
    if (name.startsWith(`${key}.`) && (best === undefined || key.length > best.length)) best = key
  }
  const inner = best === undefined ? undefined : payload[best]
  return typeof inner === "object" && inner !== null && !Array.isArray(inner)
    ? claimAt(inner as Record<string, unknown>, name.slice(best!.length + 1))
    : undefined
}

/** A claim's values as strings: a string, number or boolean is one value, an array its scalar elements. */
const valuesOf = (claim: unknown): ReadonlyArray<string> => {
  const scalar = (v: unknown) => typeof v === "string" || typeof v === "number" || typeof v === "boolean"
  if (scalar(claim)) return [String(claim)]
  return Array.isArray(claim) ? claim.filter(scalar).map(String) : []
}

const test = (claim: unknown, exact: string | undefined, pattern: string | undefined) =>
  valuesOf(claim).some((v) => exact !== undefined ? v === exact : pattern !== undefined && matchesWhole(pattern, v))

/** True when an (unverified) token issuer is one `match` accepts: checked before fetching its keys. */
export const issuerMatches = (match: ClaimMatch, iss: string): boolean => test(iss, match.issuer, match.issuerPattern)

/**
 * The first claim of a verified token payload that `match` rejects, or undefined when the payload satisfies it.
 * Exact values compare as strings; patterns match whole values; a claim holding an array matches when one of its
 * elements does. Without an audience in `match`, the token's `aud` must hold one of `defaultAudiences`.
 */
export const mismatch = (
  match: ClaimMatch,
  payload: Readonly<Record<string, unknown>>,
  defaultAudiences: ReadonlyArray<string>
): string | undefined => {
  if (typeof payload.iss !== "string" || !issuerMatches(match, payload.iss)) return "iss"
  if (!test(payload.sub, match.subject, match.subjectPattern)) return "sub"
  if (match.audience !== undefined || match.audiencePattern !== undefined) {
    if (!test(payload.aud, match.audience, match.audiencePattern)) return "aud"
  } else if (!valuesOf(payload.aud).some((a) => defaultAudiences.includes(a))) {
    return "aud"
  }
  for (const [name, value] of Object.entries(match.claims ?? {})) {
    if (!test(claimAt(payload, name), value, undefined)) return name
  }
  for (const [name, pattern] of Object.entries(match.claimPatterns ?? {})) {
    if (!test(claimAt(payload, name), undefined, pattern)) return name
  }
  return undefined
}
