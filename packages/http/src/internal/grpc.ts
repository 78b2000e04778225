/**
 * The gRPC surface's shared parts (docs/api.md §11): each served method calls the engine operation of its REST twin,
 * with the same principal, list options, request body and wire encoding. A resource leaves the engine through its v2
 * wire schema (`Wire`), whose JSON is the proto3 JSON of its message, and a request body enters the engine as the
 * proto3 JSON of its message, which is the REST body.
 */
import * as ListQuery from "@arbor/api/ListQuery"
import type { UIDPFilter } from "@arbor/api/proto/platform/common/v1/uidp.platform_pb"
import type * as Resources from "@arbor/api/Resources"
import type { Lists, Principal, ResourceService } from "@arbor/core"
import { Errors, Validation } from "@arbor/core"
import {
  create,
  createRegistry,
  type DescMessage,
  type DescMethod,
  type DescMethodUnary,
  type DescService,
  fromJson,
  type JsonObject,
  type JsonValue,
  type Message,
  type MessageShape,
  toJson
} from "@bufbuild/protobuf"
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type MethodImpl } from "@connectrpc/connect"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

type E = Errors.ArborError

/** How a method runs an engine operation: as the caller named by the bearer token, or with the bearer itself. */
export interface Runner {
  readonly asCaller: <A>(
    context: HandlerContext,
    operation: (principal: Principal.Principal) => Effect.Effect<A, E>
  ) => Promise<A>
  readonly withBearer: <A>(context: HandlerContext, operation: (token: string) => Effect.Effect<A, E>) => Promise<A>
}

const isUnary = (method: DescMethod): method is DescMethodUnary => method.methodKind === "unary"

/** A method the engine has no feature for, answered as ConnectRPC answers one left out of a service. */
const unimplemented = (method: DescMethodUnary): MethodImpl<DescMethodUnary> => () => {
  throw new ConnectError(`${method.parent.typeName}.${method.name} is not implemented`, Code.Unimplemented)
}

/** A field the engine has no feature for, set in a request. */
const unsupported = (field: string) => Errors.InvalidArgument.field(field, "is not supported by this server")

/** A message from its proto3 JSON; fields the message lacks (REST-only ones such as a tag's `createTime`) drop. */
export const message = <D extends DescMessage>(desc: D, json: unknown): MessageShape<D> =>
  fromJson(desc, json as JsonValue, { ignoreUnknownFields: true })

interface ListRequest {
  readonly uidp?: UIDPFilter | undefined
  readonly pageSize: number
  readonly pageToken: string
  readonly orderBy: string
  readonly skip: number
}

/** The engine's list options from a list request; zero values are unset, as absent query parameters are. */
export const listOptions = (request: ListRequest): Lists.ListOptions => ({
  descendantsOf: request.uidp?.descendantsOf || undefined,
  childrenOf: request.uidp?.childrenOf || undefined,
  ancestorsOf: request.uidp?.ancestorsOf || undefined,
  inRoot: request.uidp?.inRoot || undefined,
  ids: request.uidp !== undefined && request.uidp.ids.length > 0 ? request.uidp.ids : undefined,
  pageSize: request.pageSize,
  pageToken: request.pageToken || undefined,
  orderBy: request.orderBy || undefined,
  skip: request.skip
})

/**
 * A list request's proto3 JSON as the REST query of the same list (`uidp.descendantsOf` for `uidp`'s
 * `descendantsOf`, every name in its documented spelling), which the resource's query schema decodes as it decodes
 * REST's: one rule for both surfaces.
 */
const asQuery = (json: JsonObject) => {
  const query: Record<string, string | ReadonlyArray<string>> = {}
  const put = (key: string, value: JsonValue | undefined) => {
    if (value === undefined || value === null) return
    query[ListQuery.aliases[key] ?? key] = Array.isArray(value)
      ? value.map(String)
      : typeof value === "object"
      ? JSON.stringify(value)
      : String(value)
  }
  for (const [key, value] of Object.entries(json)) {
    if (key === "uidp" && typeof value === "object" && value !== null && !Array.isArray(value)) {
      for (const [inner, v] of Object.entries(value)) put(`uidp.${inner}`, v)
    } else put(key, value)
  }
  return query
}

