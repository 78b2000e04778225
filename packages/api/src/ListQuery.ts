/**
 * The query parameters of lists (docs/api.md §4), declared once and decoded into the engine's typed list options,
 * which the REST handlers, the gRPC mapping, the command-line client and the typed client all use. Parameters are
 * snake_case on the wire; their camelCase spellings are aliases (`aliases`), which the server folds into these
 * names before decoding.
 */
import type { AdvisoryListOptions } from "@arbor/core/Advisories"
import type { EntryListOptions, WatchOptions } from "@arbor/core/AuditTrail"
import type { MappingListOptions } from "@arbor/core/ExternalGroupRoleMappings"
import type { IdentityListOptions } from "@arbor/core/Identities"
import type { ListOptions } from "@arbor/core/Lists"
import type { RoleBindingListOptions } from "@arbor/core/RoleBindings"
import type { TagListOptions } from "@arbor/core/Tags"
import * as Schema from "effect/Schema"

/** A count in decimal digits (no sign, spaces, exponent or hex). */
const Count = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^[0-9]{1,15}$/, { message: () => "must be a non-negative integer" }))
    .annotations({ jsonSchema: { type: "integer", minimum: 0 } }),
  Schema.Number,
  { strict: true, decode: Number, encode: String }
)

/** `true` or `false` (`1` and `0` too). */
const Flag = Schema.transform(
  Schema.String.pipe(
    Schema.filter((s) => s === "true" || s === "false" || s === "1" || s === "0", {
      message: () => "must be true or false",
      jsonSchema: { type: "boolean" }
    })
  ),
  Schema.Boolean,
  { strict: true, decode: (s) => s === "true" || s === "1", encode: (b) => (b ? "true" : "false") }
)

/** A parameter that may be given more than once. */
export const Repeated = Schema.transform(
  Schema.Union(Schema.String, Schema.Array(Schema.String)),
  Schema.Array(Schema.String),
  { strict: true, decode: (v) => (typeof v === "string" ? [v] : v), encode: (v) => v }
)

const parameter = <A, I extends string | ReadonlyArray<string>>(
  key: string,
  schema: Schema.Schema<A, I>,
  description: string
) => Schema.optional(schema.annotations({ description })).pipe(Schema.fromKey(key))

/**
 * The parameters of one kind of list: any other parameter is refused (`400 INVALID_ARGUMENT` naming it), as gRPC
 * refuses an unknown field, so that a misspelt filter never answers an unfiltered list.
 */
const query = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

const filters = {
  descendantsOf: parameter("uidp.descendants_of", Schema.String, "only resources strictly below this group"),
  childrenOf: parameter("uidp.children_of", Schema.String, "only resources whose parent is this group"),
  ancestorsOf: parameter("uidp.ancestors_of", Schema.String, "only groups that are ancestors of this uid"),
  inRoot: parameter("uidp.in_root", Flag, "only root-level resources"),
  name: parameter("name", Schema.String, "only resources with exactly this name")
}

const paging = {
  pageSize: parameter("page_size", Count, "items per page: 0 or absent means 50, above 200 means 200"),
  pageToken: parameter("page_token", Schema.String, "the nextPageToken of the previous page"),
  orderBy: parameter(
    "order_by",
    Schema.String,
    "sort keys, comma-separated, each optionally followed by ' asc' or ' desc': uid, name, create_time, update_time"
  ),
  skip: parameter("skip", Count, "skip this many items from the current position")
}

const v2 = { ...filters, ids: parameter("uidp.ids", Repeated, "only these uids (repeatable)"), ...paging }

const listQuery = query(v2)
/** The parameters of every v2 list. */
export const ListQuery: Schema.Schema<ListOptions, Schema.Schema.Encoded<typeof listQuery>> = listQuery

const v1ListQuery = query({ ...filters, ids: parameter("id", Repeated, "only these uids (repeatable)") })
/** The parameters of a v1 list: filters only, no paging; `id` names the uids. */
export const V1ListQuery: Schema.Schema<ListOptions, Schema.Schema.Encoded<typeof v1ListQuery>> = v1ListQuery

const tagListQuery = query({
  ...v2,
  digest: parameter("digest", Schema.String, "only tags of this digest"),
  updatedSince: parameter("updated_since", Schema.String, "only tags updated at or after this time (RFC 3339)")
})
/** The parameters of a list of tags. */
export const TagListQuery: Schema.Schema<TagListOptions, Schema.Schema.Encoded<typeof tagListQuery>> = tagListQuery

