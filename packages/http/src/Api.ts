/**
 * The HTTP API: every v2beta1 resource (docs/api.md §3), the v1 compatibility surface (docs/api.md §9), health, and
 * the token exchange with its discovery documents. Uids travel unescaped in paths (`/groups/<a>/<b>`), as the
 * trailing wildcard of each route.
 */
import type { Principal } from "@arbor/core"
import {
  AccountAssociation,
  Errors,
  Group,
  GroupInvite,
  Identity,
  IdentityProvider,
  Repo,
  Role,
  RoleBinding,
  Tag
} from "@arbor/core"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import type { HttpMethod } from "@effect/platform/HttpMethod"
import * as Context from "effect/Context"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { ErrorBody, render } from "./ErrorBody.js"
import * as Wire from "./Wire.js"

/** The caller of a request, established by the bearer middleware. */
export class CurrentPrincipal
  extends Context.Tag("@arbor/http/CurrentPrincipal")<CurrentPrincipal, Principal.Principal>()
{}

/**
 * A declared error: its type is the engine's error, its encoded form the wire body. Every failure is rendered by
 * the server's error middleware; the declaration documents the status and lets handlers fail with engine errors.
 */
const declared = <A extends Errors.ArborError>(
  error: Schema.Schema<A, any> & { readonly identifier?: string },
  status: number,
  description: string
) =>
  Schema.transformOrFail(ErrorBody, Schema.typeSchema(error), {
    strict: true,
    decode: (body, _, ast) => ParseResult.fail(new ParseResult.Type(ast, body, "errors are not decoded")),
    encode: (e) => ParseResult.succeed(render(e, "iam.arbor.dev").body)
  }).annotations({ ...HttpApiSchema.annotations({ status }), description })

/** The bearer-token middleware: provides the caller, or fails with 401. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@arbor/http/Authentication", {
  failure: declared(Errors.Unauthenticated, 401, "missing, malformed, expired or otherwise invalid bearer token"),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The raw bearer of a token exchange: the workload's own OIDC token, verified by the engine. */
export class UpstreamToken extends Context.Tag("@arbor/http/UpstreamToken")<UpstreamToken, string>() {}

/** Hands the exchange its bearer; a missing one is 401. */
export class UpstreamBearer extends HttpApiMiddleware.Tag<UpstreamBearer>()("@arbor/http/UpstreamBearer", {
  failure: declared(Errors.Unauthenticated, 401, "missing or malformed bearer token"),
  provides: UpstreamToken,
  security: {
    upstreamToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "the workload's own OIDC token (GitHub Actions, GitLab CI, Kubernetes, …)"
      )
    )
  }
}) {}

const UidPath = Schema.Struct({
  "*": Schema.String.annotations({ description: "a uid; its slashes travel unescaped (%2F works too)" })
})

const text = Schema.optional(Schema.String)
const repeated = Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))

/** The list parameters every v2 list takes, snake_case with camelCase aliases. */
export const listParams = {
  "uidp.descendants_of": text,
  "uidp.descendantsOf": text,
  "uidp.children_of": text,
  "uidp.childrenOf": text,
  "uidp.ancestors_of": text,
  "uidp.ancestorsOf": text,
  "uidp.in_root": text,
  "uidp.inRoot": text,
  "uidp.ids": repeated,
  name: text,
  page_size: text,
  pageSize: text,
  page_token: text,
  pageToken: text,
  order_by: text,
  orderBy: text,
  skip: text
}

/** The parameters a v1 list takes. */
export const v1ListParams = {
  id: repeated,
  "uidp.descendants_of": text,
  "uidp.children_of": text,
  "uidp.ancestors_of": text,
  "uidp.in_root": text,
  name: text
}

export const tagParams = { digest: text, updated_since: text, updatedSince: text }

export const advisoryParams = {
  advisory_ids: repeated,
  advisoryIds: repeated,
  package_names: repeated,
  packageNames: repeated,
  aliases: repeated,
  event_types: repeated,
  eventTypes: repeated,
  latest_event_type: text,
  latestEventType: text,
  query: text
}

const MaskParams = Schema.Struct({ updateMask: text, update_mask: text })

const Deleted = HttpApiSchema.Empty(200)

/** List and get, for every resource. */
const readable = <Name extends string>(
  name: Name,
  plural: string,
  wire: Schema.Schema<any, any>,
  params: Schema.Struct.Fields = {}
) =>
  HttpApiGroup.make(name)
    .add(
      HttpApiEndpoint.get("list", `/${plural}`)
        .setUrlParams(Schema.Struct({ ...listParams, ...params }))
        .addSuccess(Wire.listEnvelope(plural, wire))
        .annotate(OpenApi.Summary, `List ${plural}`)
    )
    .add(
      HttpApiEndpoint.get("get", `/${plural}/*`).setPath(UidPath).addSuccess(wire).annotate(
        OpenApi.Summary,
        `Get one of ${plural}`
      )
    )

