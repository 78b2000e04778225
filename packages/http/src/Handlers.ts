/**
 * The handlers: each resource's REST handlers come from its declaration in `@arbor/api/Resources` and the engine
 * service that implements it. Authorization, validation and every rule stay in the engine; the declaration's query
 * schema decodes the list options and its wire schema encodes what the engine returns. This module only turns pages
 * into envelopes, and answers with each endpoint's success schema compiled (`CompiledSchema`), as the framework would
 * with the general encoder, which a 50-item page cost 160 µs.
 */
import { Api, authzenPaths, CurrentPrincipal, UpstreamToken } from "@arbor/api/Api"
import * as ErrorBody from "@arbor/api/ErrorBody"
import type * as ListQuery from "@arbor/api/ListQuery"
import * as Resources from "@arbor/api/Resources"
import * as Wire from "@arbor/api/Wire"
import type { Lists, Principal, ResourceService } from "@arbor/core"
import { Arbor, Errors, SignIn } from "@arbor/core"
import { CompiledSchema } from "@arbor/schema-compiler"
import {
  HttpApi,
  HttpApiBuilder,
  type HttpApiGroup,
  type HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import type { HttpApiEndpoint } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import * as Authentication from "./Authentication.js"
import * as EngineServices from "./EngineServices.js"
import * as EventStream from "./EventStream.js"

interface UidRequest {
  readonly path: { readonly uid: string }
}

/**
 * How an endpoint answers a value of its success schema: through the schema compiled (`CompiledSchema`), or its
 * general encoder when the compiled one cannot decide. A value it cannot encode is a defect (500), as the framework
 * has it.
 */
const answer = ({ ast }: { readonly ast: AST.AST }) => {
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
const asCaller = <A, Err>(operation: (principal: Principal.Principal) => Effect.Effect<A, Err>) =>
  Effect.flatMap(CurrentPrincipal, operation)

/** A v2 list envelope: the page's items under the resource's plural. */
const envelope = <const P extends string>(plural: P) => <A>(page: Lists.Page<A>) => ({
  ...({ [plural]: page.items } as { readonly [K in P]: ReadonlyArray<A> }),
  nextPageToken: page.nextPageToken,
  totalCount: page.totalCount,
  skipped: page.skipped
})

/**
 * An API of one group, under the full API's name: the handlers built against it are those of the full API's group of
 * that name, and its errors are the full API's.
 */
const serve = <const Name extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
  group: HttpApiGroup.HttpApiGroup<Name, Endpoints, E, R>
) => ErrorBody.declareErrors(HttpApi.make("arbor").add(group))

/** The list and get handlers of a resource. */
const readHandlers = <A, Q extends Lists.ListOptions>(
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
const readable = <
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
const creatable = <
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
const writable = <
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
const v1 = <const Name extends string, A, V1I, C, CI>(
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
          write(request, (p, input) => service.create(p, path.uid, input), answered))
        .handleRaw("replace", ({ path, request }) =>
          write(request, (p, input) =>
            service.update(p, path.uid, input, "*"), answered))
        .handle("delete", ({ path }) =>
          asCaller((p) =>
            service.delete(p, path.uid)
          ))
  )
}

