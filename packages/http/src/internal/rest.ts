/**
 * The REST handlers' shared parts: each resource's handlers come from its declaration in `@arbor/api/Resources` and
 * the engine service that implements it. Authorization, validation and every rule stay in the engine; the
 * declaration's query schema decodes the list options and its wire schema encodes what the engine returns. These only
 * turn pages into envelopes, and answer with each endpoint's success schema compiled (`CompiledSchema`), as the
 * framework would with the general encoder, which a 50-item page cost 160 µs.
 */
import { CurrentPrincipal } from "@arbor/api/Api"
import * as ErrorBody from "@arbor/api/ErrorBody"
import type * as ListQuery from "@arbor/api/ListQuery"
import type * as Resources from "@arbor/api/Resources"
import type { Lists, Principal, ResourceService } from "@arbor/core"
import { Errors } from "@arbor/core"
import { CompiledSchema } from "@arbor/schema-compiler"
import {
  HttpApi,
  HttpApiBuilder,
  type HttpApiEndpoint,
  type HttpApiGroup,
  type HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"

interface UidRequest {
  readonly path: { readonly uid: string }
}

/**
 * How an endpoint answers a value of its success schema: through the schema compiled (`CompiledSchema`), or its
 * general encoder when the compiled one cannot decide. A value it cannot encode is a defect (500), as the framework
 * has it.
 */
export const answer = ({ ast }: { readonly ast: AST.AST }) => {
  // The wire schemas need no service to encode.
  const schema = Schema.make<unknown, unknown, never>(ast)
  const general = (value: unknown) =>
    Schema.encodeUnknown(schema)(value).pipe(Effect.map(HttpServerResponse.unsafeJson), Effect.orDie)
  const encode = ast._tag === "Union" ? undefined : CompiledSchema.encoder(schema)
  if (encode === undefined) return general
  return (value: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const body = encode(value)
    return body === CompiledSchema.failed ? general(value) : Effect.succeed(HttpServerResponse.unsafeJson(body))
  }
}

/** Runs an engine operation as the request's caller. */
export const asCaller = <A, Err>(operation: (principal: Principal.Principal) => Effect.Effect<A, Err>) =>
  Effect.flatMap(CurrentPrincipal, operation)

/** A v2 list envelope: the page's items under the resource's plural. */
export const envelope = <const P extends string>(plural: P) => <A>(page: Lists.Page<A>) => ({
  ...({ [plural]: page.items } as { readonly [K in P]: ReadonlyArray<A> }),
  nextPageToken: page.nextPageToken,
  totalCount: page.totalCount,
  skipped: page.skipped
})

/**
 * An API of one group, under the full API's name: the handlers built against it are those of the full API's group of
 * that name, and its errors are the full API's.
 */
export const serve = <const Name extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
  group: HttpApiGroup.HttpApiGroup<Name, Endpoints, E, R>
) => ErrorBody.declareErrors(HttpApi.make("arbor").add(group))

/** The list and get handlers of a resource. */
export const readHandlers = <A, Q extends Lists.ListOptions>(
  resource: {
    readonly name: string
    readonly wire: { readonly ast: AST.AST }
    readonly envelope: { readonly ast: AST.AST }
  },
  service: ResourceService.Readable<A, Q>
) => {
  const [listed, got] = [answer(resource.envelope), answer(resource.wire)]
  const toEnvelope = envelope(resource.name)
  return {
    list: ({ urlParams }: { readonly urlParams: Q }) =>
      asCaller((p) => service.list(p, urlParams)).pipe(Effect.flatMap((page) => listed(toEnvelope(page)))),
    get: ({ path }: UidRequest) => asCaller((p) => service.get(p, path.uid)).pipe(Effect.flatMap(got)),
    /** How a resource is answered. */
    answered: got
  }
}

/**
 * A request's body, as the engine takes it: unknown, decoded after the permission check. The handlers of writes
 * read it themselves (`handleRaw`), as the framework would: JSON, which the request limits have already checked.
 */
const body = (request: HttpServerRequest.HttpServerRequest) => Effect.orDie(request.json)

/** A write: the request's body to the engine operation, as the caller; what it returns answered. */
const write = <A>(
  request: HttpServerRequest.HttpServerRequest,
  operation: (principal: Principal.Principal, input: unknown) => Effect.Effect<A, Errors.ArborError>,
  answered: (value: A) => Effect.Effect<HttpServerResponse.HttpServerResponse>
) => body(request).pipe(Effect.flatMap((input) => asCaller((p) => operation(p, input))), Effect.flatMap(answered))

/** The REST handlers of a resource the caller lists and gets (with the standard list query). */
export const readable = <
  const Name extends string,
  A,
  I,
  QI extends Resources.Params,
  Q extends Lists.ListOptions,
  S extends Lists.ListOptions
>(
  resource: Resources.Readable<Name, A, I, Lists.ListOptions, QI> & { readonly query: Schema.Schema<Q, QI> },
  service: ResourceService.Readable<A> & ResourceService.Readable<A, S> & ListQuery.ListsExactly<Q, S>
) => {
  const read = readHandlers<A, Lists.ListOptions>(resource, service)
  return HttpApiBuilder.group(
    serve(resource.group),
    resource.name,
    (h) => h.handle("list", read.list).handle("get", read.get)
  )
}