/** List, get, create (in the group of the path), update and delete. */
const writable = <Name extends string>(
  name: Name,
  plural: string,
  wire: Schema.Schema<any, any>,
  create: Schema.Schema<any, any>
) =>
  readable(name, plural, wire)
    .add(
      HttpApiEndpoint.post("create", `/${plural}/*`)
        .setPath(UidPath)
        .setPayload(create)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Create in ${plural} below a group`)
    )
    .add(
      HttpApiEndpoint.patch("update", `/${plural}/*`)
        .setPath(UidPath)
        .setUrlParams(MaskParams)
        .setPayload(create)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Update one of ${plural}`)
    )
    .add(
      HttpApiEndpoint.del("delete", `/${plural}/*`).setPath(UidPath).addSuccess(Deleted).annotate(
        OpenApi.Summary,
        `Delete one of ${plural}`
      )
    )

/** The v1 surface of a resource: list with every match, create, replace (PUT), delete. */
const v1 = <Name extends string>(
  name: Name,
  plural: string,
  wire: Schema.Schema<any, any>,
  create: Schema.Schema<any, any>
) =>
  HttpApiGroup.make(name)
    .add(
      HttpApiEndpoint.get("list", `/${plural}`)
        .setUrlParams(Schema.Struct(v1ListParams))
        .addSuccess(Wire.itemsEnvelope(wire))
        .annotate(OpenApi.Summary, `List every one of ${plural} (v1)`)
    )
    .add(
      HttpApiEndpoint.post("create", `/${plural}/*`)
        .setPath(UidPath)
        .setPayload(create)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Create in ${plural} (v1)`)
    )
    .add(
      HttpApiEndpoint.put("replace", `/${plural}/*`)
        .setPath(UidPath)
        .setPayload(create)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Replace one of ${plural} (v1)`)
    )
    .add(
      HttpApiEndpoint.del("delete", `/${plural}/*`).setPath(UidPath).addSuccess(Deleted).annotate(
        OpenApi.Summary,
        `Delete one of ${plural} (v1)`
      )
    )
    .annotateEndpoints(OpenApi.Deprecated, true)

/**
 * A request body: decoded by the engine, after its permission check (docs/api.md §7: permission before validation),
 * so here it is any JSON; the OpenAPI document shows the shape the engine expects.
 */
const input = <A, I>(schema: Schema.Schema<A, I>, identifier: string) => {
  const { $schema: _, ...shape } = JSONSchema.make(Schema.encodedSchema(schema)) as unknown as Record<string, unknown>
  return Schema.Unknown.annotations({ identifier, jsonSchema: shape })
}

const CreateGroup = input(Group.CreateGroup, "CreateGroup")
const CreateIdentity = input(Identity.CreateIdentity, "CreateIdentity")
const CreateRole = input(Role.CreateRole, "CreateRole")
const CreateRoleBinding = input(RoleBinding.CreateRoleBinding, "CreateRoleBinding")
const CreateIdentityProvider = input(IdentityProvider.CreateIdentityProvider, "CreateIdentityProvider")
const CreateAccountAssociation = input(AccountAssociation.CreateAccountAssociation, "CreateAccountAssociation")
const CreateGroupInvite = input(GroupInvite.CreateGroupInvite, "CreateGroupInvite")
const RedeemGroupInvite = input(GroupInvite.RedeemGroupInvite, "RedeemGroupInvite")
const CreateRepo = input(Repo.CreateRepo, "CreateRepo")
const CreateTag = input(Tag.CreateTag, "CreateTag")

const iam = "/iam/v2beta1"

/** A group of the API: described, authenticated, under its prefix. */
const api = <G extends HttpApiGroup.HttpApiGroup.Any>(group: G, prefix: `/${string}`, description: string) =>
  (group as any).annotate(OpenApi.Description, description).middleware(Authentication).prefix(prefix) as G

export const Groups = api(
  writable("groups", "groups", Wire.Group.v2, CreateGroup).add(
    HttpApiEndpoint.post("createRoot", "/groups")
      .setPayload(CreateGroup)
      .addSuccess(Wire.Group.v2)
      .annotate(OpenApi.Summary, "Create an organization (platform admins)")
  ),
  iam,
  "Groups: the organization hierarchy. A root group is an organization."
)
export const Identities = api(
  writable("identities", "identities", Wire.Identity.v2, CreateIdentity),
  iam,
  "Identities: workloads and users, assumed through matching token claims."
)
export const Roles = api(
  writable("roles", "roles", Wire.Role.v2, CreateRole),
  iam,
  "Roles: named sets of capabilities; built-in roles are readable by every caller."
)
export const RoleBindings = api(
  writable("roleBindings", "roleBindings", Wire.RoleBinding.v2, CreateRoleBinding),
  iam,
  "Role bindings: an identity holding a role in a group and everything below it."
)
export const IdentityProviders = api(
  writable("identityProviders", "identityProviders", Wire.IdentityProvider.v2, CreateIdentityProvider),
  iam,
  "Identity providers: upstream OIDC providers for a group's users."
)
export const AccountAssociations = api(
  writable("accountAssociations", "accountAssociations", Wire.AccountAssociation.v2, CreateAccountAssociation),
  iam,
  "Account associations: the cloud accounts a group trusts, one per group."
)
export const GroupInvites = api(
  writable("groupInvites", "groupInvites", Wire.GroupInvite.v2, CreateGroupInvite).add(
    // `::` is a literal `:` to the router: the path is `/groupInvites:redeem` (AIP-136 custom method).
    HttpApiEndpoint.post("redeem", "/groupInvites::redeem")
      .setPayload(RedeemGroupInvite)
      .addSuccess(Wire.RoleBinding.v2)
      .annotate(OpenApi.Summary, "Redeem an invite code: bind the calling identity to the invite's role")
  ),
  iam,
  "Group invites: codes that bind their redeemer to a role in a group."
)
export const Repos = api(
  readable("repos", "repos", Wire.Repo.v2),
  "/registry/v2beta1",
  "Registry repositories: read-only here, written through v1."
)
export const Tags = api(
  readable("tags", "tags", Wire.Tag.v2, tagParams),
  "/registry/v2beta1",
  "Registry tags: read-only here, written through v1."
)
export const Advisories = api(
  readable("advisories", "advisories", Wire.Advisory.v2, advisoryParams),
  "/vulnerabilities/v2beta1",
  "Vulnerability advisories: read-only, loaded by the import command."
)

const v1Description = "v1 compatibility surface: deprecated, use v2beta1."
export const GroupsV1 = api(v1("groupsV1", "groups", Wire.Group.v1, CreateGroup), "/iam/v1", v1Description)
export const IdentitiesV1 = api(
  v1("identitiesV1", "identities", Wire.Identity.v1, CreateIdentity),
  "/iam/v1",
  v1Description
)
export const RolesV1 = api(v1("rolesV1", "roles", Wire.Role.v1, CreateRole), "/iam/v1", v1Description)
export const RoleBindingsV1 = api(
  v1("roleBindingsV1", "rolebindings", Wire.RoleBinding.v1, CreateRoleBinding),
  "/iam/v1",
  v1Description
)
export const ReposV1 = api(v1("reposV1", "repos", Wire.Repo.v1, CreateRepo), "/registry/v1", v1Description)
export const TagsV1 = api(v1("tagsV1", "tags", Wire.Tag.v1, CreateTag), "/registry/v1", v1Description)

/** Liveness and readiness, without authentication. */
export const Health = HttpApiGroup.make("health")
  .annotate(OpenApi.Description, "Liveness and readiness probes, without authentication.")
  .add(
    HttpApiEndpoint.get("live", "/healthz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ok") }))
      .annotate(OpenApi.Summary, "Liveness")
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready") }))
      .annotate(OpenApi.Summary, "Readiness: the store answers")
  )

