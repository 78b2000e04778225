/**
 * SCIM 2.0 on the wire (RFC 7643, RFC 7644; docs/api.md §13): the User and Group resources as an identity
 * provider's SCIM client reads them, list responses, PATCH requests, and SCIM's own error body, each engine error rendered once.
 */
import type * as Errors from "@arbor/core/Errors"
import * as ScimGroup from "@arbor/core/ScimGroup"
import * as ScimUser from "@arbor/core/ScimUser"
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import * as ErrorBody from "./ErrorBody.js"

/** The URNs of the messages this server reads and writes. */
export const schemas = {
  user: ScimUser.userSchema,
  group: ScimGroup.groupSchema,
  listResponse: "urn:ietf:params:scim:api:messages:2.0:ListResponse",
  patchOp: "urn:ietf:params:scim:api:messages:2.0:PatchOp",
  error: "urn:ietf:params:scim:api:messages:2.0:Error",
  serviceProviderConfig: "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig",
  resourceType: "urn:ietf:params:scim:schemas:core:2.0:ResourceType",
  searchRequest: "urn:ietf:params:scim:api:messages:2.0:SearchRequest",
  schema: "urn:ietf:params:scim:schemas:core:2.0:Schema"
} as const

/** SCIM's media type (RFC 7644 §3.1); plain JSON is accepted too. */
export const mediaType = "application/scim+json"

/** The largest request body a SCIM endpoint accepts. */
export const maxBodyBytes = 256 * 1024

/** The path of a provider's endpoint below the API's base URL. */
export const endpointPath = (provider: string) => `/scim/v2/${provider}`

/** A user's or group's `meta.version`: a weak ETag of its change count. */
export const versionOf = (resource: { readonly version: number }) => `W/"${resource.version}"`

/**
 * The versions an `If-Match` or `If-None-Match` header names (RFC 7232 §3.1: a list of ETags, weak or strong, as
 * `versionOf` makes them); `"any"` for `*`; undefined without the header. An ETag that is not one of ours names no
 * version, so it matches none.
 */
export const versionsIn = (header: string | undefined): ReadonlyArray<number> | "any" | undefined => {
  if (header === undefined) return undefined
  if (header.trim() === "*") return "any"
  return [...header.matchAll(/(?:W\/)?"(\d{1,15})"/g)].map((match) => Number(match[1]))
}

/** A user as its resource (RFC 7643 §4.1), at `location`. */
export const user = (value: ScimUser.ScimUser, location: string) => ({
  ...value.attributes,
  schemas: [
    schemas.user,
    ...Object.keys(value.attributes).filter((key) => key.startsWith("urn:") && key !== schemas.user)
  ],
  id: value.identityUid,
  externalId: value.externalId,
  userName: value.userName,
  active: value.active,
  meta: {
    resourceType: "User",
    created: DateTime.formatIso(value.createTime),
    lastModified: DateTime.formatIso(value.updateTime),
    location,
    version: versionOf(value)
  }
})

/**
 * A group as its resource (RFC 7643 §4.2), at `location`; each member by its SCIM `id`, with its `$ref` below
 * `usersAt`; a group without members has no `members` (unassigned, as RFC 7643 §2.5 holds an empty list to be).
 */
export const group = (value: ScimGroup.ScimGroup, location: string, usersAt: string) => ({
  schemas: [schemas.group],
  id: ScimGroup.scimIdOf(value),
  ...(value.externalId === null ? {} : { externalId: value.externalId }),
  displayName: value.displayName,
  ...(value.members.length === 0 ? {} : {
    members: value.members.map((member) => ({ value: member, $ref: `${usersAt}/${member}`, type: "User" }))
  }),
  meta: {
    resourceType: "Group",
    created: DateTime.formatIso(value.createTime),
    lastModified: DateTime.formatIso(value.updateTime),
    location,
    version: versionOf(value)
  }
})

/** Which attributes an answer carries (RFC 7644 §3.4.2.5, §3.9): only `attributes`, or all but `excluded`. */
export interface Projection {
  readonly attributes: ReadonlyArray<string>
  readonly excluded: ReadonlyArray<string>
}

/** Attributes always returned, whatever a projection names (RFC 7643 §3.1, §7: `returned: always`). */
const alwaysReturned = ["id", "schemas"]

