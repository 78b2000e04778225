/**
 * SCIM provisioning's configuration of an identity provider (docs/api.md §13): whether provisioning is on, and the
 * bearer credential its SCIM client presents. A token is shown once and kept as its SHA-256 digest; a regeneration
 * may let the previous token work for an overlap of at most a day; a revocation kills both. The credential's state is
 * derived from the stored times, never stored.
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import { Timestamp, TimestampInput } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"

/** The capability of the four SCIM methods, beside `identity_providers.list` (the protos' annotation). */
export const manage = "identity_providers.scim.manage" as const

/** A provider's SCIM configuration as stored: its uid the provider's. */
export const Record = Schema.Struct({
  uid: Uid,
  enabled: Schema.Boolean,
  /** The SHA-256 of the current token (hex); null before the first or after a revocation. */
  tokenDigest: Schema.NullOr(Schema.String),
  /** When the current token stops working; null when it never does. */
  tokenExpireTime: Schema.NullOr(Timestamp),
  /** The SHA-256 of the token a regeneration replaced, while it keeps working. */
  previousTokenDigest: Schema.NullOr(Schema.String),
  previousTokenExpireTime: Schema.NullOr(Timestamp),
  /** When the credential was last revoked; null once a new token is issued. */
  revokeTime: Schema.NullOr(Timestamp),
  /** Counts the configuration's changes: its etag. */
  version: Schema.Int,
  updateTime: Timestamp
})
export type Record = typeof Record.Type

/** The credential's lifecycle state (the protos' `CredentialState`). */
export const CredentialState = Schema.Literal("NOT_ISSUED", "LIVE", "EXPIRED", "REVOKED", "ROTATING")
export type CredentialState = typeof CredentialState.Type

/** A provider's SCIM status as its reads show it: no secret, no digest. */
export class Status extends Schema.Class<Status>("@arbor/core/ScimStatus")({
  enabled: Schema.Boolean,
  /** Where the provider's SCIM client sends its requests. */
  endpointUrl: Schema.String,
  tokenExpireTime: Schema.optionalWith(Timestamp, { exact: true }),
  previousTokenExpireTime: Schema.optionalWith(Timestamp, { exact: true }),
  credentialState: CredentialState,
  /** The configuration's version, which `RegenerateScimToken` and `SetScimEnabled` must name. */
  etag: Schema.String
}) {}

/** Where provider `provider`'s SCIM client sends its requests, below the API's base URL `apiUrl`. */
export const endpointOf = (apiUrl: string, provider: Uid): string => `${apiUrl}/scim/v2/${provider}`

/** The etag of a provider that has no SCIM configuration yet. */
export const initialEtag = "0"

/** The etag of a configuration. */
export const etagOf = (record: Record | undefined): string =>
  record === undefined ? initialEtag : String(record.version)

/** The credential's state at `now`. */
export const stateOf = (record: Record | undefined, now: DateTime.Utc): CredentialState => {
  if (record === undefined) return "NOT_ISSUED"
  if (record.previousTokenDigest !== null && alive(record.previousTokenExpireTime, now)) return "ROTATING"
  if (record.tokenDigest === null) return record.revokeTime === null ? "NOT_ISSUED" : "REVOKED"
  return alive(record.tokenExpireTime, now) ? "LIVE" : "EXPIRED"
}

export const alive = (expireTime: DateTime.Utc | null, now: DateTime.Utc) =>
  expireTime === null || DateTime.greaterThan(expireTime, now)

/** The status of a configuration at `now`, its endpoint at `endpointUrl`. */
export const statusOf = (record: Record | undefined, endpointUrl: string, now: DateTime.Utc): Status =>
  new Status({
    enabled: record?.enabled ?? false,
    endpointUrl,
    ...(record?.tokenExpireTime == null ? {} : { tokenExpireTime: record.tokenExpireTime }),
    ...(record?.previousTokenExpireTime == null || record.previousTokenDigest === null
      ? {}
      : { previousTokenExpireTime: record.previousTokenExpireTime }),
    credentialState: stateOf(record, now),
    etag: etagOf(record)
  })

/** How long a token lives when its request says nothing. */
export const defaultLifetime = Duration.days(365)
/** The latest expiry a request may ask for, from now. */
export const maxLifetime = Duration.days(730)
/** How long the previous token keeps working after a regeneration when the request says nothing. */
export const defaultOverlap = Duration.hours(1)
/** The longest overlap: longer requests are cut to it. */
export const maxOverlap = Duration.hours(24)

