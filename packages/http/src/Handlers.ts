/**
 * The handlers: each maps the wire onto an engine service and back. Authorization, validation and every rule
 * stay in the engine; this module only converts parameters, bodies and results.
 */
import type { Lists } from "@arbor/core"
import {
  AccountAssociations,
  Advisories,
  Errors,
  GroupInvites,
  Groups,
  Identities,
  IdentityProviders,
  Repos,
  RoleBindings,
  Roles,
  Store,
  Sts,
  Tags,
  TokenIssuer
} from "@arbor/core"
import { HttpApiBuilder } from "@effect/platform"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Api, CurrentPrincipal, UpstreamToken } from "./Api.js"
import * as Wire from "./Wire.js"

type Params = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const first = (params: Params, ...keys: ReadonlyArray<string>): string | undefined => {
  for (const key of keys) {
    const v = params[key]
    if (v !== undefined) return typeof v === "string" ? v : v[0]
  }
  return undefined
}

const all = (params: Params, ...keys: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  for (const key of keys) {
    const v = params[key]
    if (v !== undefined) return typeof v === "string" ? [v] : v
  }
  return undefined
}

/** A count in decimal digits only (no sign, spaces, exponent or hex); anything else is NaN, refused by the engine. */
const number = (s: string | undefined) => s === undefined ? undefined : /^[0-9]{1,15}$/.test(s) ? Number(s) : Number.NaN

const boolean = (field: string, s: string | undefined): Effect.Effect<boolean | undefined, Errors.InvalidArgument> =>
  s === undefined
    ? Effect.succeed(undefined)
    : s === "true" || s === "1"
    ? Effect.succeed(true)
    : s === "false" || s === "0"
    ? Effect.succeed(false)
    : Effect.fail(Errors.InvalidArgument.field(field, "must be true or false"))

/** The engine's list options from v2 query parameters, snake_case or camelCase. */
export const listOptions = (params: Params) =>
  Effect.map(boolean("uidp.in_root", first(params, "uidp.in_root", "uidp.inRoot")), (inRoot): Lists.ListOptions => ({
    descendantsOf: first(params, "uidp.descendants_of", "uidp.descendantsOf"),
    childrenOf: first(params, "uidp.children_of", "uidp.childrenOf"),
    ancestorsOf: first(params, "uidp.ancestors_of", "uidp.ancestorsOf"),
    inRoot,
    ids: all(params, "uidp.ids", "id"),
    name: first(params, "name"),
    pageSize: number(first(params, "page_size", "pageSize")),
    pageToken: first(params, "page_token", "pageToken"),
    orderBy: first(params, "order_by", "orderBy"),
    skip: number(first(params, "skip"))
  }))

const tagOptions = (params: Params) =>
  Effect.map(listOptions(params), (o): Tags.TagListOptions => ({
    ...o,
    digest: first(params, "digest"),
    updatedSince: first(params, "updated_since", "updatedSince")
  }))

const advisoryOptions = (params: Params) =>
  Effect.map(listOptions(params), (o): Advisories.AdvisoryListOptions => ({
    ...o,
    advisoryIds: all(params, "advisory_ids", "advisoryIds"),
    packageNames: all(params, "package_names", "packageNames"),
    aliases: all(params, "aliases"),
    eventTypes: all(params, "event_types", "eventTypes"),
    latestEventType: first(params, "latest_event_type", "latestEventType"),
    query: first(params, "query")
  }))

/** The v2 list envelope of a page. */
const envelope = <A>(plural: string, page: Lists.Page<A>, wire: Wire.Resource<A>) => ({
  [plural]: page.items.map((item) => wire.encode(item, "v2")),
  ...(page.nextPageToken === undefined ? {} : { nextPageToken: page.nextPageToken }),
  totalCount: String(page.totalCount),
  skipped: page.skipped
})

type E = Errors.ArborError

