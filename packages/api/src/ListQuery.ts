/**
 * The query parameters of lists (docs/api.md §4), declared once and decoded into the engine's typed list options,
 * which the REST handlers, the gRPC mapping, the command-line client and the typed client all use. Parameters are
 * snake_case on the wire; their camelCase spellings are aliases (`aliases`), which the server folds into these
 * names before decoding.
 */
import type { AdvisoryListOptions } from "@arbor/core/Advisories"
import type { EntryListOptions, WatchOptions } from "@arbor/core/AuditTrail"
import { State as ElevationState } from "@arbor/core/Elevation"
import type { ElevationListOptions, EligibilityListOptions } from "@arbor/core/Elevations"
import type { MappingListOptions } from "@arbor/core/ExternalGroupRoleMappings"
import type { IdentityListOptions } from "@arbor/core/Identities"
import type { ListOptions } from "@arbor/core/Lists"
import type { RoleBindingListOptions } from "@arbor/core/RoleBindings"
import type { TagListOptions } from "@arbor/core/Tags"
import { HttpApi, type HttpApiGroup } from "@effect/platform"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** How a parameter's value is written: text, a count, true or false, or text given any number of times. */
export type Kind = "text" | "count" | "flag" | "repeated"

/** What a parameter's value names, where a client lets a person type a name (a path of names) for a uid. */
export type Refers = "group" | "role" | "identity"

const kinds: ReadonlyArray<Kind> = ["text", "count", "flag", "repeated"]
const refersTo: ReadonlyArray<Refers> = ["group", "role", "identity"]
const kindOf = Symbol.for("@arbor/api/ListQuery/kind")
const refersOf = Symbol.for("@arbor/api/ListQuery/refers")

/** A count in decimal digits (no sign, spaces, exponent or hex). */
const Count = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^[0-9]{1,15}$/, { message: () => "must be a non-negative integer" }))
    .annotations({ jsonSchema: { type: "integer", minimum: 0 } }),
  Schema.Number,
  { strict: true, decode: Number, encode: String }
).annotations({ [kindOf]: "count" })

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
).annotations({ [kindOf]: "flag" })

/** A parameter that may be given more than once. */
export const Repeated = Schema.transform(
  Schema.Union(Schema.String, Schema.Array(Schema.String)),
  Schema.Array(Schema.String),
  { strict: true, decode: (v) => (typeof v === "string" ? [v] : v), encode: (v) => v }
).annotations({ [kindOf]: "repeated" })

const parameter = <A, I extends string | ReadonlyArray<string>>(
  key: string,
  schema: Schema.Schema<A, I>,
  description: string,
  refers?: Refers
) =>
  Schema.optional(schema.annotations({ description, ...(refers === undefined ? {} : { [refersOf]: refers }) })).pipe(
    Schema.fromKey(key)
  )

/** One parameter of a list's query, as a client offers it. */
export interface Parameter {
  /** Its name on the wire (`uidp.children_of`). */
  readonly name: string
  /** Its field in the engine's list options (`childrenOf`). */
  readonly key: string
  readonly description: string
  readonly kind: Kind
  /** What its value names, when a person may name it. */
  readonly refers: Refers | undefined
}

/** The parameters `query` takes, in their documented spelling, as declared. */
export const parameters = (query: Schema.Schema.AnyNoContext): ReadonlyArray<Parameter> => {
  const ast = query.ast._tag === "Transformation" ? query.ast.from : query.ast
  if (ast._tag !== "TypeLiteral") return []
  const renamed = new Map(
    query.ast._tag === "Transformation" && query.ast.transformation._tag === "TypeLiteralTransformation"
      ? query.ast.transformation.propertySignatureTransformations.map((t) => [t.from, t.to])
      : []
  )
  return ast.propertySignatures.map((signature) => {
    // An optional parameter's type is its schema or undefined.
    const type = AST.isUnion(signature.type)
      ? signature.type.types.find((t) => !AST.isUndefinedKeyword(t)) ?? signature.type
      : signature.type
    return {
      name: String(signature.name),
      key: String(renamed.get(signature.name) ?? signature.name),
      description: Option.getOrElse(AST.getDescriptionAnnotation(type), () => ""),
      kind: kinds.find((kind) => kind === type.annotations[kindOf]) ?? "text",
      refers: refersTo.find((refers) => refers === type.annotations[refersOf])
    }
  })
}

/**
 * The parameters of one kind of list: any other parameter is refused (`400 INVALID_ARGUMENT` naming it), as gRPC
 * refuses an unknown field, so that a misspelt filter never answers an unfiltered list.
 */
const query = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** The keys one of `Q` and `S` has and the other lacks. */
type KeysApart<Q, S> = Exclude<keyof Q, keyof S> | Exclude<keyof S, keyof Q>

/**
 * Nothing when options `Q` and `S` have the same keys, else a property no schema or service has, naming the keys
 * apart: where a list's declared query meets the engine's options (here, and where a server serves a declaration with
 * an engine service), a filter on one side only is a type error. (Optional fields make the two types assignable to
 * each other whatever their keys, so assignability alone would not tell.)
 */
export type ListsExactly<Q, S> = [KeysApart<Q, S>] extends [never] ? unknown
  : { readonly "list options differ from the declaration's query in": KeysApart<Q, S> }

/** The query `S` as the engine's list options `O`, which it decodes to exactly. */
type Listing<O, S extends Schema.Schema.AnyNoContext> =
  & Schema.Schema<O, Schema.Schema.Encoded<S>>
  & ListsExactly<Schema.Schema.Type<S>, O>