/** An attribute path as a projection names it: lower case, a core schema's URN prefix dropped. */
const pathOf = (path: string) => {
  const lower = path.trim().toLowerCase()
  const core = [schemas.user, schemas.group].map((urn) => `${urn.toLowerCase()}:`).find((urn) => lower.startsWith(urn))
  return core === undefined ? lower : lower.slice(core.length)
}

/**
 * `resource` as `projection` shapes it: with `attributes`, only those (and `id`, `schemas`); else without the
 * `excluded` (never `id` nor `schemas`). A path is an attribute (`userName`), a sub-attribute (`name.givenName`,
 * `emails.value`, in each value of a multi-valued one) or an extension's (`urn:…:enterprise:2.0:User:department`),
 * in any case, with or without the User schema's URN.
 */
export const projected = (resource: Record<string, unknown>, projection: Projection): Record<string, unknown> => {
  const wanted = projection.attributes.map(pathOf).filter((p) => p !== "")
  const excluded = projection.excluded.map(pathOf).filter((p) => p !== "" && !alwaysReturned.includes(p))
  if (wanted.length === 0 && excluded.length === 0) return resource
  /** The key of `resource` a path names, and the sub-attribute it names below it, if any. */
  const split = (path: string): readonly [string, string | undefined] | undefined => {
    for (const key of Object.keys(resource)) {
      const lower = key.toLowerCase()
      if (path === lower) return [key, undefined]
      const separator = lower.startsWith("urn:") ? ":" : "."
      if (path.startsWith(`${lower}${separator}`)) return [key, path.slice(lower.length + 1)]
    }
    return undefined
  }
  /** `value` (an object, or an array of them) with only, or without, its sub-attributes `names`. */
  const sub = (value: unknown, names: ReadonlyArray<string>, keep: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => sub(item, names, keep))
    if (typeof value !== "object" || value === null) return value
    return Object.fromEntries(
      Object.entries(value).filter(([name]) => names.includes(name.toLowerCase()) === keep)
    )
  }
  const targets = (paths: ReadonlyArray<string>) => {
    const byKey = new Map<string, Array<string> | "whole">()
    for (const found of paths.map(split)) {
      if (found === undefined) continue
      const [key, name] = found
      const had = byKey.get(key)
      if (name === undefined || had === "whole") byKey.set(key, "whole")
      else byKey.set(key, [...(had ?? []), name])
    }
    return byKey
  }
  if (wanted.length > 0) {
    const kept = targets(wanted)
    return Object.fromEntries(
      Object.entries(resource).flatMap(([key, value]): Array<[string, unknown]> => {
        if (alwaysReturned.includes(key)) return [[key, value]]
        const names = kept.get(key)
        return names === undefined ? [] : [[key, names === "whole" ? value : sub(value, names, true)]]
      })
    )
  }
  const dropped = targets(excluded)
  return Object.fromEntries(
    Object.entries(resource).flatMap(([key, value]): Array<[string, unknown]> => {
      const names = dropped.get(key)
      return names === undefined ? [[key, value]] : names === "whole" ? [] : [[key, sub(value, names, false)]]
    })
  )
}

/** A page of resources (RFC 7644 §3.4.2). */
export const listResponse = (total: number, startIndex: number, resources: ReadonlyArray<unknown>) => ({
  schemas: [schemas.listResponse],
  totalResults: total,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources
})

/** The most operations one PATCH may carry. */
export const maxOperations = 100

/** A PATCH request (RFC 7644 §3.5.2): its operations as the clients send them (`"op": "Replace"` too). */
export const PatchRequest = Schema.Struct({
  schemas: Schema.Array(Schema.String).pipe(
    Schema.filter((urns) => urns.includes(schemas.patchOp) || `must include ${schemas.patchOp}`)
  ),
  Operations: Schema.Array(
    Schema.Struct({
      op: Schema.String.pipe(
        Schema.filter((op) => /^(add|remove|replace)$/i.test(op) || "must be add, remove or replace")
      ),
      path: Schema.optional(Schema.String),
      value: Schema.optional(Schema.Unknown)
    })
  ).pipe(
    Schema.filter((ops) =>
      (ops.length > 0 && ops.length <= maxOperations) || `must hold 1 to ${maxOperations} operations`
    )
  )
})
export type PatchRequest = typeof PatchRequest.Type

