/**
 * The wire format: the JSON shape of every resource in v2beta1 and v1, as schemas (for OpenAPI and response
 * encoding) and as conversions from the engine's values. Times are RFC 3339 UTC with milliseconds; v1 renames
 * `uid`, `createTime` and `updateTime` to `id`, `createdAt` and `updatedAt` and spells capabilities dotted.
 */
import type { Role as CoreRole } from "@arbor/core"
import { Capability, ClaimMatch } from "@arbor/core"
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"

/** Which surface a response is for. */
export type Version = "v2" | "v1"

const Time = Schema.String.annotations({ format: "date-time", description: "RFC 3339 UTC with milliseconds" })
const Uid = Schema.String.annotations({ description: "hierarchical uid" })
const Strings = Schema.Array(Schema.String)

/** A plain JSON value from an engine value: times formatted, classes flattened, absent fields dropped. */
export const json = (value: unknown): unknown => {
  if (DateTime.isDateTime(value)) return DateTime.formatIso(DateTime.toUtc(value))
  if (Array.isArray(value)) return value.map(json)
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = json(v)
    return out
  }
  return value
}

const v1Names: Readonly<Record<string, string>> = { uid: "id", createTime: "createdAt", updateTime: "updatedAt" }

/** Renames a resource's top-level fields for v1. */
export const toV1 = (value: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(value).map(([k, v]) => [v1Names[k] ?? k, v]))

/** The fields of a struct renamed for v1. */
const v1Fields = <F extends Schema.Struct.Fields>(fields: F): Schema.Struct.Fields =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [v1Names[k] ?? k, v]))

/** A resource's wire schemas and conversion. */
export interface Resource<A> {
  readonly v2: Schema.Schema<any, any>
  readonly v1: Schema.Schema<any, any>
  readonly encode: (value: A, version: Version) => Record<string, unknown>
}

const resource = <A>(
  identifier: string,
  fields: Schema.Struct.Fields,
  adjust: (value: Record<string, unknown>, version: Version) => Record<string, unknown> = (v) => v,
  v1Overrides: Schema.Struct.Fields = {}
): Resource<A> => ({
  v2: Schema.Struct(fields).annotations({ identifier }) as unknown as Schema.Schema<any, any>,
  v1: Schema.Struct({ ...v1Fields(fields), ...v1Overrides }).annotations({
    identifier: `${identifier}V1`
  }) as unknown as Schema.Schema<any, any>,
  encode: (value, version) => {
    const wire = adjust(json(value) as Record<string, unknown>, version)
    return version === "v1" ? toV1(wire) : wire
  }
})

const times = { createTime: Time, updateTime: Time }

export const Group = resource("Group", {
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  resourceLimits: Schema.Record({ key: Schema.String, value: Schema.Number }),
  verified: Schema.Boolean,
  ...times
}, (g) => ({ ...g, resourceLimits: {} }))

export const Identity = resource("Identity", {
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  claimMatch: Schema.optional(ClaimMatch.ClaimMatch),
  staticKeys: Schema.optional(Schema.Struct({
    issuer: Schema.String,
    subject: Schema.String,
    issuerKeys: Schema.String,
    expirationTime: Time
  })),
  lastSeenTime: Time,
  ...times
})

const capabilityNames = (r: Record<string, unknown>, version: Version) => ({
  ...r,
  capabilities: (r.capabilities as ReadonlyArray<Capability.Capability>).map((c) =>
    version === "v2" ? Capability.toEnumName(c) : c
  )
})

export const Role = resource<CoreRole.Role>("Role", {
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  capabilities: Schema.Array(Schema.String.annotations({ description: "CAP_… enum names (v1: dotted names)" })),
  ...times
}, capabilityNames)

const Reference = Schema.Struct({ uid: Uid, name: Schema.String, description: Schema.String })

export const RoleBinding = resource("RoleBinding", {
  uid: Uid,
  identity: Schema.Struct({ ...Reference.fields, subject: Schema.String, issuer: Schema.String }),
  group: Reference,
  role: Reference,
  createTime: Time
}, ({ updateTime: _, ...b }) => b)

export const IdentityProvider = resource("IdentityProvider", {
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  defaultRole: Uid,
  oidc: Schema.Struct({
    issuer: Schema.String,
    clientId: Schema.String,
    additionalScopes: Strings,
    pkceEnabled: Schema.Boolean
  }),
  ...times
})

export const AccountAssociation = resource("AccountAssociation", {
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  amazon: Schema.optional(Schema.Struct({ account: Schema.String })),
  google: Schema.optional(Schema.Struct({ projectId: Schema.String, projectNumber: Schema.String })),
  azure: Schema.optional(Schema.Struct({
    tenantId: Schema.String,
    clientIds: Schema.Record({ key: Schema.String, value: Schema.String })
  })),
  ...times
})

export const GroupInvite = resource("GroupInvite", {
  uid: Uid,
  roleUid: Uid,
  role: Reference,
  email: Schema.optional(Schema.String),
  expirationTime: Time,
  singleUse: Schema.Boolean,
  keyId: Schema.String,
  code: Schema.optional(Schema.String.annotations({ description: "returned once, by create" })),
  ...times
})

export const Repo = resource("Repo", {
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  catalogTier: Schema.Literal("UNSPECIFIED", "APPLICATION", "BASE", "FIPS", "AI", "DEVTOOLS"),
  bundles: Strings,
  aliases: Strings,
  activeTags: Strings,
  ...times
})

export const Tag = resource("Tag", {
  uid: Uid,
  name: Schema.String,
  digest: Schema.String,
  deprecated: Schema.Boolean,
  ...times
})

const Event = Schema.Struct({
  type: Schema.String,
  time: Time
}).annotations({ description: "an event: its type, time, and the data of the type under its camelCase name" })

export const Advisory = resource("Advisory", {
  uid: Uid,
  advisoryId: Schema.String,
  packageName: Schema.String,
  aliases: Strings,
  events: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(Schema.extend(Event))),
  latestEventType: Schema.String,
  ...times
})

/** The v2 list envelope: items under the plural, the next token when there are more, counts. */
export const listEnvelope = (plural: string, item: Schema.Schema<any, any>) =>
  Schema.Struct({
    [plural]: Schema.Array(item),
    nextPageToken: Schema.optional(Schema.String),
    totalCount: Schema.String.annotations({ description: "an integer, as a string" }),
    skipped: Schema.Number
  })

/** The v1 list envelope: every match under `items`. */
export const itemsEnvelope = (item: Schema.Schema<any, any>) => Schema.Struct({ items: Schema.Array(item) })