/** What a resource's service offers the HTTP surface. */
interface Service<A, O extends Lists.ListOptions = Lists.ListOptions> {
  readonly list: (principal: any, options: O) => Effect.Effect<Lists.Page<A>, E>
  readonly get: (principal: any, uid: string) => Effect.Effect<A, E>
  readonly create?: (principal: any, parent: string, input: any) => Effect.Effect<A, E>
  readonly update?: (principal: any, uid: string, patch: any, mask?: string) => Effect.Effect<A, E>
  readonly delete?: (principal: any, uid: string) => Effect.Effect<void, E>
}

const withPrincipal = <A, Err>(f: (principal: any) => Effect.Effect<A, Err>) => Effect.flatMap(CurrentPrincipal, f)

/** The v2 handlers of a resource. */
const v2 = <A, O extends Lists.ListOptions>(
  name: string,
  plural: string,
  wire: Wire.Resource<A>,
  service: Service<A, O>,
  options: (params: Params) => Effect.Effect<O, Errors.InvalidArgument>,
  extra: (handlers: any) => any = (h) => h
) =>
  HttpApiBuilder.group(Api, name as any, (handlers: any) => {
    let h = handlers
      .handle("list", ({ urlParams }: any) =>
        withPrincipal((p) =>
          Effect.flatMap(options(urlParams), (o) =>
            service.list(p, o)).pipe(
              Effect.map((page) => envelope(plural, page, wire))
            )
        ))
      .handle("get", ({ path }: any) =>
        withPrincipal((p) =>
          Effect.map(service.get(p, path["*"]), (a) =>
            wire.encode(a, "v2"))
        ))
    if (service.create !== undefined) {
      h = h
        .handle("create", ({ path, payload }: any) =>
          withPrincipal((p) =>
            Effect.map(service.create!(p, path["*"], payload), (a) =>
              wire.encode(a, "v2"))
          ))
        .handle("update", ({ path, payload, urlParams }: any) =>
          withPrincipal((p) =>
            Effect.map(
              service.update!(p, path["*"], payload, urlParams.updateMask ?? urlParams.update_mask),
              (a) => wire.encode(a, "v2")
            )
          ))
        .handle("delete", ({ path }: any) => withPrincipal((p) => service.delete!(p, path["*"])))
    }
    return extra(h)
  }) as unknown as Layer.Layer<any>

/** How many items a v1 list returns at most: it has no paging. */
export const v1Limit = 10_000

/** The v1 handlers of a resource: every match in `items`, create, replace (PUT), delete. */
const v1 = <A>(
  name: string,
  wire: Wire.Resource<A>,
  service: Service<A> & { readonly create: NonNullable<Service<A>["create"]> },
  replace: (principal: any, uid: string, body: any) => Effect.Effect<A, E>
) =>
  HttpApiBuilder.group(Api, name as any, (handlers: any) =>
    handlers
      .handle("list", ({ urlParams }: any) =>
        withPrincipal((p) =>
          Effect.gen(function*() {
            const base = yield* listOptions(urlParams)
            const items: Array<Record<string, unknown>> = []
            let pageToken: string | undefined
            do {
              const page = yield* service.list(p, { ...base, pageSize: 200, pageToken })
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
              items.push(...page.items.map((item) => wire.encode(item, "v1")))
              pageToken = page.nextPageToken
            } while (pageToken !== undefined)
            return { items }
          })
        ))
      .handle("create", ({ path, payload }: any) =>
        withPrincipal((p) => Effect.map(service.create(p, path["*"], payload), (a) => wire.encode(a, "v1"))))
      .handle("replace", ({ path, payload }: any) =>
        withPrincipal((p) =>
          Effect.map(replace(p, path["*"], payload), (a) =>
            wire.encode(a, "v1"))
        ))
      .handle("delete", ({ path }: any) =>
        withPrincipal((p) =>
          service.delete!(p, path["*"])
        ))) as unknown as Layer.Layer<any>

