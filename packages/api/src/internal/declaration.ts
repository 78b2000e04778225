/**
 * How a resource's declaration becomes its endpoints: list and get for every resource; create, update and delete
 * for those the caller writes; the v1 surface for those v1 has. Summaries and descriptions come from the resource's
 * names and the capability each operation needs.
 */
import type * as Capability from "@arbor/core/Capability"
import type { ListOptions } from "@arbor/core/Lists"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as ListQuery from "../ListQuery.js"
import { Authentication, KnownParameters } from "../Security.js"
import * as Wire from "../Wire.js"

/** What query parameters encode to. */
export type Params = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * How a resource travels over gRPC: its service, its message (full names in `@arbor/api/proto`, which the server
 * resolves; named rather than imported, so a client of the contract does not carry the descriptors), and the request
 * field that holds it.
 */
export interface Proto<I> {
  readonly service: string
  readonly message: string
  /** The field of a create or update request that holds the resource (`roleBinding`). */
  readonly field: string
  /** The message's proto3 JSON from the resource's v2 JSON, where the two differ. */
  readonly toProto?: (json: I) => unknown
  /** The REST body from the message's proto3 JSON, where the two differ. */
  readonly fromProto?: (json: Record<string, unknown>) => Record<string, unknown>
  /** Fields of the message the engine has no feature for: a request that sets one is refused, naming it. */
  readonly unsupported?: ReadonlyArray<string>
  /** Fields of its list request that change nothing here (views of what every answer holds). */
  readonly ignored?: ReadonlyArray<string>
}

/** What every resource declares. */
export interface Resource<Name extends string, A, I, Q extends ListOptions, QI extends Params> {
  /** The API group's name, the REST path's plural and the field of a list's items (`roleBindings`). */
  readonly name: Name
  /** The resource in prose: `role binding`, `role bindings`. */
  readonly one: string
  readonly many: string
  /** What the API reference says of the group. */
  readonly description: string
  readonly prefix: HttpApiEndpoint.PathSegment
  /** Its v2 JSON. */
  readonly wire: Schema.Schema<A, I>
  /** The query parameters of its list. */
  readonly query: Schema.Schema<Q, QI> & HttpApiEndpoint.HttpApiEndpoint.ValidateUrlParams<Schema.Schema<Q, QI>>
  /** The capability each operation needs. */
  readonly permissions: Capability.Operations
  readonly proto: Proto<I>
}

/** A resource the caller also writes: the engine's schema of a create, of which the body is the encoded side. */
export interface WritableResource<Name extends string, A, I, Q extends ListOptions, QI extends Params, C, CI>
  extends Resource<Name, A, I, Q, QI>
{
  readonly create: Schema.Schema<C, CI>
}

/**
 * A uid in a path. Its slashes travel unescaped (`/groups/<a>/<b>`: the server folds the rest of the path into the
 * uid) or as `%2F`; a client escapes everything else in it.
 */
const UidParam = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: (uid) => uid,
  encode: (uid) => uid.split("/").map(encodeURIComponent).join("/")
}).annotations({ description: "a uid; its slashes travel unescaped (%2F works too)" })

/** A path whose last segment is a uid (`/:uid`). */
export const UidPath = Schema.Struct({ uid: UidParam })

const MaskParams = Schema.Struct({
  updateMask: Schema.optional(Schema.String.annotations({
    description: "the fields to change, comma-separated (`*`: every mutable field); without it, those in the body"
  }))
})

/** A delete's answer: 200 and an empty body (docs/api.md §5). */
export const Deleted = HttpApiSchema.Empty(200)

/** The JSON Schema of what a schema decodes from. */
export const jsonShape = <A, I>(schema: Schema.Schema<A, I>) => {
  const { $schema: _, ...shape } = JSONSchema.make(Schema.encodedSchema(schema))
  return shape
}

/**
 * A request body schema. The engine decodes the body, after its permission check (docs/api.md §7: permission
 * before validation), and reports every bad field; so here any JSON passes unchanged. Callers are typed by the
 * shape the engine expects, which `jsonSchema` shows in the OpenAPI document; a server's handler is handed whatever
 * was sent (nothing, `null`, an array), so it passes the body on to the engine and never reads a field of it as typed
 * (an apply reads its options from it as `unknown`).
 */
export const unchecked = <T>(identifier: string, jsonSchema: object): Schema.Schema<T> =>
  Schema.declare((_: unknown): _ is T => true, { identifier, jsonSchema })