const identityListQuery = query({
  ...v2,
  relationshipType: parameter(
    "relationship_type",
    Schema.String,
    "only identities of this kind: RELATIONSHIP_TYPE_CLAIM_MATCH or RELATIONSHIP_TYPE_STATIC"
  )
})
/** The parameters of a list of identities. */
export const IdentityListQuery: Schema.Schema<
  IdentityListOptions,
  Schema.Schema.Encoded<typeof identityListQuery>
> = identityListQuery

const roleBindingListQuery = query({
  ...v2,
  identity: parameter("identity", Schema.String, "only the bindings of this identity (its uid)"),
  group: parameter("group", Schema.String, "only the bindings made in this group (its uid; not those below it)"),
  role: parameter("role", Schema.String, "only the bindings of this role (its uid)")
})
/** The parameters of a list of role bindings. */
export const RoleBindingListQuery: Schema.Schema<
  RoleBindingListOptions,
  Schema.Schema.Encoded<typeof roleBindingListQuery>
> = roleBindingListQuery

const mappingListQuery = query({
  ...v2,
  identityProviderUid: parameter("identity_provider_uid", Schema.String, "only the mappings of this identity provider")
})
/** The parameters of a list of external group role mappings. */
export const MappingListQuery: Schema.Schema<
  MappingListOptions,
  Schema.Schema.Encoded<typeof mappingListQuery>
> = mappingListQuery

const advisoryListQuery = query({
  ...v2,
  advisoryIds: parameter("advisory_ids", Repeated, "only these advisory ids (CGA-…; repeatable)"),
  packageNames: parameter("package_names", Repeated, "only advisories of these packages (repeatable)"),
  aliases: parameter("aliases", Repeated, "only advisories with one of these aliases, such as CVE ids (repeatable)"),
  eventTypes: parameter("event_types", Repeated, "only advisories with an event of one of these types (repeatable)"),
  latestEventType: parameter("latest_event_type", Schema.String, "only advisories whose latest event is of this type"),
  query: parameter("query", Schema.String, "a case-insensitive substring of the package name, the id or an alias")
})
/** The parameters of a list of advisories. */
export const AdvisoryListQuery: Schema.Schema<
  AdvisoryListOptions,
  Schema.Schema.Encoded<typeof advisoryListQuery>
> = advisoryListQuery

const entryFilters = {
  types: parameter("type", Repeated, "only entries of these CloudEvent types (repeatable)"),
  subject: parameter("subject", Schema.String, "only entries about this resource uid"),
  actor: parameter("actor", Schema.String, "only entries whose actor is this identity uid, or system"),
  since: parameter("since", Schema.String, "only entries at or after this time (RFC 3339)"),
  until: parameter("until", Schema.String, "only entries before this time (RFC 3339)")
}

const entryListQuery = query({ ...v2, ...entryFilters })
/** The parameters of the audit trail's list. */
export const EntryListQuery: Schema.Schema<EntryListOptions, Schema.Schema.Encoded<typeof entryListQuery>> =
  entryListQuery

const watchQuery = query({
  descendantsOf: filters.descendantsOf,
  childrenOf: filters.childrenOf,
  ...entryFilters,
  after: parameter("after", Schema.String, "the cursor of the last entry seen (the Last-Event-ID header wins)")
})
/** The parameters of the audit trail's watch. */
export const WatchQuery: Schema.Schema<WatchOptions, Schema.Schema.Encoded<typeof watchQuery>> = watchQuery

/** The camelCase spellings the server accepts for parameters, and the name each stands for. */
export const aliases: Readonly<Record<string, string>> = {
  "uidp.descendantsOf": "uidp.descendants_of",
  "uidp.childrenOf": "uidp.children_of",
  "uidp.ancestorsOf": "uidp.ancestors_of",
  "uidp.inRoot": "uidp.in_root",
  pageSize: "page_size",
  pageToken: "page_token",
  orderBy: "order_by",
  updatedSince: "updated_since",
  relationshipType: "relationship_type",
  identityProviderUid: "identity_provider_uid",
  advisoryIds: "advisory_ids",
  packageNames: "package_names",
  eventTypes: "event_types",
  latestEventType: "latest_event_type",
  update_mask: "updateMask"
}