const ExchangeParams = Schema.Struct({
  aud: Schema.optional(Schema.String).annotations({
    description: "the audience of the API token: the API's base URL or another configured audience"
  }),
  identity: Schema.optional(Schema.String).annotations({ description: "the uid of the identity to assume" })
})

const Exchanged = Schema.Struct({
  token: Schema.String.annotations({ description: "the API token, valid for one hour" }),
  expiry: Schema.String.annotations({ description: "when the API token expires (RFC 3339)" })
}).annotations({ identifier: "ExchangedToken" })

const exchange = <Name extends string, Method extends HttpMethod>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method>
) =>
  endpoint.setUrlParams(ExchangeParams).addSuccess(Exchanged).annotate(
    OpenApi.Description,
    "Exchanges the workload's own OIDC token (the bearer) for an API token of an identity whose claim match it " +
      "satisfies. Every failure to verify or match is one 403, whether or not the identity exists."
  )

/** The token exchange and the documents that let others verify its tokens. */
export const TokenService = HttpApiGroup.make("sts")
  .annotate(OpenApi.Description, "The token exchange (STS), and this issuer's OpenID configuration and keys.")
  .add(exchange(HttpApiEndpoint.get("exchange", "/sts/exchange")).annotate(OpenApi.Summary, "Exchange a token"))
  .add(
    exchange(HttpApiEndpoint.post("exchangePost", "/sts/exchange")).annotate(
      OpenApi.Summary,
      "Exchange a token (POST)"
    )
  )
  .middlewareEndpoints(UpstreamBearer)
  .add(
    HttpApiEndpoint.get("configuration", "/.well-known/openid-configuration")
      .addSuccess(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
      .annotate(OpenApi.Summary, "OpenID configuration of this token issuer")
  )
  .add(
    HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
      .addSuccess(Schema.Struct({ keys: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })) }))
      .annotate(OpenApi.Summary, "The public keys that verify this issuer's tokens")
  )