const filters = {
  descendantsOf: parameter("uidp.descendants_of", Schema.String, "only resources strictly below this group", "group"),
  childrenOf: parameter("uidp.children_of", Schema.String, "only resources whose parent is this group", "group"),
  ancestorsOf: parameter("uidp.ancestors_of", Schema.String, "only groups that are ancestors of this uid", "group"),
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

/** The paging parameters, which a client that reads every page sets itself. */
export const pagingParameters: ReadonlySet<string> = new Set(parameters(Schema.Struct(paging)).map(({ name }) => name))

const v2 = { ...filters, ids: parameter("uidp.ids", Repeated, "only these uids (repeatable)"), ...paging }

const listQuery = query(v2)
/** The parameters of every v2 list. */
export const ListQuery: Listing<ListOptions, typeof listQuery> = listQuery

const v1ListQuery = query({ ...filters, ids: parameter("id", Repeated, "only these uids (repeatable)") })
/** The parameters of a v1 list: filters only (the engine's paging options stay unset), `id` naming the uids. */
export const V1ListQuery: Schema.Schema<ListOptions, Schema.Schema.Encoded<typeof v1ListQuery>> = v1ListQuery

const tagListQuery = query({
  ...v2,
  digest: parameter("digest", Schema.String, "only tags of this digest"),
  updatedSince: parameter("updated_since", Schema.String, "only tags updated at or after this time (RFC 3339)")
})
/** The parameters of a list of tags. */
export const TagListQuery: Listing<TagListOptions, typeof tagListQuery> = tagListQuery

const identityListQuery = query({
  ...v2,
  relationshipType: parameter(
    "relationship_type",
    Schema.String,
    "only identities of this kind: RELATIONSHIP_TYPE_CLAIM_MATCH or RELATIONSHIP_TYPE_STATIC"
  )
})
/** The parameters of a list of identities. */
export const IdentityListQuery: Listing<IdentityListOptions, typeof identityListQuery> = identityListQuery

const roleBindingListQuery = query({
  ...v2,
  identity: parameter("identity", Schema.String, "only the bindings of this identity (its uid)", "identity"),
  group: parameter(
    "group",
    Schema.String,
    "only the bindings made in this group (its uid; not those below it)",
    "group"
  ),
  role: parameter("role", Schema.String, "only the bindings of this role (its uid)", "role")
})
/** The parameters of a list of role bindings. */
export const RoleBindingListQuery: Listing<RoleBindingListOptions, typeof roleBindingListQuery> = roleBindingListQuery

const mappingListQuery = query({
  ...v2,
  identityProviderUid: parameter("identity_provider_uid", Schema.String, "only the mappings of this identity provider")
})
/** The parameters of a list of external group role mappings. */
export const MappingListQuery: Listing<MappingListOptions, typeof mappingListQuery> = mappingListQuery

const eligibilityListQuery = query({
  ...v2,
  identity: parameter("identity", Schema.String, "only the eligibilities of this identity (its uid; your own: any)")
})
/** The parameters of a list of eligibilities. */
export const EligibilityListQuery: Listing<EligibilityListOptions, typeof eligibilityListQuery> = eligibilityListQuery

const elevationListQuery = query({
  ...v2,
  state: parameter("state", ElevationState, "only elevations in this state (PENDING: waiting for an approver)"),
  approver: parameter(
    "approver",
    Schema.String,
    "your own uid: the pending elevations of others you may approve, whatever you may list"
  )
})
/** The parameters of a list of elevations. */
export const ElevationListQuery: Listing<ElevationListOptions, typeof elevationListQuery> = elevationListQuery

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
export const AdvisoryListQuery: Listing<AdvisoryListOptions, typeof advisoryListQuery> = advisoryListQuery

const entryFilters = {
  types: parameter("type", Repeated, "only entries of these CloudEvent types (repeatable)"),
  kinds: parameter("kind", Repeated, "only entries about resources of these kinds: group, role_binding… (repeatable)"),
  subject: parameter("subject", Schema.String, "only entries about this resource uid"),
  actor: parameter("actor", Schema.String, "only entries whose actor is this identity uid, or system"),
  since: parameter("since", Schema.String, "only entries at or after this time (RFC 3339)"),
  until: parameter("until", Schema.String, "only entries before this time (RFC 3339)")
}

const entryListQuery = query({ ...v2, ...entryFilters })
/** The parameters of the audit trail's list. */
export const EntryListQuery: Listing<EntryListOptions, typeof entryListQuery> = entryListQuery

const watchQuery = query({
  descendantsOf: filters.descendantsOf,
  childrenOf: filters.childrenOf,
  ...entryFilters,
  after: parameter("after", Schema.String, "the cursor of the last entry seen (the Last-Event-ID header wins)")
})
/** The parameters of the audit trail's watch. */
export const WatchQuery: Listing<WatchOptions, typeof watchQuery> = watchQuery

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

/**
 * The query parameters each endpoint of `api` takes, by `<METHOD> <path>` as its route is declared: the names its
 * `urlParams` schema declares (none for an endpoint without one), what `KnownParameters` holds every request to.
 */
export const declaredParameters = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): ReadonlyMap<string, ReadonlySet<string>> => {
  const declared = new Map<string, ReadonlySet<string>>()
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const names = Option.match(endpoint.urlParamsSchema, {
        onNone: () => [],
        onSome: (schema) => {
          const encoded = AST.encodedAST(schema.ast)
          return AST.isTypeLiteral(encoded) ? encoded.propertySignatures.map((p) => String(p.name)) : []
        }
      })
      declared.set(`${endpoint.method} ${endpoint.path}`, new Set(names))
    }
  })
  return declared
}