/** A search as a POST (RFC 7644 §3.4.3): a list's query in a body. */
export const SearchRequest = Schema.Struct({
  schemas: Schema.Array(Schema.String).pipe(
    Schema.filter((urns) => urns.includes(schemas.searchRequest) || `must include ${schemas.searchRequest}`)
  ),
  attributes: Schema.optional(Schema.Array(Schema.String)),
  excludedAttributes: Schema.optional(Schema.Array(Schema.String)),
  filter: Schema.optional(Schema.String),
  startIndex: Schema.optional(Schema.Int),
  count: Schema.optional(Schema.Int)
})

/** What this server supports (RFC 7643 §5), for clients that ask. */
export const serviceProviderConfig = (documentationUri: string) => ({
  schemas: [schemas.serviceProviderConfig],
  documentationUri,
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: 200 },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: true },
  authenticationSchemes: [{
    type: "oauthbearertoken",
    name: "OAuth Bearer Token",
    description: "the identity provider's SCIM token (GenerateScimToken)"
  }]
})

/** An attribute of a schema (RFC 7643 §7), its characteristics spelled out as a client reads them. */
const attribute = (
  name: string,
  description: string,
  options: {
    readonly type?: "string" | "boolean" | "complex" | "reference"
    /** What a reference names (RFC 7643 §7 `referenceTypes`). */
    readonly referenceTypes?: ReadonlyArray<string>
    /** The values a client should use (RFC 7643 §7 `canonicalValues`). */
    readonly canonicalValues?: ReadonlyArray<string>
    readonly multiValued?: boolean
    readonly required?: boolean
    readonly mutability?: "readWrite" | "immutable" | "readOnly"
    readonly uniqueness?: "none" | "server"
    readonly subAttributes?: ReadonlyArray<unknown>
  } = {}
) => ({
  name,
  type: options.type ?? "string",
  multiValued: options.multiValued ?? false,
  description,
  required: options.required ?? false,
  ...(options.type === "complex" ? { subAttributes: options.subAttributes ?? [] } : { caseExact: false }),
  ...(options.referenceTypes === undefined ? {} : { referenceTypes: options.referenceTypes }),
  ...(options.canonicalValues === undefined ? {} : { canonicalValues: options.canonicalValues }),
  mutability: options.mutability ?? "readWrite",
  returned: "default",
  uniqueness: options.uniqueness ?? "none"
})

/**
 * The User schema as this server keeps it (RFC 7643 §4.1 and §8.7.1), with its own choices said the standard's way:
 * `externalId`, the person's subject at the provider, is required and immutable; `active` false (or a delete) ends
 * the person's access in the organization at once, and cannot be removed, only set. Other attributes a client sends
 * are kept as sent.
 */
export const userSchemaDocument = (location: string) => ({
  schemas: [schemas.schema],
  id: schemas.user,
  name: "User",
  description: "A person of the identity provider, who signs in to Arbor through it",
  attributes: [
    attribute("userName", "Unique among the provider's users, case-insensitively", {
      required: true,
      uniqueness: "server"
    }),
    attribute("externalId", "The person's subject (`sub`) at the provider: who they are when they sign in", {
      required: true,
      mutability: "immutable",
      uniqueness: "server"
    }),
    // Required: every user has it (true when a new one omits it); a PATCH may replace it, never remove it.
    attribute("active", "False ends the person's access in the organization at once; true gives it back", {
      type: "boolean",
      required: true
    }),
    attribute("displayName", "The person's name as shown"),
    attribute("name", "The person's name, in parts", {
      type: "complex",
      subAttributes: ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"]
        .map((part) => attribute(part, `The ${part} part of the name`))
    }),
    attribute("emails", "Email addresses; the primary (or first) is the person's email", {
      type: "complex",
      multiValued: true,
      subAttributes: [
        attribute("value", "An email address"),
        attribute("type", "work, home or other"),
        attribute("primary", "The person's email", { type: "boolean" })
      ]
    })
  ],
  meta: { resourceType: "Schema", location }
})

/**
 * The Group schema as this server keeps it (RFC 7643 §4.2 and §8.7.1): a group's members are the provider's users,
 * and the provider's group mappings of its `displayName` or `externalId` give them their roles while they are.
 */
