/**
 * The HTTP API: every v2beta1 resource (docs/api.md §3), the v1 compatibility surface (docs/api.md §9), health, and
 * the token exchange with its discovery documents. The server implements it and `HttpApiClient.make(Api)` calls it,
 * with the engine's resource classes as results and the engine's errors as failures.
 */
import * as AccountAssociation from "@arbor/core/AccountAssociation"
import * as Advisory from "@arbor/core/Advisory"
import type * as Capability from "@arbor/core/Capability"
import * as Errors from "@arbor/core/Errors"
import * as Group from "@arbor/core/Group"
import * as GroupInvite from "@arbor/core/GroupInvite"
import * as Identity from "@arbor/core/Identity"
import * as IdentityProvider from "@arbor/core/IdentityProvider"
import type { Principal } from "@arbor/core/Principal"
import * as Repo from "@arbor/core/Repo"
import * as Role from "@arbor/core/Role"
import * as RoleBinding from "@arbor/core/RoleBinding"
import * as Tag from "@arbor/core/Tag"
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import type { OpenApiJsonSchema } from "@effect/platform"
import * as Context from "effect/Context"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as ErrorBody from "./ErrorBody.js"
import * as ListQuery from "./ListQuery.js"
import * as Wire from "./Wire.js"

/** The caller of a request, established by the bearer middleware. */
export class CurrentPrincipal extends Context.Tag("@arbor/api/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** A declared error: the engine's error, under the status of its code. */
const declared = <A extends Errors.ArborError, I>(error: Schema.Schema<A, I>, status: number, description: string) =>
  ErrorBody.schema(error).annotations({ ...HttpApiSchema.annotations({ status }), description })

/** The bearer-token middleware: provides the caller, or fails with 401. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@arbor/api/Authentication", {
  failure: declared(Errors.Unauthenticated, 401, "missing, malformed, expired or otherwise invalid bearer token"),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The raw bearer of a token exchange: the workload's own OIDC token, verified by the engine. */
export class UpstreamToken extends Context.Tag("@arbor/api/UpstreamToken")<UpstreamToken, string>() {}

/** Hands the exchange its bearer; a missing one is 401. */
export class UpstreamBearer extends HttpApiMiddleware.Tag<UpstreamBearer>()("@arbor/api/UpstreamBearer", {
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

/**
 * A uid in a path. Its slashes travel unescaped (`/groups/<a>/<b>`: the server folds the rest of the path into the
 * uid) or as `%2F`; a client escapes everything else in it.
 */
const UidParam = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: (uid) => uid,
  encode: (uid) => uid.split("/").map(encodeURIComponent).join("/")
}).annotations({ description: "a uid; its slashes travel unescaped (%2F works too)" })

const UidPath = Schema.Struct({ uid: UidParam })

const MaskParams = Schema.Struct({
  updateMask: Schema.optional(Schema.String.annotations({
    description: "the fields to change, comma-separated (`*`: every mutable field); without it, those in the body"
  }))
})

const Deleted = HttpApiSchema.Empty(200)

/** A request body: the shape a create takes, and an update's (any of its fields). */
export interface Body<I> {
  readonly create: Schema.Schema<I>
  readonly update: Schema.Schema<Partial<I>>
}

/** The JSON Schema of what a schema decodes from. */
const jsonShape = <A, I>(schema: Schema.Schema<A, I>) => {
  const { $schema: _, ...shape } = JSONSchema.make(Schema.encodedSchema(schema))
  return shape
}

/**
 * A request body schema. The engine decodes the body, after its permission check (docs/api.md §7: permission
 * before validation), and reports every bad field; so here any JSON passes unchanged. Callers are typed by the
 * shape the engine expects, which `jsonSchema` shows in the OpenAPI document.
 */
const unchecked = <T>(identifier: string, jsonSchema: object): Schema.Schema<T> =>
  Schema.declare((_: unknown): _ is T => true, { identifier, jsonSchema })

/** The bodies of a resource's create and update, from the engine's schema of a create. */
const body = <A, I>(schema: Schema.Schema<A, I>, name: string): Body<I> => {
  const shape = jsonShape(schema)
  const { required: _, ...optional } = shape as typeof shape & { readonly required?: unknown }
  return { create: unchecked(`Create${name}`, shape), update: unchecked(`Update${name}`, optional) }
}

/** What the endpoints of a resource say of it: its names in prose, and the capability each operation needs. */
interface About {
  readonly one: string
  readonly many: string
  readonly permissions: Capability.Operations
}

const about = (one: string, many: string, permissions: Capability.Operations): About => ({ one, many, permissions })

/** A noun with its article: `a group`, `an identity`. */
const a = (noun: string) => `${/^[aeiou]/.test(noun) ? "an" : "a"} ${noun}`

/** Where a capability is needed, said once for every endpoint. */
const needs = (capability: string | undefined, where = "on its group or a group above it") =>
  capability === undefined ? "" : `Needs \`${capability}\` ${where}.`

/** The list of a resource, one page at a time. */
const list = <const Plural extends string, A, I>(plural: Plural, wire: Schema.Schema<A, I>, about: About) =>
  HttpApiEndpoint.get("list", `/${plural}`)
    .addSuccess(Wire.listEnvelope(plural, wire))
    .annotate(OpenApi.Summary, `List ${about.many}`)
    .annotate(
      OpenApi.Description,
      `One page of the ${about.many} the caller may see: those on whose group (or a group above it) it holds ` +
        `\`${about.permissions.list}\`. totalCount counts only those.`
    )

/** One resource by uid. */
const get = <const Plural extends string, A, I>(plural: Plural, wire: Schema.Schema<A, I>, about: About) =>
  HttpApiEndpoint.get("get", `/${plural}/:uid`)
    .setPath(UidPath)
    .addSuccess(wire)
    .annotate(OpenApi.Summary, `Get ${a(about.one)}`)
    .annotate(
      OpenApi.Description,
      `${needs(about.permissions.list)} Without it the answer is PERMISSION_DENIED, whether or not it exists.`
    )

/** List and get, for every resource. */
const readable = <const Name extends string, const Plural extends string, A, I>(
  name: Name,
  plural: Plural,
  wire: Schema.Schema<A, I>,
  about: About
) =>
  HttpApiGroup.make(name).add(list(plural, wire, about).setUrlParams(ListQuery.ListQuery)).add(get(plural, wire, about))

/** List, get, create (in the group of the path), update and delete. */
const writable = <const Name extends string, const Plural extends string, A, I, C>(
  name: Name,
  plural: Plural,
  wire: Schema.Schema<A, I>,
  body: Body<C>,
  about: About
) =>
  readable(name, plural, wire, about)
    .add(
      HttpApiEndpoint.post("create", `/${plural}/:uid`)
        .setPath(UidPath)
        .setPayload(body.create)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Create ${a(about.one)}`)
        .annotate(
          OpenApi.Description,
          `Creates ${a(about.one)} in the group the path names. ` +
            needs(about.permissions.create, "on that group or a group above it")
        )
    )
    .add(
      HttpApiEndpoint.patch("update", `/${plural}/:uid`)
        .setPath(UidPath)
        .setUrlParams(MaskParams)
        .setPayload(body.update)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Update ${a(about.one)}`)
        .annotate(
          OpenApi.Description,
          `Changes the fields present in the body, or those updateMask names. ${needs(about.permissions.update)}`
        )
    )
    .add(
      HttpApiEndpoint.del("delete", `/${plural}/:uid`)
        .setPath(UidPath)
        .addSuccess(Deleted)
        .annotate(OpenApi.Summary, `Delete ${a(about.one)}`)
        .annotate(OpenApi.Description, needs(about.permissions.delete))
    )

