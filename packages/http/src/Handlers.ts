/**
 * The handlers: each maps a request of the API contract onto an engine service. Authorization, validation and every
 * rule stay in the engine; the contract's wire schemas decode query parameters into list options and encode what the
 * engine returns. This module only turns pages into envelopes, and answers with each endpoint's success schema compiled
 * (`CompiledSchema`), as the framework would with the general encoder, which a 50-item page cost 160 µs.
 */
import { Api, CurrentPrincipal, UpstreamToken } from "@arbor/api/Api"
import * as OAuth from "@arbor/api/OAuth"
import type { Lists, Principal } from "@arbor/core"
import { CompiledSchema, Errors } from "@arbor/core"
import { HttpApiBuilder, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as EngineServices from "./EngineServices.js"

type E = Errors.ArborError

/** What a resource's service offers to lists and gets. */
interface Readable<A, O extends Lists.ListOptions> {
  readonly list: (principal: Principal.Principal, options: O) => Effect.Effect<Lists.Page<A>, E>
  readonly get: (principal: Principal.Principal, uid: string) => Effect.Effect<A, E>
}

/** What a resource's service offers to create, update and delete. */
interface Writable<A, C> extends Readable<A, Lists.ListOptions> {
  readonly create: (principal: Principal.Principal, parent: string, input: C) => Effect.Effect<A, E>
  readonly update: (
    principal: Principal.Principal,
    uid: string,
    patch: Partial<C>,
    updateMask?: string
  ) => Effect.Effect<A, E>
  readonly delete: (principal: Principal.Principal, uid: string) => Effect.Effect<void, E>
}

interface UidRequest {
  readonly path: { readonly uid: string }
}

type Handler = (request: never) => Effect.Effect<unknown, unknown, unknown>

/**
 * `handlers` answering with their endpoints' JSON success schemas compiled: a response as the framework makes one,
 * or the value itself (for the framework's general encoder) when the compiled encoder cannot decide.
 */
const encoded = <H extends Readonly<Record<string, Handler>>>(group: string, handlers: H): H => {
  const endpoints = Api.groups[group]!.endpoints as Readonly<
    Record<string, { readonly successSchema: Schema.Schema.Any }>
  >
  return Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => {
      const schema = endpoints[name]!.successSchema
      const ast = schema.ast
      const encoding = HttpApiSchema.getEncoding(ast)
      const encode = ast._tag === "Union" || HttpApiSchema.isVoid(ast) || encoding.kind !== "Json"
        ? undefined
        : CompiledSchema.encoder(schema)
      if (encode === undefined) return [name, handler]
      const status = HttpApiSchema.getStatusSuccessAST(ast)
      const contentType = encoding.contentType
      const respond = (value: unknown) => {
        const body = encode(value)
        return body === CompiledSchema.failed ? value : HttpServerResponse.unsafeJson(body, { status, contentType })
      }
      return [name, (request: never) => Effect.map(handler(request), respond)]
    })
  ) as unknown as H
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

/** The v2 handlers of a resource that lists and gets. */
const readable = <const P extends string, A, O extends Lists.ListOptions>(plural: P, service: Readable<A, O>) => {
  const toEnvelope = envelope(plural)
  return {
    list: ({ urlParams }: { readonly urlParams: O }) =>
      asCaller((p) => service.list(p, urlParams)).pipe(Effect.map(toEnvelope)),
    get: ({ path }: UidRequest) => asCaller((p) => service.get(p, path.uid))
  }
}

/** The v2 handlers of a resource that is also created, updated and deleted. */
const writable = <const P extends string, A, C>(plural: P, service: Writable<A, C>) => ({
  ...readable(plural, service),
  create: ({ path, payload }: UidRequest & { readonly payload: C }) =>
    asCaller((p) => service.create(p, path.uid, payload)),
  update: ({ path, payload, urlParams }: UidRequest & {
    readonly payload: Partial<C>
    readonly urlParams: { readonly updateMask?: string | undefined }
  }) => asCaller((p) => service.update(p, path.uid, payload, urlParams.updateMask)),
  delete: ({ path }: UidRequest) => asCaller((p) => service.delete(p, path.uid))
})

/** How many items a v1 list returns at most: it has no paging. */
const v1Limit = 10_000

/** The v1 handlers of a resource: every match in `items`, create, replace (PUT, every field), delete. */
const v1 = <A, C>(service: Writable<A, C>) => ({
  list: ({ urlParams }: { readonly urlParams: Lists.ListOptions }) =>
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
        return { items }
      })
    ),
  create: ({ path, payload }: UidRequest & { readonly payload: C }) =>
    asCaller((p) => service.create(p, path.uid, payload)),
  replace: ({ path, payload }: UidRequest & { readonly payload: C }) =>
    asCaller((p) => service.update(p, path.uid, payload, "*")),
  delete: ({ path }: UidRequest) => asCaller((p) => service.delete(p, path.uid))
})

