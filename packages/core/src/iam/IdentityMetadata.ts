/**
 * An identity's own profile (the protos' `IdentityMetadata`, docs/api.md §13): what a person says of themselves
 * (company, job title, product of interest, whether they want updates) and where they came from (UTM parameters,
 * referring pages), which only they set, through `UpdateIdentityMetadata`. Kept beside the identity, one row per
 * identity that has set any, and removed with it.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"

const text = (max: number) =>
  Schema.String.pipe(Schema.filter((s) => s.length <= max, { message: () => `must be at most ${max} characters` }))

/** The fields an identity sets on itself, each optional; strings are empty when unset. */
export const Fields = Schema.Struct({
  company: Schema.optionalWith(text(256), { default: () => "" }),
  updatesOptIn: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  product: Schema.optionalWith(text(256), { default: () => "" }),
  jobTitle: Schema.optionalWith(text(256), { default: () => "" }),
  utmCampaign: Schema.optionalWith(text(256), { default: () => "" }),
  utmContent: Schema.optionalWith(text(256), { default: () => "" }),
  utmMedium: Schema.optionalWith(text(256), { default: () => "" }),
  utmSource: Schema.optionalWith(text(256), { default: () => "" }),
  utmTerm: Schema.optionalWith(text(256), { default: () => "" }),
  latestFormSubmitUrl: Schema.optionalWith(text(2048), { default: () => "" }),
  latestInternalReferringUrl: Schema.optionalWith(text(2048), { default: () => "" }),
  selfServe: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type Fields = typeof Fields.Type

/** Which fields an update may name (docs/api.md §5); the rest come from the identity. */
export const fields = {
  mutable: Object.keys(Fields.fields),
  immutable: [],
  // `hubspotUtk` is passed through by the system the protos describe and never kept; here it is ignored.
  outputOnly: ["uid", "name", "givenName", "familyName", "hubspotUtk"]
} as const

/** An identity's metadata as stored. */
export class Stored extends Schema.Class<Stored>("@arbor/core/IdentityMetadata/Stored")({
  uid: Uid,
  fields: Fields,
  updateTime: Timestamp
}) {}

/** An identity's metadata as answered: its fields, and its names from the identity. */
export class IdentityMetadata extends Schema.Class<IdentityMetadata>("@arbor/core/IdentityMetadata")({
  uid: Uid,
  /** The identity's name. */
  name: Schema.String,
  /** The name's first word, and the rest of it. */
  givenName: Schema.String,
  familyName: Schema.String,
  ...Fields.fields
}) {}

/** The given and family names in a display name: its first word and the rest. */
export const namesOf = (name: string): { readonly givenName: string; readonly familyName: string } => {
  const [given = "", ...family] = name.trim().split(/\s+/)
  return { givenName: given, familyName: family.join(" ") }
}

/** What `UpdateIdentityMetadata` writes: its type is the method's (docs/api.md §12). */
export const updatedType = "dev.chainguard.api.iam.identity.metadata.updated.v1"

/** How metadata is stored: its uid is the identity's. */
export const table: Table = {
  name: "identity_metadata",
  events: {
    kind: "identity_metadata",
    types: {
      created: updatedType,
      updated: updatedType,
      deleted: "dev.chainguard.api.iam.identity.metadata.deleted.v1"
    },
    // An identity's entry is its group's, as the identity's own are; a person's is their own.
    body: ChangeLog.eachRow((row) => ({ uid: row.uid, ...ChangeLog.fieldsOf(row.fields) }))
  } satisfies ChangeLog.Logged,
  columns: {
    fields: { type: "json" },
    updateTime: { type: "integer" }
  },
  unique: [],
  indexes: []
}