/** The v1 surface of a resource: list with every match, create, replace (PUT), delete. */
const v1 = <const Name extends string, const Plural extends string, A, I, C>(
  name: Name,
  plural: Plural,
  wire: Schema.Schema<A, I>,
  body: Body<C>,
  about: About
) =>
  HttpApiGroup.make(name)
    .add(
      HttpApiEndpoint.get("list", `/${plural}`)
        .setUrlParams(ListQuery.V1ListQuery)
        .addSuccess(Wire.itemsEnvelope(wire))
        .annotate(OpenApi.Summary, `List every one of the ${about.many} (v1)`)
        .annotate(OpenApi.Description, `Every one the caller may see, without paging. ${needs(about.permissions.list)}`)
    )
    .add(
      HttpApiEndpoint.post("create", `/${plural}/:uid`)
        .setPath(UidPath)
        .setPayload(body.create)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Create ${a(about.one)} (v1)`)
        .annotate(OpenApi.Description, needs(about.permissions.create, "on the group the path names or above it"))
    )
    .add(
      HttpApiEndpoint.put("replace", `/${plural}/:uid`)
        .setPath(UidPath)
        .setPayload(body.create)
        .addSuccess(wire)
        .annotate(OpenApi.Summary, `Replace ${a(about.one)} (v1)`)
        .annotate(OpenApi.Description, `Every field is set from the body. ${needs(about.permissions.update)}`)
    )
    .add(
      HttpApiEndpoint.del("delete", `/${plural}/:uid`)
        .setPath(UidPath)
        .addSuccess(Deleted)
        .annotate(OpenApi.Summary, `Delete ${a(about.one)} (v1)`)
        .annotate(OpenApi.Description, needs(about.permissions.delete))
    )
    .annotateEndpoints(OpenApi.Deprecated, true)

const aboutGroups = about("group", "groups", Group.permissions)
const aboutIdentities = about("identity", "identities", Identity.permissions)
const aboutRoles = about("role", "roles", Role.permissions)
const aboutRoleBindings = about("role binding", "role bindings", RoleBinding.permissions)
const aboutIdentityProviders = about("identity provider", "identity providers", IdentityProvider.permissions)
const aboutAccountAssociations = about("account association", "account associations", AccountAssociation.permissions)
const aboutGroupInvites = about("invite", "invites", GroupInvite.permissions)
const aboutRepos = about("repo", "repos", Repo.permissions)
const aboutTags = about("tag", "tags", Tag.permissions)
const aboutAdvisories = about("advisory", "advisories", Advisory.permissions)

const GroupBody = body(Group.CreateGroup, "Group")
const IdentityBody = body(Identity.CreateIdentity, "Identity")
const RoleBody = body(Role.CreateRole, "Role")
const RoleBindingBody = body(RoleBinding.CreateRoleBinding, "RoleBinding")
const IdentityProviderBody = body(IdentityProvider.CreateIdentityProvider, "IdentityProvider")
const AccountAssociationBody = body(AccountAssociation.CreateAccountAssociation, "AccountAssociation")
const GroupInviteBody = body(GroupInvite.CreateGroupInvite, "GroupInvite")
const RedeemBody = unchecked<GroupInvite.RedeemGroupInvite>(
  "RedeemGroupInvite",
  jsonShape(GroupInvite.RedeemGroupInvite)
)
const RepoBody = body(Repo.CreateRepo, "Repo")
const TagBody = body(Tag.CreateTag, "Tag")

/** A group of the API: described, authenticated, under its prefix. */
const authenticated = <
  Id extends string,
  Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any,
  E,
  R,
  const Prefix extends HttpApiEndpoint.PathSegment
>(group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>, prefix: Prefix, description: string) =>
  group.annotate(OpenApi.Description, description).middleware(Authentication).prefix(prefix)

const iam = "/iam/v2beta1"

export const Groups = authenticated(
  writable("groups", "groups", Wire.Group.v2, GroupBody, aboutGroups).add(
    HttpApiEndpoint.post("createRoot", "/groups")
      .setPayload(GroupBody.create)
      .addSuccess(Wire.Group.v2)
      .annotate(OpenApi.Summary, "Create an organization (platform admins)")
  ),
  iam,
  "Groups: the organization hierarchy. A root group is an organization."
)
export const Identities = authenticated(
  writable("identities", "identities", Wire.Identity.v2, IdentityBody, aboutIdentities),
  iam,
  "Identities: workloads and users, assumed through matching token claims."
)
export const Roles = authenticated(
  writable("roles", "roles", Wire.Role.v2, RoleBody, aboutRoles),
  iam,
  "Roles: named sets of capabilities; built-in roles are readable by every caller."
)
export const RoleBindings = authenticated(
  writable("roleBindings", "roleBindings", Wire.RoleBinding.v2, RoleBindingBody, aboutRoleBindings),
  iam,
  "Role bindings: an identity holding a role in a group and everything below it."
)
export const IdentityProviders = authenticated(
  writable(
    "identityProviders",
    "identityProviders",
    Wire.IdentityProvider.v2,
    IdentityProviderBody,
    aboutIdentityProviders
  ),
  iam,
  "Identity providers: upstream OIDC providers for a group's users."
)
export const AccountAssociations = authenticated(
  writable(
    "accountAssociations",
    "accountAssociations",
    Wire.AccountAssociation.v2,
    AccountAssociationBody,
    aboutAccountAssociations
  ),
  iam,
  "Account associations: the cloud accounts a group trusts, one per group."
)
export const GroupInvites = authenticated(
  writable("groupInvites", "groupInvites", Wire.GroupInvite.v2, GroupInviteBody, aboutGroupInvites).add(
    // `::` is a literal `:` to the router: the path is `/groupInvites:redeem` (AIP-136 custom method).
    HttpApiEndpoint.post("redeem", "/groupInvites::redeem")
      .setPayload(RedeemBody)
      .addSuccess(Wire.RoleBinding.v2)
      .annotate(OpenApi.Summary, "Redeem an invite code: bind the calling identity to the invite's role")
  ),
  iam,
  "Group invites: codes that bind their redeemer to a role in a group."
)
export const Repos = authenticated(
  readable("repos", "repos", Wire.Repo.v2, aboutRepos),
  "/registry/v2beta1",
  "Registry repositories: read-only here, written through v1."
)
export const Tags = authenticated(
  HttpApiGroup.make("tags").add(list("tags", Wire.Tag.v2, aboutTags).setUrlParams(ListQuery.TagListQuery)).add(
    get("tags", Wire.Tag.v2, aboutTags)
  ),
  "/registry/v2beta1",
  "Registry tags: read-only here, written through v1."
)
export const Advisories = authenticated(
  HttpApiGroup.make("advisories")
    .add(list("advisories", Wire.Advisory.v2, aboutAdvisories).setUrlParams(ListQuery.AdvisoryListQuery))
    .add(get("advisories", Wire.Advisory.v2, aboutAdvisories)),
  "/vulnerabilities/v2beta1",
  "Vulnerability advisories: read-only, loaded by the import command."
)

const v1Description = "v1 compatibility surface: deprecated, use v2beta1."
export const GroupsV1 = authenticated(
  v1("groupsV1", "groups", Wire.Group.v1, GroupBody, aboutGroups),
  "/iam/v1",
  v1Description
)
export const IdentitiesV1 = authenticated(
  v1("identitiesV1", "identities", Wire.Identity.v1, IdentityBody, aboutIdentities),
  "/iam/v1",
  v1Description
)
export const RolesV1 = authenticated(
  v1("rolesV1", "roles", Wire.Role.v1, RoleBody, aboutRoles),
  "/iam/v1",
  v1Description
)
export const RoleBindingsV1 = authenticated(
  v1("roleBindingsV1", "rolebindings", Wire.RoleBinding.v1, RoleBindingBody, aboutRoleBindings),
  "/iam/v1",
  v1Description
)
export const ReposV1 = authenticated(
  v1("reposV1", "repos", Wire.Repo.v1, RepoBody, aboutRepos),
  "/registry/v1",
  v1Description
)
export const TagsV1 = authenticated(
  v1("tagsV1", "tags", Wire.Tag.v1, TagBody, aboutTags),
  "/registry/v1",
  v1Description
)

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

/** The answer of the token exchange: an API token and when it expires. */
export const Exchanged = Schema.Struct({
  token: Schema.String.annotations({ description: "the API token, valid for one hour" }),
  expiry: Wire.Time.annotations({ description: "when the API token expires (RFC 3339)" })
}).annotations({ identifier: "ExchangedToken" })

const exchangeDescription = "Exchanges the workload's own OIDC token (the bearer) for an API token of an identity " +
  "whose claim match it satisfies. Every failure to verify or match is one 403, whether or not the identity exists."

/** The answer of a refresh: an API token, and the refresh token that replaces the one presented. */
export const Refreshed = Schema.Struct({
  token: Exchanged,
  refreshToken: Schema.Struct({
    token: Schema.String.annotations({ description: "the next refresh token; the one presented no longer works" }),
    expiry: Wire.Time.annotations({ description: "when it expires (RFC 3339), 30 days after it was issued" })
  }).annotations({ identifier: "RefreshToken" })
}).annotations({ identifier: "RefreshedTokens" })

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The token exchange and the documents that let others verify its tokens. */
export const TokenService = HttpApiGroup.make("sts")
  .annotate(OpenApi.Description, "The token exchange (STS), and this issuer's OpenID configuration and keys.")
  .add(
    HttpApiEndpoint.get("exchange", "/sts/exchange")
      .setUrlParams(ExchangeParams)
      .addSuccess(Exchanged)
      .annotate(OpenApi.Description, exchangeDescription)
      .annotate(OpenApi.Summary, "Exchange a token")
  )
  .add(
    HttpApiEndpoint.post("exchangePost", "/sts/exchange")
      .setUrlParams(ExchangeParams)
      .addSuccess(Exchanged)
      .annotate(OpenApi.Description, exchangeDescription)
      .annotate(OpenApi.Summary, "Exchange a token (POST)")
  )
  .add(
    HttpApiEndpoint.post("exchangeRefreshToken", "/sts/exchange_refresh_token")
      .setUrlParams(Schema.Struct({
        aud: Schema.optional(Schema.String).annotations({
          description: "the audience the refresh token is bound to (default: the API's base URL)"
        })
      }))
      .addSuccess(Refreshed)
      .annotate(
        OpenApi.Description,
        "Exchanges a person's refresh token (the bearer) for an API token and the refresh token that replaces it. " +
          "A refresh token works once: presenting one again revokes every token rotated from the same sign-in."
      )
      .annotate(OpenApi.Summary, "Exchange a refresh token")
  )
  .middlewareEndpoints(UpstreamBearer)
  .add(
    HttpApiEndpoint.get("configuration", "/.well-known/openid-configuration")
      .addSuccess(JsonObject)
      .annotate(OpenApi.Summary, "OpenID configuration of this token issuer")
  )
  .add(
    HttpApiEndpoint.get("jwks", "/.well-known/jwks.json")
      .addSuccess(Schema.Struct({ keys: Schema.Array(JsonObject) }))
      .annotate(OpenApi.Summary, "The public keys that verify this issuer's tokens")
  )

/**
 * What the generated document says, made true: every error body is a google.rpc.Status (the framework's own
 * decode-error body never reaches a client), and the custom method's path keeps its literal colon.
 */
const truthful = (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => {
  const paths: OpenApi.OpenAPISpecPaths = {}
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const operation of Object.values(item)) {
      const bad = (operation as OpenApi.OpenAPISpecOperation).responses?.["400"]
      const schema = bad?.content?.["application/json"]?.schema
      if (bad !== undefined && schema !== undefined && "anyOf" in schema && Array.isArray(schema.anyOf)) {
        const kept = (schema.anyOf as ReadonlyArray<OpenApiJsonSchema.JsonSchema>).filter((s) =>
          !("$ref" in s && s.$ref === "#/components/schemas/HttpApiDecodeError")
        )
        bad.content!["application/json"]!.schema = kept.length === 1 ? kept[0]! : { anyOf: kept }
        bad.description = "invalid argument (code 3) or failed precondition (code 9)"
      }
    }
    // `/groupInvites::redeem` (a literal colon to the router) reaches here as `/groupInvites:{redeem}`.
    paths[path.replace(/:\{(\w+)\}$/, ":$1")] = item
  }
  const schemas = { ...spec.components.schemas }
  for (const internal of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete schemas[internal]
  return withoutIds({ ...spec, paths, components: { ...spec.components, schemas } })
}

/** Drops the `$id`s the schema generator gives `unknown` (the same id many times over). */
const withoutIds = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map(withoutIds) as A
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== "$id").map(([k, v]) => [k, withoutIds(v)])) as A
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
  .addError(declared(Errors.InvalidArgument, 400, "invalid argument (code 3)"))
  .addError(declared(Errors.FailedPrecondition, 400, "failed precondition (code 9)"))
  .addError(declared(Errors.PermissionDenied, 403, "permission denied (code 7), whether or not the resource exists"))
  .addError(declared(Errors.NotFound, 404, "not found (code 5)"))
  .addError(declared(Errors.AlreadyExists, 409, "already exists (code 6)"))
  .addError(declared(Errors.ResourceExhausted, 429, "resource exhausted (code 8): too many requests; retry later"))
  .addError(declared(Errors.Aborted, 409, "aborted (code 10): retry"))
  .addError(declared(Errors.Internal, 500, "internal error (code 13)"))
  .addError(declared(Errors.Unavailable, 503, "unavailable (code 14): a service it needs cannot be reached; retry"))
  .annotate(OpenApi.Title, "Arbor management API")
  .annotate(OpenApi.Version, "2.0.0-beta.1")
  .annotate(
    OpenApi.Description,
    "Groups, identities, roles, role bindings, identity providers, account associations and group invites; " +
      "registry repos and tags; vulnerability advisories. Errors are google.rpc.Status bodies. Query parameters are " +
      "snake_case; each is also accepted in camelCase (pageSize, uidp.descendantsOf, …)."
  )
  .annotate(OpenApi.Servers, [{ url: "/", description: "this server" }])
  .annotate(OpenApi.License, { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" })
  .annotate(OpenApi.Transform, (spec) => truthful(spec as OpenApi.OpenAPISpec))