/** The create and delete handlers of a resource, the create answered as `answered` answers it. */
const createHandlers = <A>(
  service: ResourceService.Creatable<A>,
  answered: (value: A) => Effect.Effect<HttpServerResponse.HttpServerResponse>
) => ({
  create: ({ path, request }: UidRequest & { readonly request: HttpServerRequest.HttpServerRequest }) =>
    write(request, (p, input) => service.create(p, path.uid, input), answered),
  delete: ({ path }: UidRequest) => asCaller((p) => service.delete(p, path.uid))
})

/** The REST handlers of a resource the caller also creates and deletes, but never changes. */
export const creatable = <
  const Name extends string,
  A,
  I,
  QI extends Resources.Params,
  C,
  CI,
  Q extends Lists.ListOptions,
  S extends Lists.ListOptions
>(
  resource: Resources.Creatable<Name, A, I, Lists.ListOptions, QI, C, CI> & { readonly query: Schema.Schema<Q, QI> },
  service: ResourceService.Creatable<A> & ResourceService.Readable<A, S> & ListQuery.ListsExactly<Q, S>
) => {
  const read = readHandlers<A, Lists.ListOptions>(resource, service)
  const created = createHandlers(service, read.answered)
  return HttpApiBuilder.group(
    serve(resource.group),
    resource.name,
    (h) =>
      h.handle("list", read.list).handle("get", read.get).handleRaw("create", created.create)
        .handle("delete", created.delete)
  )
}

/** The REST handlers of a resource the caller also creates, updates and deletes. */
export const writable = <
  const Name extends string,
  A,
  I,
  QI extends Resources.Params,
  C,
  CI,
  Q extends Lists.ListOptions,
  S extends Lists.ListOptions
>(
  resource: Resources.Writable<Name, A, I, Lists.ListOptions, QI, C, CI> & { readonly query: Schema.Schema<Q, QI> },
  service: ResourceService.Writable<A> & ResourceService.Readable<A, S> & ListQuery.ListsExactly<Q, S>
) => {
  const read = readHandlers<A, Lists.ListOptions>(resource, service)
  const created = createHandlers(service, read.answered)
  return HttpApiBuilder.group(
    serve(resource.group),
    resource.name,
    (h) =>
      h.handle("list", read.list).handle("get", read.get).handleRaw("create", created.create)
        .handleRaw("update", ({ path, request, urlParams }) =>
          write(request, (p, patch) =>
            service.update(p, path.uid, patch, urlParams.updateMask), read.answered))
        .handle("delete", created.delete)
  )
}

/** How many items a v1 list returns at most: it has no paging. */
const v1Limit = 10_000

/** The v1 handlers of a resource: every match in `items`, create, replace (PUT), delete. */
/** v1's spellings of the output-only `uid`, `createTime` and `updateTime`. */
const v1OutputOnly = new Set(["id", "createdAt", "updatedAt"])

/**
 * A v1 body as the engine reads it: v1's spellings of the output-only fields, which a v1 client sends back with the
 * whole resource it read (v1 updates send the whole resource), are ignored as the v2 ones are (AIP-203).
 */
const v1Input = (input: unknown): unknown =>
  typeof input === "object" && input !== null && !Array.isArray(input)
    ? Object.fromEntries(Object.entries(input).filter(([field]) => !v1OutputOnly.has(field)))
    : input

export const v1 = <const Name extends string, A, V1I, C, CI>(
  surface: Resources.V1Surface<Name, A, V1I, C, CI>,
  service: ResourceService.Writable<A>
) => {
  const [listed, answered] = [answer(surface.envelope), answer(surface.wire)]
  return HttpApiBuilder.group(
    serve(surface.group),
    surface.name,
    (h) =>
      h.handle("list", ({ urlParams }) =>
        asCaller((p) =>
          Effect.gen(function*() {
            const items: Array<A> = []
            let pageToken: string | undefined
            do {
              const page = yield* service.list(p, { ...urlParams, pageSize: 200, pageToken })
              if (page.totalCount > v1Limit) {
                return yield* new Errors.FailedPrecondition({
                  summary: `the list matches ${page.totalCount} items, more than v1 returns (${v1Limit}); use v2beta1`,
                  violations: [
                    new Errors.PreconditionViolation({
                      type: "TOO_MANY_RESULTS",
                      subject: "items",
                      description: "v1 lists have no paging; narrow the filters or use v2beta1"
                    })
                  ]
                })
              }
              items.push(...page.items)
              pageToken = page.nextPageToken
            } while (pageToken !== undefined)
            return yield* listed({ items })
          })
        ))
        .handleRaw("create", ({ path, request }) =>
          write(request, (p, input) => service.create(p, path.uid, v1Input(input)), answered))
        .handleRaw("replace", ({ path, request }) =>
          write(request, (p, input) =>
            service.update(p, path.uid, v1Input(input), "*"), answered))
        .handle("delete", ({ path }) =>
          asCaller((p) =>
            service.delete(p, path.uid)
          ))
  )
}