/** A list response: the page's items under the plural, the next page token, the counts. */
export const listResponse = <P extends string, A, M>(plural: P, page: Lists.Page<A>, item: (a: A) => M) => ({
  ...({ [plural]: page.items.map(item) } as { readonly [K in P]: Array<M> }),
  nextPageToken: page.nextPageToken ?? "",
  totalCount: BigInt(page.totalCount),
  skipped: page.skipped
})

/** A message's fields as its proto3 JSON (defaults left out); one it cannot hold is the request's own error. */
export const fieldsOf = (desc: DescMessage, value: Message, field: string) =>
  Effect.try({
    try: () => {
      const json = toJson(desc, value)
      return typeof json === "object" && json !== null && !Array.isArray(json) ? json : {}
    },
    catch: (error) => Errors.InvalidArgument.field(field, error instanceof Error ? error.message : String(error))
  })

/** A request's set fields beyond `known`, as the refusal of the first: the engine has no feature for it. */
const beyond = (json: JsonObject, known: ReadonlySet<string>) => {
  const other = Object.keys(json).find((key) => !known.has(key))
  return other === undefined ? Effect.void : Effect.fail(unsupported(other))
}

export const text = (value: JsonValue | undefined) => typeof value === "string" ? value : ""

/** A resource as its message's proto3 JSON: its v2 wire JSON, adjusted by its declaration. */
export const protoJsonOf = <A, I>(
  resource: { readonly wire: Schema.Schema<A, I>; readonly proto: Resources.Proto<I> }
) => {
  const { toProto = (json) => json } = resource.proto
  const encodeWire = Schema.encodeSync(resource.wire)
  return (value: A) => toProto(encodeWire(value))
}

/**
 * The methods of a resource's service, from its declaration (`@arbor/api/Resources`): `Get<Message>`,
 * `List<Plural>`, `Create<Message>`, `Update<Message>` and `Delete<Message>` call the engine service's operation of
 * that name, with the request's resource as the REST body would carry it (its proto3 JSON) and the resource back
 * through its v2 wire schema. A request that sets a field the engine has no feature for is refused, naming it. Methods
 * registered before keep their own mapping (a domain's custom methods); the rest answer `UNIMPLEMENTED`. `descriptor`
 * is the service the declaration names.
 */
