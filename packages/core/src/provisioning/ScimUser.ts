/**
 * Users an identity provider's SCIM client provisions (docs/api.md §13, RFC 7643 §4.1): each is the person of that
 * provider whose login `sub` is its `externalId`, and its SCIM `id` is that person's identity uid (known before
 * their first sign-in). A user who is not `active`, or whom the client deleted, cannot sign in through the provider,
 * and holds nothing in its organization.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import * as Versions from "../engine/internal/storage/versions.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"

/** The core schema of a User resource. */
export const userSchema = "urn:ietf:params:scim:schemas:core:2.0:User"

/** A provisioned user. */
export class ScimUser extends Schema.Class<ScimUser>("@arbor/core/ScimUser")({
  /** Below the provider. */
  uid: Uid,
  /** The person's identity: the user's SCIM `id`. */
  identityUid: Uid,
  externalId: Schema.String,
  userName: Schema.String,
  active: Schema.Boolean,
  /** The user's other attributes as the client gave them (`name`, `emails`, `displayName`, extensions); never a password. */
  attributes: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** Counts the user's changes: its SCIM `meta.version`. */
  version: Schema.Int,
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

/** A user as stored: with its `userName` folded for case-insensitive uniqueness, and whether the client deleted it. */
export const Record = Schema.Struct({
  ...ScimUser.fields,
  userNameKey: Schema.String,
  /** Deleted by the client: kept so that the person cannot sign in, invisible to SCIM reads. */
  deleted: Schema.Boolean
})
export type Record = typeof Record.Type

/** `userName` as compared: SCIM's `userName` is case-insensitive (RFC 7643 §4.1.1). */
export const userNameKeyOf = (userName: string): string => userName.normalize("NFC").toLowerCase()

/** The key of a deleted user: no `userName` folds to it, so its name is free again. */
export const deletedKey = (uid: string): string => `\u0000${uid}`

const Text = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.trim().length > 0 && s.length <= max, { message: () => `must be 1 to ${max} characters` })
  )

const required = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.propertySignature(schema).annotations({ missingMessage: () => "is required" })

/**
 * `active` as clients send it: a boolean, or Microsoft Entra's `"True"` and `"False"` (any case), which its PATCH
 * requests carry.
 */
export const Active = Schema.Union(
  Schema.Boolean,
  Schema.transform(
    Schema.String.pipe(Schema.filter((s) => /^(true|false)$/i.test(s), { message: () => "must be true or false" })),
    Schema.Boolean,
    { strict: true, decode: (s) => s.toLowerCase() === "true", encode: (b) => (b ? "True" : "False") }
  )
)

/** An email of a user. */
const Email = Schema.Struct({
  value: required(Text(320)),
  type: Schema.optional(Schema.String),
  primary: Schema.optional(Schema.Boolean),
  display: Schema.optional(Schema.String)
})

/** Attributes a user may have at most, beside those named below. */
export const maxAttributes = 64

/**
 * A user as a client writes it (create, replace, or the result of a PATCH): `userName` and `externalId` required;
 * `active` true unless it says otherwise; the attributes this engine reads checked; the rest kept as given.
 */
export const WriteScimUser = Schema.Struct(
  {
    userName: required(Text(256)),
    externalId: required(Text(256)),
    active: Schema.optionalWith(Active, { default: () => true }),
    displayName: Schema.optional(Text(256)),
    emails: Schema.optional(
      Schema.Array(Email).pipe(Schema.filter((a) => a.length <= 16 || "may hold at most 16 emails"))
    ),
    name: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).pipe(
  Schema.filter((user) => Object.keys(user).length <= maxAttributes || `may have at most ${maxAttributes} attributes`)
)
export type WriteScimUser = typeof WriteScimUser.Type

/**
 * Attributes the server sets: a client's value for them is ignored (RFC 7643 §3.1), in any case (attribute names are
 * case-insensitive, §2.1).
 */
export const ignoredAttributes: ReadonlyArray<string> = ["id", "meta", "schemas"]

/** True for an attribute the server sets (`ignoredAttributes`), however it is spelled. */
export const isIgnored = (name: string) => ignoredAttributes.includes(name.toLowerCase())

/**
 * An attribute that holds a password, or one like it: any whose name contains `password` in any case (RFC 7643's
 * `password`, `userPassword`, `passwords`, a schema-qualified `…:User:password`, a vendor's `oldPassword`).
 */
const isPassword = (name: string) => /password/i.test(name)

/**
 * `value` without any attribute whose name contains `password`, in any case, at any depth (in a schema extension,
 * in a PATCH value): a password is never stored, returned, logged nor delivered (RFC 7643 §4.1.1, §2.1).
 */
export const withoutPasswords = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutPasswords)
    : value !== null && typeof value === "object"
    ? Object.fromEntries(
      Object.entries(value).flatMap(([name, inner]) => isPassword(name) ? [] : [[name, withoutPasswords(inner)]])
    )
    : value

/** The email a user's person is known by: the primary one, else the first. */
export const emailOf = (user: Pick<WriteScimUser, "emails">): string | undefined =>
  (user.emails?.find((e) => e.primary === true) ?? user.emails?.[0])?.value

/** How users are stored: below their provider; a change of one changes what its person holds. */
export const table: Table = {
  name: "scim_users",
  events: ChangeLog.logged("scim_user", "dev.chainguard.api.iam.scim_users", {
    body: ChangeLog.eachRow(ChangeLog.omitting("userNameKey", "deleted"))
  }),
  columns: {
    identityUid: { type: "text" },
    externalId: { type: "text" },
    userName: { type: "text" },
    userNameKey: { type: "text" },
    active: { type: "boolean" },
    deleted: { type: "boolean" },
    attributes: { type: "json" },
    version: { type: "integer" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [["parent", "externalId"], ["parent", "userNameKey"]],
  indexes: [["parent"], ["identityUid"]],
  versions: [Versions.grants]
}
