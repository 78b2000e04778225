/**
 * The handlers: each maps a request of the API contract onto an engine service. Authorization, validation and every
 * rule stay in the engine; the contract's wire schemas decode query parameters into list options and encode what the
 * engine returns. This module only turns pages into envelopes, and answers with each endpoint's success schema compiled
 * (`CompiledSchema`), as the framework would with the general encoder, which a 50-item page cost 160 µs.
 */
import { Api, CurrentPrincipal, UpstreamToken } from "@arbor/api/Api"
import type { Lists, Principal, ResourceService } from "@arbor/core"
import { Arbor, CompiledSchema, Errors, SignIn } from "@arbor/core"
import { HttpApiBuilder, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as EngineServices from "./EngineServices.js"

interface UidRequest {
  readonly path: { readonly uid: string }
}

/**
 * How an endpoint of `group` answers a value: with its JSON success schema compiled, as the framework would answer
 * it; or with the value itself, for the framework's general encoder, when the compiled encoder cannot decide.
 */
const answers = (group: string) => (endpoint: string): <A>(value: A) => A | HttpServerResponse.HttpServerResponse => {
  const schema: Schema.Schema.Any = Api.groups[group]!.endpoints[endpoint]!.successSchema
  const ast = schema.ast
  const encoding = HttpApiSchema.getEncoding(ast)
  const encode = ast._tag === "Union" || HttpApiSchema.isVoid(ast) || encoding.kind !== "Json"
    ? undefined
    : CompiledSchema.encoder(schema)
  if (encode === undefined) return (value) => value
  const status = HttpApiSchema.getStatusSuccessAST(ast)
  const contentType = encoding.contentType
  return (value) => {
    const body = encode(value)
    return body === CompiledSchema.failed ? value : HttpServerResponse.unsafeJson(body, { status, contentType })
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

/** The v2 handlers of a resource that lists and gets, whose API group is named by its plural. */
const readable = <const P extends string, A, O extends Lists.ListOptions>(
  plural: P,
  service: ResourceService.Readable<A, O>
) => {
  const answer = answers(plural)
  const [listed, got] = [answer("list"), answer("get")]
  const toEnvelope = envelope(plural)
  return {
    list: ({ urlParams }: { readonly urlParams: O }) =>
      asCaller((p) => service.list(p, urlParams)).pipe(Effect.map((page) => listed(toEnvelope(page)))),
    get: ({ path }: UidRequest) => asCaller((p) => service.get(p, path.uid)).pipe(Effect.map(got))
  }
}

/** The v2 handlers of a resource that is also created, updated and deleted. */
const writable = <const P extends string, A>(plural: P, service: ResourceService.Writable<A>) => {
  const answer = answers(plural)
  const [created, updated] = [answer("create"), answer("update")]
  return {
    ...readable(plural, service),
    create: ({ path, payload }: UidRequest & { readonly payload: unknown }) =>
      asCaller((p) => service.create(p, path.uid, payload)).pipe(Effect.map(created)),
    update: ({ path, payload, urlParams }: UidRequest & {
      readonly payload: unknown
      readonly urlParams: { readonly updateMask?: string | undefined }
    }) => asCaller((p) => service.update(p, path.uid, payload, urlParams.updateMask)).pipe(Effect.map(updated)),
    delete: ({ path }: UidRequest) => asCaller((p) => service.delete(p, path.uid))
  }
}

/** How many items a v1 list returns at most: it has no paging. */
const v1Limit = 10_000

/** The v1 handlers of a resource (API group `group`): every match in `items`, create, replace (PUT), delete. */
const v1 = <A>(group: string, service: ResourceService.Writable<A>) => {
  const answer = answers(group)
  const [listed, created, replaced] = [answer("list"), answer("create"), answer("replace")]
  return {
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
          return listed({ items })
        })
      ),
    create: ({ path, payload }: UidRequest & { readonly payload: unknown }) =>
      asCaller((p) => service.create(p, path.uid, payload)).pipe(Effect.map(created)),
    replace: ({ path, payload }: UidRequest & { readonly payload: unknown }) =>
      asCaller((p) => service.update(p, path.uid, payload, "*")).pipe(Effect.map(replaced)),
    delete: ({ path }: UidRequest) => asCaller((p) => service.delete(p, path.uid))
  }
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

  const group = writable("groups", groups)
  const identity = writable("identities", identities)
  const role = writable("roles", roles)
  const binding = writable("roleBindings", bindings)
  const provider = writable("identityProviders", providers)
  const association = writable("accountAssociations", associations)
  const invite = writable("groupInvites", invites)
  const repo = readable("repos", repos)
  const tag = readable("tags", tags)
  const advisory = readable("advisories", advisories)
  const groupV1 = v1("groupsV1", groups)
  const identityV1 = v1("identitiesV1", identities)
  const roleV1 = v1("rolesV1", roles)
  const bindingV1 = v1("roleBindingsV1", bindings)
  const repoV1 = v1("reposV1", repos)
  const tagV1 = v1("tagsV1", tags)

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
          Effect.flatMap(UpstreamToken, (token) => refreshTokens.exchange(token, urlParams.aud)))
        .handle("configuration", () =>
          Effect.succeed(SignIn.openIdConfiguration(tokens.issuer)))
        .handle("jwks", () => tokens.jwks)),
    HttpApiBuilder.group(Api, "health", (h) =>
      h
        .handle("live", () => Effect.succeed({ status: "ok" as const }))
        .handle("ready", () => Effect.as(Arbor.ready(store), { status: "ready" as const })))
  )
}))