/** The bodies of a resource's create and update, from the engine's schema of a create. */
export const bodies = <C, CI>(schema: Schema.Schema<C, CI>, name: string): Bodies<CI> => {
  const shape = jsonShape(schema)
  const { required: _, ...optional } = shape as typeof shape & { readonly required?: unknown }
  return {
    create: unchecked<CI>(`Create${name}`, shape),
    update: unchecked<Partial<CI>>(`Update${name}`, optional)
  }
}

/** A resource's request bodies: its create and its update. */
export interface Bodies<CI> {
  readonly create: Schema.Schema<CI>
  readonly update: Schema.Schema<Partial<CI>>
}

/** A noun with its article: `a group`, `an identity`. */
const a = (noun: string) => `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`

/** Where a capability is needed, said once for every endpoint. */
const needs = (capability: string | undefined, where = "on its group or a group above it") =>
  capability === undefined ? "" : `Needs \`${capability}\` ${where}.`

/** The message's name: `RoleBinding`, for the bodies' identifiers. */
export const typeName = (proto: { readonly message: string }) => proto.message.slice(proto.message.lastIndexOf(".") + 1)

/** A group of the API: described, authenticated, under its prefix (the custom methods' groups too). */
export const authenticated = <
  Id extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  E,
  R,
  const Prefix extends HttpApiEndpoint.PathSegment
>(group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>, prefix: Prefix, description: string) =>
  group.annotate(OpenApi.Description, description).middleware(KnownParameters).middleware(Authentication).prefix(prefix)

/** A resource's list page: its items under its name, the next page's token and the counts. */
export const envelope = <const Name extends string, A, I>(
  r: { readonly name: Name; readonly wire: Schema.Schema<A, I> }
) => Wire.listEnvelope(r.name, r.wire)

/** The list and get endpoints of a resource. */
const readEndpoints = <const Name extends string, A, I, Q extends ListOptions, QI extends Params>(
  r: Resource<Name, A, I, Q, QI> & { readonly envelope: ReturnType<typeof envelope<Name, A, I>> }
) =>
  HttpApiGroup.make(r.name)
    .add(
      HttpApiEndpoint.get("list", `/${r.name}`)
        .setUrlParams<Schema.Schema<Q, QI>>(r.query)
        .addSuccess(r.envelope)
        .annotate(OpenApi.Summary, `List ${r.many}`)
        .annotate(
          OpenApi.Description,
          `One page of the ${r.many} the caller may see: those on whose group (or a group above it) it holds ` +
            `\`${r.permissions.list}\`. totalCount counts only those.`
        )
    )
    .add(
      HttpApiEndpoint.get("get", `/${r.name}/:uid`)
        .setPath(UidPath)
        .addSuccess(r.wire)
        .annotate(OpenApi.Summary, `Get ${a(r.one)}`)
        .annotate(
          OpenApi.Description,
          `${needs(r.permissions.list)} Without it the answer is PERMISSION_DENIED, whether or not it exists.`
        )
    )

/** The group of a resource the caller lists and gets. */
export const readableGroup = <const Name extends string, A, I, Q extends ListOptions, QI extends Params>(
  r: Resource<Name, A, I, Q, QI> & { readonly envelope: ReturnType<typeof envelope<Name, A, I>> }
) => authenticated(readEndpoints(r), r.prefix, r.description)

/** What a created resource declares beside what every resource does: its request bodies. */
type Created<Name extends string, A, I, Q extends ListOptions, QI extends Params, C, CI> =
  & WritableResource<Name, A, I, Q, QI, C, CI>
  & { readonly envelope: ReturnType<typeof envelope<Name, A, I>>; readonly body: Bodies<CI> }

/** `POST /<plural>/<group uid>`: a create in the group the path names. */
const createEndpoint = <const Name extends string, A, I, Q extends ListOptions, QI extends Params, C, CI>(
  r: Created<Name, A, I, Q, QI, C, CI>
) =>
  HttpApiEndpoint.post("create", `/${r.name}/:uid`)
    .setPath(UidPath)
    .setPayload(r.body.create)
    .addSuccess(r.wire)
    .annotate(OpenApi.Summary, `Create ${a(r.one)}`)
    .annotate(
      OpenApi.Description,
      `Creates ${a(r.one)} in the group the path names. ` +
        needs(r.permissions.create, "on that group or a group above it")
    )