/** Every handler, over the engine's services. */
export const layer = Layer.unwrapEffect(Effect.gen(function*() {
  const {
    groups,
    identities,
    roles,
    bindings,
    providers,
    associations,
    checks,
    invites,
    repos,
    tags,
    advisories,
    auditTrail,
    subscriptions,
    terms,
    mappings,
    scim,
    access,
    store,
    sts,
    refreshTokens,
    tokens,
    authentication
  } = yield* EngineServices.services

  const exchange = ({ urlParams }: {
    readonly urlParams: {
      readonly aud?: string | undefined
      readonly identity?: string | undefined
      readonly cap?: ReadonlyArray<string> | undefined
      readonly scope?: ReadonlyArray<string> | undefined
    }
  }) =>
    Effect.flatMap(UpstreamToken, (token) =>
      sts.exchange({
        token,
        audience: urlParams.aud,
        identity: urlParams.identity,
        capabilities: urlParams.cap,
        scopes: urlParams.scope
      }))

  const tag = readHandlers(Resources.tags, tags)
  const advisory = readHandlers(Resources.advisories, advisories)
  const entries = answer(Wire.listEnvelope("events", Wire.ChangeEntry))
  const toEntries = envelope("events")
  return Layer.mergeAll(
    writable(Resources.groups, groups),
    writable(Resources.identities, identities),
    writable(Resources.roles, roles),
    writable(Resources.roleBindings, bindings),
    writable(Resources.identityProviders, providers),
    writable(Resources.accountAssociations, associations),
    writable(Resources.groupInvites, invites),
    readable(Resources.repos, repos),
    creatable(Resources.subscriptions, subscriptions),
    creatable(Resources.externalGroupRoleMappings, mappings),
    HttpApiBuilder.group(
      Api,
      "mappingBatches",
      (h) => h.handle("delete", ({ payload }) => asCaller((p) => mappings.batchDelete(p, payload)))
    ),
    // Their lists take queries of their own, which the framework's request types cannot carry through `readable`.
    HttpApiBuilder.group(Api, "tags", (h) => h.handle("list", tag.list).handle("get", tag.get)),
    HttpApiBuilder.group(Api, "advisories", (h) => h.handle("list", advisory.list).handle("get", advisory.get)),
    v1(Resources.groupsV1, groups),
    v1(Resources.identitiesV1, identities),
    v1(Resources.rolesV1, roles),
    v1(Resources.roleBindingsV1, bindings),
    v1(Resources.reposV1, repos),
    v1(Resources.tagsV1, tags),
    HttpApiBuilder.group(
      Api,
      "organizations",
      (h) => h.handle("create", ({ payload }) => asCaller((p) => groups.createRoot(p, payload)))
    ),
    HttpApiBuilder.group(Api, "auditTrail", (h) =>
      h
        .handle("list", ({ urlParams }) =>
          asCaller((p) =>
            auditTrail.list(p, urlParams)
          ).pipe(Effect.flatMap((page) => entries(toEntries(page)))))
        .handleRaw("watch", ({ request, urlParams }) =>
          asCaller((p) =>
            Effect.gen(function*() {
              // The stream's caller is checked again, as a request with its token would be, before each batch that
              // may change its authority, and the stream ends at the token's expiry.
              const authority = yield* authentication.authority(Authentication.bearerIn(request.headers.authorization))
              const relay = yield* auditTrail.follow(
                p,
                { ...urlParams, after: request.headers["last-event-id"] ?? urlParams.after },
                authority
              )
              return { relay, caller: p }
            })
          ).pipe(Effect.flatMap(({ caller, relay }) => EventStream.response(relay, caller))))),
    HttpApiBuilder.group(Api, "verifiedOrganizations", (h) =>
      h
        .handle("lookup", () => asCaller((p) => Effect.map(groups.lookupVerified(p), (group) => ({ group }))))
        .handle("checkEligibility", () => asCaller((p) => groups.checkEligibility(p)))
        .handle("requestAccess", ({ path }) => asCaller((p) => groups.requestAccess(p, path.uid)))),
    HttpApiBuilder.group(
      Api,
      "accountAssociationChecks",
      (h) => h.handle("check", ({ path, payload }) => asCaller((p) => checks.check(p, path.uid, payload)))
    ),
    HttpApiBuilder.group(Api, "scimCredentials", (h) =>
      h
        .handle("generate", ({ path, payload }) => asCaller((p) => scim.generateToken(p, path.uid, payload)))
        .handle("regenerate", ({ path, payload }) => asCaller((p) => scim.regenerateToken(p, path.uid, payload)))
        .handle("revoke", ({ path }) => asCaller((p) => scim.revokeToken(p, path.uid)))
        .handle("setEnabled", ({ path, payload }) => asCaller((p) => scim.setEnabled(p, path.uid, payload)))),
    HttpApiBuilder.group(Api, "repoReadmes", (h) =>
      h
        .handle("get", ({ path }) => asCaller((p) => repos.readme(p, path.uid)))
        .handle("update", ({ path, payload, urlParams }) =>
          asCaller((p) =>
            repos.updateReadme(p, path.uid, payload, urlParams.updateMask)
          ))),
    HttpApiBuilder.group(Api, "terms", (h) =>
      h
        .handle("accept", ({ path, payload }) => asCaller((p) => terms.accept(p, path.uid, payload)))
        .handle("list", ({ path, urlParams }) =>
          asCaller((p) =>
            terms.list(p, path.uid, urlParams)
          ).pipe(Effect.map(envelope("termsAcceptances"))))),
    HttpApiBuilder.group(
      Api,
      "identityLookup",
      (h) => h.handle("lookup", ({ urlParams }) => asCaller(() => identities.lookup(urlParams)))
    ),
    HttpApiBuilder.group(
      Api,
      "ownMetadata",
      (h) => h.handle("update", ({ payload }) => asCaller((p) => identities.updateMetadata(p, payload)))
    ),
    HttpApiBuilder.group(
      Api,
      "roleBindingBatches",
      (h) =>
        h.handle(
          "create",
          ({ payload }) =>
            asCaller((p) => bindings.batchCreate(p, payload)).pipe(Effect.map((roleBindings) => ({ roleBindings })))
        )
    ),
    HttpApiBuilder.group(
      Api,
      "inviteCodes",
      (h) => h.handle("redeem", ({ payload }) => asCaller((p) => invites.redeemOwn(p, payload)))
    ),
    HttpApiBuilder.group(Api, "sts", (h) =>
      h
        .handle("exchange", exchange)
        .handle("exchangePost", exchange)
        .handle("exchangeRefreshToken", ({ urlParams }) =>
          Effect.flatMap(UpstreamToken, (token) =>
            refreshTokens.exchange(token, urlParams.aud, {
              capabilities: urlParams.cap,
              scopes: urlParams.scope
            })))
        .handle("configuration", () =>
          Effect.succeed(SignIn.openIdConfiguration(tokens.issuer)))
        .handle("jwks", () =>
          tokens.jwks)),
    HttpApiBuilder.group(Api, "decisions", (h) =>
      h
        .handle("evaluate", ({ payload }) => asCaller((p) => access.evaluate(p, payload)))
        .handle("evaluateMany", ({ payload }) => asCaller((p) => access.evaluateMany(p, payload)))
        .handle("searchActions", ({ payload }) =>
          asCaller((p) => access.searchActions(p, payload)).pipe(
            Effect.map((capabilities) => ({ results: capabilities.map((name) => ({ name })) }))
          ))),
    HttpApiBuilder.group(Api, "decisionsMetadata", (h) =>
      h.handle("configuration", () =>
        Effect.succeed({
          policy_decision_point: tokens.audience,
          access_evaluation_endpoint: `${tokens.audience}${authzenPaths.evaluation}`,
          access_evaluations_endpoint: `${tokens.audience}${authzenPaths.evaluations}`,
          search_action_endpoint: `${tokens.audience}${authzenPaths.searchAction}`
        }))),
    HttpApiBuilder.group(Api, "health", (h) =>
      h
        .handle("live", () => Effect.succeed({ status: "ok" as const }))
        .handle("ready", () => Effect.as(Arbor.ready(store), { status: "ready" as const })))
  )
}))