/**
 * What the generated document says, made true: uids are `{uid}` path parameters (the router's wildcard), and
 * every error body is a google.rpc.Status (the framework's own decode-error body never reaches a client).
 */
const truthful = (spec: Record<string, any>): Record<string, any> => {
  const paths: Record<string, any> = {}
  for (const [path, item] of Object.entries(spec.paths as Record<string, any>)) {
    for (const operation of Object.values(item as Record<string, any>)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.name === "*") parameter.name = "uid"
      }
      const bad = operation.responses?.["400"]?.content?.["application/json"]?.schema
      if (bad?.anyOf !== undefined) {
        const kept = bad.anyOf.filter((s: { $ref?: string }) => s.$ref !== "#/components/schemas/HttpApiDecodeError")
        operation.responses["400"].content["application/json"].schema = kept.length === 1 ? kept[0] : { anyOf: kept }
        operation.responses["400"].description = "invalid argument (code 3) or failed precondition (code 9)"
      }
    }
    // `/groupInvites::redeem` (a literal colon to the router) reaches here as `/groupInvites:{redeem}`.
    paths[path.replace(/\/\*$/, "/{uid}").replace(/:\{(\w+)\}$/, ":$1")] = item
  }
  const { HttpApiDecodeError: _d, Issue: _i, PropertyKey: _p, ...schemas } = spec.components?.schemas ?? {}
  return withoutIds({ ...spec, paths, components: { ...spec.components, schemas } }) as Record<string, any>
}

/** Drops the `$id`s the schema generator gives `unknown` (the same id many times over). */
const withoutIds = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutIds)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== "$id").map(([k, v]) => [k, withoutIds(v)]))
}

/** Every path of the API, with the errors any endpoint may answer. */
export const Api = HttpApi.make("arbor")
  .add(Groups)
  .add(Identities)
  .add(Roles)
  .add(RoleBindings)
  .add(IdentityProviders)
  .add(AccountAssociations)
  .add(GroupInvites)
  .add(Repos)
  .add(Tags)
  .add(Advisories)
  .add(GroupsV1)
  .add(IdentitiesV1)
  .add(RolesV1)
  .add(RoleBindingsV1)
  .add(ReposV1)
  .add(TagsV1)
  .add(TokenService)
  .add(Health)
  .addError(declared(Errors.InvalidArgument, 400, "invalid argument (code 3), or failed precondition (code 9)"))
  .addError(declared(Errors.FailedPrecondition, 400, "failed precondition (code 9)"))
  .addError(declared(Errors.PermissionDenied, 403, "permission denied (code 7), whether or not the resource exists"))
  .addError(declared(Errors.NotFound, 404, "not found (code 5)"))
  .addError(declared(Errors.AlreadyExists, 409, "already exists (code 6)"))
  .addError(declared(Errors.Aborted, 409, "aborted (code 10): retry"))
  .addError(declared(Errors.Internal, 500, "internal error (code 13)"))
  .annotate(OpenApi.Title, "Arbor management API")
  .annotate(OpenApi.Version, "2.0.0-beta.1")
  .annotate(
    OpenApi.Description,
    "Groups, identities, roles, role bindings, identity providers, account associations and group invites; " +
      "registry repos and tags; vulnerability advisories. Errors are google.rpc.Status bodies."
  )
  .annotate(OpenApi.Servers, [{ url: "/", description: "this server" }])
  .annotate(OpenApi.License, { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" })
  .annotate(OpenApi.Transform, (spec) => truthful(spec as unknown as Record<string, any>) as any)
