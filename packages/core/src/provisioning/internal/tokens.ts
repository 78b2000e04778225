/**
 * SCIM bearer tokens (docs/api.md §13): 256 random bits shown once as `cgscim_` and 64 hex characters (the protos'
 * format), kept only as their SHA-256.
 */
import * as DateTime from "effect/DateTime"
import { createHash, timingSafeEqual } from "node:crypto"
import * as ScimCredential from "../ScimCredential.js"

/** True when `token` is one the configuration accepts at `now`: the current one or, in an overlap, the previous. */
export const accepts = (record: ScimCredential.Record, token: string, now: DateTime.Utc): boolean => {
  const digest = digestOf(token)
  return (sameDigest(record.tokenDigest, digest) && ScimCredential.alive(record.tokenExpireTime, now)) ||
    (sameDigest(record.previousTokenDigest, digest) && record.previousTokenExpireTime !== null &&
      DateTime.greaterThan(record.previousTokenExpireTime, now))
}

const sameDigest = (stored: string | null, digest: string) =>
  stored !== null && stored.length === digest.length && timingSafeEqual(Buffer.from(stored), Buffer.from(digest))

/** The SHA-256 of a token, in hex: all that is kept of it. */
export const digestOf = (token: string): string => createHash("sha256").update(token).digest("hex")

/** A new token. */
export const make = (): string => `cgscim_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`

/** True when `token` has the form of a SCIM token (checked before any lookup). */
export const isToken = (token: string): boolean => /^cgscim_[0-9a-f]{64}$/.test(token)