const replaceAll = <A>(service: Service<A>) => (principal: any, uid: string, body: any) =>
  service.update!(principal, uid, body, "*")

/** Every handler, over the engine's services. */
export const layer = Layer.unwrapEffect(Effect.gen(function*() {
  const groups = yield* Groups.Groups
  const identities = yield* Identities.Identities
  const roles = yield* Roles.Roles
  const bindings = yield* RoleBindings.RoleBindings
  const providers = yield* IdentityProviders.IdentityProviders
  const associations = yield* AccountAssociations.AccountAssociations
  const invites = yield* GroupInvites.GroupInvites
  const repos = yield* Repos.Repos
  const tags = yield* Tags.Tags
  const advisories = yield* Advisories.Advisories
  const store = yield* Store.Store
  const sts = yield* Sts.Sts
  const tokens = yield* TokenIssuer.TokenIssuer

  const exchange = (
    { urlParams }: { readonly urlParams: { readonly aud?: string | undefined; readonly identity?: string | undefined } }
  ) =>
    Effect.flatMap(UpstreamToken, (token) =>
      Effect.map(
        sts.exchange({ token, audience: urlParams.aud, identity: urlParams.identity }),
        (exchanged) => ({ token: exchanged.token, expiry: DateTime.formatIso(exchanged.expiry) })
      ))
  const configuration = {
    issuer: tokens.issuer,
    jwks_uri: `${tokens.issuer}/.well-known/jwks.json`,
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["ES256"],
    claims_supported: ["iss", "sub", "aud", "iat", "exp", "jti", "act"]
  }

  const registry = <A>(service: { readonly upsert: Service<A>["create"] } & Service<A>) => ({
    ...service,
    create: service.upsert!
  })

  return Layer.mergeAll(
    v2(
      "groups",
      "groups",
      Wire.Group,
      groups,
      listOptions,
      (h) =>
        h.handle(
          "createRoot",
          ({ payload }: any) =>
            withPrincipal((p) => Effect.map(groups.createRoot(p, payload), (g) => Wire.Group.encode(g, "v2")))
        )
    ),
    v2("identities", "identities", Wire.Identity, identities, listOptions),
    v2("roles", "roles", Wire.Role, roles, listOptions),
    v2("roleBindings", "roleBindings", Wire.RoleBinding, bindings, listOptions),
    v2("identityProviders", "identityProviders", Wire.IdentityProvider, providers, listOptions),
    v2("accountAssociations", "accountAssociations", Wire.AccountAssociation, associations, listOptions),
    v2(
      "groupInvites",
      "groupInvites",
      Wire.GroupInvite,
      invites,
      listOptions,
      (h) =>
        h.handle(
          "redeem",
          ({ payload }: any) =>
            withPrincipal((p) =>
              Effect.map(invites.redeemOwn(p, payload), (binding) => Wire.RoleBinding.encode(binding, "v2"))
            )
        )
    ),
    v2("repos", "repos", Wire.Repo, { list: repos.list, get: repos.get }, listOptions),
    v2("tags", "tags", Wire.Tag, { list: tags.list, get: tags.get }, tagOptions),
    v2("advisories", "advisories", Wire.Advisory, { list: advisories.list, get: advisories.get }, advisoryOptions),
    v1("groupsV1", Wire.Group, groups, replaceAll(groups)),
    v1("identitiesV1", Wire.Identity, identities, replaceAll(identities)),
    v1("rolesV1", Wire.Role, roles, replaceAll(roles)),
    v1("roleBindingsV1", Wire.RoleBinding, bindings, replaceAll(bindings)),
    v1("reposV1", Wire.Repo, registry(repos), replaceAll(repos)),
    v1("tagsV1", Wire.Tag, registry(tags), replaceAll(tags)),
    HttpApiBuilder.group(Api, "sts", (h) =>
      h
        .handle("exchange", exchange)
        .handle("exchangePost", exchange)
        .handle("configuration", () => Effect.succeed(configuration))
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