export const serveResource = <A, I, Q extends Lists.ListOptions, QI, S extends Lists.ListOptions>(
  router: ConnectRouter,
  run: Runner,
  descriptor: DescService,
  resource: {
    readonly name: string
    readonly wire: Schema.Schema<A, I>
    readonly query: Schema.Schema<Q, QI>
    readonly proto: Resources.Proto<I>
  },
  service:
    & (ResourceService.Readable<A, Q> | ResourceService.Writable<A, Q>)
    & ResourceService.Readable<A, S>
    & ListQuery.ListsExactly<Q, S>
) => {
  const { field, fromProto = (json) => json } = resource.proto
  if (descriptor.typeName !== resource.proto.service) {
    throw new Error(`${resource.name} is declared on ${resource.proto.service}, not ${descriptor.typeName}`)
  }
  const desc = createRegistry(descriptor.file, ...descriptor.file.dependencies).getMessage(resource.proto.message)
  if (desc === undefined) throw new Error(`no message ${resource.proto.message} beside ${descriptor.typeName}`)
  const encode = protoJsonOf(resource)
  const toMessage = (value: A) => message(desc, encode(value))
  /** The request's resource as the REST body: its proto3 JSON, adjusted; fields the engine lacks refused. */
  const input = (json: JsonObject): Effect.Effect<Record<string, unknown>, Errors.InvalidArgument> => {
    const body = json[field]
    const given: JsonObject = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}
    const refused = resource.proto.unsupported?.find((name) => given[name] !== undefined)
    return refused === undefined
      ? Effect.succeed(fromProto({ ...given }))
      : Effect.fail(unsupported(`${field}.${refused}`))
  }
  const parameters = new Set(ListQuery.parameters(resource.query).map(({ name }) => name))
  const decodeQuery = Schema.decodeUnknown(resource.query)
  const registered = new Set(router.handlers.map((handler) => handler.method))
  const operations = (method: DescMethodUnary): MethodImpl<DescMethodUnary> | undefined => {
    const call = <B>(
      fields: ReadonlyArray<string>,
      operation: (p: Principal.Principal, json: JsonObject) => Effect.Effect<B, E>
    ) => {
      const known = new Set(fields)
      return (request: Message, context: HandlerContext) =>
        run.asCaller(context, (p) =>
          fieldsOf(method.input, request, field).pipe(
            Effect.tap((json) => beyond(json, known)),
            Effect.flatMap((json) => operation(p, json))
          ))
    }
    const message = desc.name
    switch (method.name) {
      case `Get${message}`:
        return call(
          ["uid"],
          (p, json) => Effect.map(service.get(p, text(json.uid)), toMessage)
        )
      case `Delete${message}`:
        return "delete" in service
          ? call(["uid"], (p, json) => Effect.as(service.delete(p, text(json.uid)), create(method.output)))
          : undefined
      case `Create${message}`:
        return "create" in service
          ? call(["parent", field], (p, json) =>
            input(json).pipe(
              Effect.flatMap((body) => service.create(p, text(json.parent), body)),
              Effect.map(toMessage)
            ))
          : undefined
      case `Update${message}`:
        return "update" in service
          ? call([field, "updateMask"], (p, json) =>
            input(json).pipe(
              Effect.flatMap(({ uid, ...patch }) =>
                service.update(
                  p,
                  typeof uid === "string" ? uid : "",
                  patch,
                  typeof json.updateMask === "string" ? json.updateMask : undefined
                )
              ),
              Effect.map(toMessage)
            ))
          : undefined
    }
    if (method.name.startsWith("List") && method.output.field[resource.name] !== undefined) {
      return (request: Message, context: HandlerContext) =>
        run.asCaller(context, (p) =>
          fieldsOf(method.input, request, "request").pipe(
            Effect.flatMap((json) => {
              const { ignored = [] } = resource.proto
              const query = asQuery(Object.fromEntries(Object.entries(json).filter(([key]) => !ignored.includes(key))))
              const refused = Object.keys(query).find((key) => !parameters.has(key))
              return refused === undefined ? Effect.succeed(query) : Effect.fail(unsupported(refused))
            }),
            Effect.flatMap((query) => Effect.mapError(decodeQuery(query), (error) => Validation.fromParseError(error))),
            Effect.flatMap((options) => service.list(p, options)),
            Effect.map((page) => create(method.output, listResponse(resource.name, page, toMessage)))
          ))
    }
    return undefined
  }
  for (const method of descriptor.methods) {
    if (registered.has(method) || !isUnary(method)) continue
    router.rpc(method, operations(method) ?? unimplemented(method))
  }
}

/** The first of `fields` that is set, as the refusal of a field the engine does not support. */
export const firstSet = (fields: Record<string, boolean>): Errors.InvalidArgument | undefined => {
  const set = Object.entries(fields).find(([, isSet]) => isSet)
  return set === undefined ? undefined : unsupported(set[0])
}

export const nonEmpty = <A>(values: ReadonlyArray<A>) => values.length > 0 ? values : undefined

/** Fails with `refusal` when there is one. */
export const refusedUnless = (refusal: Errors.InvalidArgument | undefined) =>
  refusal === undefined ? Effect.void : Effect.fail(refusal)