/** Every handler, over the engine's services. */
export const layer = Layer.unwrapEffect(Effect.gen(function*() {
  const {
    groups,
    identities,
    roles,
    bindings,
    providers,
    associations,
    invites,
    repos,
    tags,
    advisories,
    store,
    sts,
    refreshTokens,
    tokens
  } = yield* EngineServices.services

  const exchange = ({ urlParams }: {
    readonly urlParams: { readonly aud?: string | undefined; readonly identity?: string | undefined }
  }) =>
    Effect.flatMap(
      UpstreamToken,
      (token) => sts.exchange({ token, audience: urlParams.aud, identity: urlParams.identity })
    )
  const configuration = {
    issuer: tokens.issuer,
    jwks_uri: `${tokens.issuer}/.well-known/jwks.json`,
    authorization_endpoint: `${tokens.issuer}${OAuth.paths.authorization}`,
    token_endpoint: `${tokens.issuer}${OAuth.paths.token}`,
    device_authorization_endpoint: `${tokens.issuer}${OAuth.paths.deviceAuthorization}`,
    revocation_endpoint: `${tokens.issuer}${OAuth.paths.revocation}`,
    grant_types_supported: [OAuth.deviceCodeGrant],
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["ES256"],
    claims_supported: ["iss", "sub", "aud", "iat", "exp", "jti", "act", "email"]
  }

  const group = encoded("groups", writable("groups", groups))
  const identity = encoded("identities", writable("identities", identities))
  const role = encoded("roles", writable("roles", roles))
  const binding = encoded("roleBindings", writable("roleBindings", bindings))
  const provider = encoded("identityProviders", writable("identityProviders", providers))
  const association = encoded("accountAssociations", writable("accountAssociations", associations))
  const invite = encoded("groupInvites", writable("groupInvites", invites))
  const repo = encoded("repos", readable("repos", repos))
  const tag = encoded("tags", readable("tags", tags))
  const advisory = encoded("advisories", readable("advisories", advisories))
  const groupV1 = encoded("groupsV1", v1(groups))
  const identityV1 = encoded("identitiesV1", v1(identities))
  const roleV1 = encoded("rolesV1", v1(roles))
  const bindingV1 = encoded("roleBindingsV1", v1(bindings))
  const repoV1 = encoded("reposV1", v1(EngineServices.upserting(repos)))
  const tagV1 = encoded("tagsV1", v1(EngineServices.upserting(tags)))

  return Layer.mergeAll(
    HttpApiBuilder.group(
      Api,
      "groups",
      (h) =>
        h.handle("list", group.list).handle("get", group.get).handle("create", group.create)
          .handle("update", group.update).handle("delete", group.delete)
          .handle("createRoot", ({ payload }) => asCaller((p) => groups.createRoot(p, payload)))
    ),
    HttpApiBuilder.group(
      Api,
      "identities",
      (h) =>
        h.handle("list", identity.list).handle("get", identity.get).handle("create", identity.create)
          .handle("update", identity.update).handle("delete", identity.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "roles",
      (h) =>
        h.handle("list", role.list).handle("get", role.get).handle("create", role.create)
          .handle("update", role.update).handle("delete", role.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "roleBindings",
      (h) =>
        h.handle("list", binding.list).handle("get", binding.get).handle("create", binding.create)
          .handle("update", binding.update).handle("delete", binding.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "identityProviders",
      (h) =>
        h.handle("list", provider.list).handle("get", provider.get).handle("create", provider.create)
          .handle("update", provider.update).handle("delete", provider.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "accountAssociations",
      (h) =>
        h.handle("list", association.list).handle("get", association.get).handle("create", association.create)
          .handle("update", association.update).handle("delete", association.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "groupInvites",
      (h) =>
        h.handle("list", invite.list).handle("get", invite.get).handle("create", invite.create)
          .handle("update", invite.update).handle("delete", invite.delete)
          .handle("redeem", ({ payload }) => asCaller((p) => invites.redeemOwn(p, payload)))
    ),
    HttpApiBuilder.group(Api, "repos", (h) => h.handle("list", repo.list).handle("get", repo.get)),
    HttpApiBuilder.group(Api, "tags", (h) => h.handle("list", tag.list).handle("get", tag.get)),
    HttpApiBuilder.group(Api, "advisories", (h) => h.handle("list", advisory.list).handle("get", advisory.get)),
    HttpApiBuilder.group(
      Api,
      "groupsV1",
      (h) =>
        h.handle("list", groupV1.list).handle("create", groupV1.create).handle("replace", groupV1.replace)
          .handle("delete", groupV1.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "identitiesV1",
      (h) =>
        h.handle("list", identityV1.list).handle("create", identityV1.create).handle("replace", identityV1.replace)
          .handle("delete", identityV1.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "rolesV1",
      (h) =>
        h.handle("list", roleV1.list).handle("create", roleV1.create).handle("replace", roleV1.replace)
          .handle("delete", roleV1.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "roleBindingsV1",
      (h) =>
        h.handle("list", bindingV1.list).handle("create", bindingV1.create).handle("replace", bindingV1.replace)
          .handle("delete", bindingV1.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "reposV1",
      (h) =>
        h.handle("list", repoV1.list).handle("create", repoV1.create).handle("replace", repoV1.replace)
          .handle("delete", repoV1.delete)
    ),
    HttpApiBuilder.group(
      Api,
      "tagsV1",
      (h) =>
        h.handle("list", tagV1.list).handle("create", tagV1.create).handle("replace", tagV1.replace)
          .handle("delete", tagV1.delete)
    ),
    HttpApiBuilder.group(Api, "sts", (h) =>
      h
        .handle("exchange", exchange)
        .handle("exchangePost", exchange)
        .handle("exchangeRefreshToken", ({ urlParams }) =>
          Effect.flatMap(UpstreamToken, (token) =>
            refreshTokens.exchange(token, urlParams.aud ?? tokens.audiences[0]!)))
        .handle("configuration", () =>
          Effect.succeed(configuration))
        .handle("jwks", () => tokens.jwks)),
    HttpApiBuilder.group(Api, "health", (h) =>
      h
        .handle("live", () => Effect.succeed({ status: "ok" as const }))
        .handle("ready", () =>
          store.get({ name: "groups", columns: {}, unique: [], indexes: [] }, "0".repeat(40)).pipe(
            Effect.as({ status: "ready" as const }),
            Effect.mapError((cause) => new Errors.Internal({ cause, reason: "STORE_UNAVAILABLE" }))
          )))
  )
}))