export const groupSchemaDocument = (location: string) => ({
  schemas: [schemas.schema],
  id: schemas.group,
  name: "Group",
  description: "A group of the identity provider: its group mappings give its members their roles",
  attributes: [
    attribute("displayName", "Unique among the provider's groups, case-insensitively; a group mapping may name it", {
      required: true,
      uniqueness: "server"
    }),
    attribute("externalId", "The provider's own id of the group; a group mapping may name it"),
    attribute("members", `The provider's users in the group, by their SCIM id; at most ${ScimGroup.maxMembers}`, {
      type: "complex",
      multiValued: true,
      subAttributes: [
        attribute("value", "A user's id", { mutability: "immutable" }),
        attribute("$ref", "The user's URI", { type: "reference", referenceTypes: ["User"], mutability: "immutable" }),
        attribute("type", "User", { mutability: "immutable", canonicalValues: ["User"] })
      ]
    })
  ],
  meta: { resourceType: "Schema", location }
})

/** A resource type (RFC 7644 §4), at `endpoint`. */
const resourceType = (name: string, schema: string, description: string) => (endpoint: string, location: string) => ({
  schemas: [schemas.resourceType],
  id: name,
  name,
  endpoint,
  description,
  schema,
  meta: { resourceType: "ResourceType", location }
})

/** Users, at `endpoint`. */
export const userResourceType = resourceType("User", schemas.user, "The provider's users: the people it provisions")

/** Groups, at `endpoint`. */
export const groupResourceType = resourceType(
  "Group",
  schemas.group,
  "The provider's groups: its group mappings give their members roles"
)

/** SCIM's `scimType`s (RFC 7644 §3.12) that an engine error's UPPER_SNAKE reason may name. */
const scimTypes: ReadonlyArray<string> = [
  "invalidFilter",
  "tooMany",
  "uniqueness",
  "mutability",
  "invalidSyntax",
  "invalidPath",
  "noTarget",
  "invalidValue",
  "invalidVers",
  "sensitive"
]

/** `INVALID_PATH` as SCIM spells it: `invalidPath`. */
const camel = (reason: string) => reason.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

/** An engine error as SCIM's error (RFC 7644 §3.12): its HTTP status, `scimType` when one fits, headers. */
export const error = (
  failure: Errors.ArborError
): { readonly status: number; readonly body: unknown; readonly headers: Record<string, string> } => {
  const body = (status: number, scimType?: string) => ({
    schemas: [schemas.error],
    status: String(status),
    ...(scimType === undefined ? {} : { scimType }),
    detail: failure.message
  })
  switch (failure._tag) {
    case "InvalidArgument": {
      const named = failure.reason === undefined ? undefined : camel(failure.reason)
      const type = named !== undefined && scimTypes.includes(named)
        ? named
        : failure.violations[0].field === "filter"
        ? "invalidFilter"
        : "invalidValue"
      return failure.reason === ErrorBody.tooLargeReason
        ? { status: 413, body: body(413), headers: {} }
        : { status: 400, body: body(400, type), headers: {} }
    }
    case "Unauthenticated":
      return { status: 401, body: body(401), headers: { "www-authenticate": "Bearer" } }
    case "PermissionDenied":
      return { status: 403, body: body(403), headers: {} }
    case "NotFound":
      return { status: 404, body: body(404), headers: {} }
    case "AlreadyExists":
      return { status: 409, body: body(409, "uniqueness"), headers: {} }
    case "Aborted":
      // RFC 7644 §3.14: a write whose If-Match names a version the resource is no longer at.
      return failure.reason === "ETAG_MISMATCH"
        ? { status: 412, body: body(412), headers: {} }
        : { status: 409, body: body(409), headers: {} }
    case "FailedPrecondition":
      // A write refused because it would leave the organization without an owner: the attribute may not change so.
      return failure.reason === "LAST_OWNER"
        ? { status: 409, body: body(409, "mutability"), headers: {} }
        : { status: 400, body: body(400), headers: {} }
    case "ResourceExhausted":
      return { status: 429, body: body(429), headers: { "retry-after": String(failure.retryAfterSeconds) } }
    case "Unavailable":
      return { status: 503, body: body(503), headers: {} }
    case "Internal":
      return { status: 500, body: body(500), headers: {} }
  }
}