/** A protobuf Duration in its JSON form: seconds, with up to nine decimals, and `s` (`"3600s"`). */
const DurationJson = Schema.String.pipe(
  Schema.filter((s) => /^\d{1,12}(\.\d{1,9})?s$/.test(s), {
    message: () => "must be a duration in seconds such as \"3600s\", not negative"
  })
)

/** Seconds of a duration in its JSON form. */
export const durationOf = (json: string): Duration.Duration => Duration.millis(Number(json.slice(0, -1)) * 1000)

/** When a token is to expire: exactly one of `expireTime` and `neverExpires`, or neither (the default). */
const Expiry = {
  expireTime: Schema.optional(TimestampInput),
  neverExpires: Schema.optionalWith(Schema.Boolean, { default: () => false })
}

const oneExpiry = <A extends { readonly expireTime?: unknown; readonly neverExpires: boolean }>(request: A) =>
  request.expireTime !== undefined && request.neverExpires
    ? { path: ["neverExpires"], message: "set either expireTime or neverExpires, not both" }
    : true

/** What `GenerateScimToken` takes, beside the provider. */
export const GenerateScimToken = Schema.Struct(Expiry).pipe(Schema.filter(oneExpiry))

/** What `RegenerateScimToken` takes, beside the provider. */
export const RegenerateScimToken = Schema.Struct({
  ...Expiry,
  overlap: Schema.optional(DurationJson),
  etag: Schema.propertySignature(Schema.String.pipe(Schema.minLength(1, { message: () => "is required" })))
    .annotations({ missingMessage: () => "is required" })
}).pipe(Schema.filter(oneExpiry))

/** What `SetScimEnabled` takes, beside the provider: `enabled` absent is false, as proto3 leaves a false out. */
export const SetScimEnabled = Schema.Struct({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  etag: Schema.propertySignature(Schema.String.pipe(Schema.minLength(1, { message: () => "is required" })))
    .annotations({ missingMessage: () => "is required" })
})

/** A configuration as its change-log entries carry it: no digest. */
export class Logged extends Schema.Class<Logged>("@arbor/core/ScimCredentialLogged")({
  identityProviderUid: Uid,
  enabled: Schema.Boolean,
  tokenExpireTime: Schema.NullOr(Timestamp),
  previousTokenExpireTime: Schema.NullOr(Timestamp),
  revokeTime: Schema.NullOr(Timestamp),
  etag: Schema.String,
  updateTime: Timestamp
}) {}

/** A token as handed out by `GenerateScimToken` or `RegenerateScimToken`: the secret, once. */
export interface Issued {
  readonly token: string
  readonly endpointUrl: string
  /** Absent for a token that never expires. */
  readonly expireTime?: DateTime.Utc
  readonly identityProviderUid: Uid
  readonly etag: string
  /** Regeneration only: until when the previous token works, when it still did. */
  readonly previousTokenExpireTime?: DateTime.Utc
  /** Regeneration only: the overlap asked for, after the default. */
  readonly requestedOverlap?: Duration.Duration
}

/** How configurations are stored: one per provider, its uid the provider's. */
export const table: Table = {
  name: "scim_credentials",
  events: {
    kind: "scim_credential",
    // The protos' events of the four methods; a provider's deletion deletes its configuration.
    types: {
      created: "dev.chainguard.api.iam.identity_providers.scim_token.generated.v1",
      updated: "dev.chainguard.api.iam.identity_providers.scim_enabled.updated.v1",
      deleted: "dev.chainguard.api.iam.identity_providers.scim.deleted.v1"
    },
    // The digests are secrets: never logged.
    body: ChangeLog.eachRow((row) => ({
      ...ChangeLog.omitting("uid", "tokenDigest", "previousTokenDigest", "version")(row),
      identityProviderUid: row.uid,
      etag: String(row.version)
    }))
  } satisfies ChangeLog.Logged,
  columns: {
    enabled: { type: "boolean" },
    tokenDigest: { type: "text", nullable: true },
    tokenExpireTime: { type: "integer", nullable: true },
    previousTokenDigest: { type: "text", nullable: true },
    previousTokenExpireTime: { type: "integer", nullable: true },
    revokeTime: { type: "integer", nullable: true },
    version: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [],
  indexes: [["parent"]]
}