/** `DELETE /<plural>/<uid>`. */
const deleteEndpoint = <const Name extends string>(r: {
  readonly name: Name
  readonly one: string
  readonly permissions: Capability.Operations
}) =>
  HttpApiEndpoint.del("delete", `/${r.name}/:uid`)
    .setPath(UidPath)
    .addSuccess(Deleted)
    .annotate(OpenApi.Summary, `Delete ${a(r.one)}`)
    .annotate(OpenApi.Description, needs(r.permissions.delete))

/** The group of a resource the caller also creates (in the group of the path) and deletes, but never changes. */
export const creatableGroup = <const Name extends string, A, I, Q extends ListOptions, QI extends Params, C, CI>(
  r: Created<Name, A, I, Q, QI, C, CI>
) => authenticated(readEndpoints(r).add(createEndpoint(r)).add(deleteEndpoint(r)), r.prefix, r.description)

/** The group of a resource the caller also creates (in the group of the path), updates and deletes. */
export const writableGroup = <const Name extends string, A, I, Q extends ListOptions, QI extends Params, C, CI>(
  r: Created<Name, A, I, Q, QI, C, CI>
) =>
  authenticated(
    readEndpoints(r)
      .add(createEndpoint(r))
      .add(
        HttpApiEndpoint.patch("update", `/${r.name}/:uid`)
          .setPath(UidPath)
          .setUrlParams(MaskParams)
          .setPayload(r.body.update)
          .addSuccess(r.wire)
          .annotate(OpenApi.Summary, `Update ${a(r.one)}`)
          .annotate(
            OpenApi.Description,
            `Changes the fields present in the body, or those updateMask names. ${needs(r.permissions.update)}`
          )
      )
      .add(deleteEndpoint(r)),
    r.prefix,
    r.description
  )

/**
 * What v1 declares of a resource it has: its group's name, its path's plural, its prefix, its JSON and the engine's
 * schema of a create (v1 writes what v2beta1 only reads: repos and tags).
 */
export interface V1<Name extends string, A, V1I, C, CI> {
  readonly name: Name
  readonly path: string
  readonly prefix: HttpApiEndpoint.PathSegment
  readonly wire: Schema.Schema<A, V1I>
  readonly create: Schema.Schema<C, CI>
}

/** The v1 group of a resource: list with every match, create, replace (PUT), delete; all deprecated. */
export const v1Group = <const Name extends string, A, V1I, C, CI>(
  v1: V1<Name, A, V1I, C, CI> & { readonly envelope: Schema.Struct<{ items: Schema.Array$<Schema.Schema<A, V1I>> }> },
  r: {
    readonly one: string
    readonly many: string
    readonly permissions: Capability.Operations
    readonly proto: { readonly message: string }
  }
) => {
  const body = bodies(v1.create, typeName(r.proto))
  return authenticated(
    HttpApiGroup.make(v1.name)
      .add(
        HttpApiEndpoint.get("list", `/${v1.path}`)
          .setUrlParams(ListQuery.V1ListQuery)
          .addSuccess(v1.envelope)
          .annotate(OpenApi.Summary, `List all ${r.many} (v1)`)
          .annotate(OpenApi.Description, `Every one the caller may see, without paging. ${needs(r.permissions.list)}`)
      )
      .add(
        HttpApiEndpoint.post("create", `/${v1.path}/:uid`)
          .setPath(UidPath)
          .setPayload(body.create)
          .addSuccess(v1.wire)
          .annotate(OpenApi.Summary, `Create ${a(r.one)} (v1)`)
          .annotate(OpenApi.Description, needs(r.permissions.create, "on the group the path names or above it"))
      )
      .add(
        HttpApiEndpoint.put("replace", `/${v1.path}/:uid`)
          .setPath(UidPath)
          .setPayload(body.create)
          .addSuccess(v1.wire)
          .annotate(OpenApi.Summary, `Replace ${a(r.one)} (v1)`)
          .annotate(OpenApi.Description, `Every field is set from the body. ${needs(r.permissions.update)}`)
      )
      .add(
        HttpApiEndpoint.del("delete", `/${v1.path}/:uid`)
          .setPath(UidPath)
          .addSuccess(Deleted)
          .annotate(OpenApi.Summary, `Delete ${a(r.one)} (v1)`)
          .annotate(OpenApi.Description, needs(r.permissions.delete))
      )
      .annotateEndpoints(OpenApi.Deprecated, true),
    v1.prefix,
    "v1 compatibility surface: deprecated, use v2beta1."
  )
}
