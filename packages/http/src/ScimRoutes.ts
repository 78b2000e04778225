/**
 * The SCIM 2.0 endpoint of each identity provider (docs/api.md §13): `/scim/v2/<provider uid>/Users` and `/Groups`
 * (RFC 7644's create, get, list with `filter`, `startIndex` and `count`, replace, PATCH and delete, with ETags:
 * `If-Match` on a write, `If-None-Match` on a read) and its discovery (`/ServiceProviderConfig`, `/ResourceTypes`, `/Schemas`), the
 * provider's SCIM token as bearer. A token past its rate is answered 429 with
 * `Retry-After`. Every failure is rendered in SCIM's error format by the server's error middleware (`ErrorRendering`).
 */
import * as Scim from "@arbor/api/Scim"
import { Errors, ScimCredentials, ScimGroups, ScimUsers } from "@arbor/core"
import type { ScimCredentials as Credentials, ScimUser } from "@arbor/core"
import * as ScimGroup from "@arbor/core/ScimGroup"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { ScimError, scimPatch } from "scim-patch"
import type { ScimPatchOperation, ScimResource } from "scim-patch"
import { parse as parseFilter } from "scim2-parse-filter"
import * as Authentication from "./Authentication.js"
import { Windows } from "./FixedWindows.js"

/**
 * The paths below `/scim/v2/`: a provider's uid, then `Users[/<id>]`, `Groups[/<id>]`, `ServiceProviderConfig`,
 * `ResourceTypes[/<name>]`, `Schemas[/<urn>]`, or a search by POST: `.search`, `Users/.search` or `Groups/.search`.
 */
const route =
  /^\/scim\/v2\/([0-9a-f]{40}(?:\/[0-9a-f]{16})+)\/(Users|Groups|ServiceProviderConfig|ResourceTypes|Schemas|\.search)(?:\/([^/]+))?\/?$/

/** The default number of users a page holds when `count` is absent. */
const defaultCount = 100

const invalid = (field: string, description: string, reason?: string) =>
  new Errors.InvalidArgument({
    violations: [new Errors.FieldViolation({ field, description })],
    ...(reason === undefined ? {} : { reason })
  })

/**
 * The one filter the store answers: equality on one of `attributes` (by their names in lower case), as Okta and
 * Microsoft Entra send it (`userName eq "…"`, `displayName eq "…"`, `externalId eq "…"`); anything else is
 * `invalidFilter`.
 */
const filterOf = <A extends string>(attributes: ReadonlyArray<A>) =>
(
  text: string | null
): Effect.Effect<{ readonly attribute: A; readonly value: string } | undefined, Errors.InvalidArgument> => {
  if (text === null || text.trim() === "") return Effect.succeed(undefined)
  const refused = invalid(
    "filter",
    `must be ${attributes.map((a) => `${a} eq "…"`).join(" or ")}`,
    "INVALID_FILTER"
  )
  return Effect.try({ try: () => parseFilter(text), catch: () => refused }).pipe(
    Effect.flatMap((parsed) => {
      if (parsed.op !== "eq" || !("attrPath" in parsed) || typeof parsed.compValue !== "string") {
        return Effect.fail(refused)
      }
      const attribute = attributes.find((a) => a.toLowerCase() === parsed.attrPath.toLowerCase())
      return attribute === undefined ? Effect.fail(refused) : Effect.succeed({ attribute, value: parsed.compValue })
    })
  )
}

/** A positive integer parameter, `fallback` when absent; a negative `count` counts as 0 (RFC 7644 §3.4.2.4). */
const integer = (text: string | null, field: string, fallback: number) => {
  if (text === null || text === "") return Effect.succeed(fallback)
  return /^-?\d{1,9}$/.test(text)
    ? Effect.succeed(Number(text))
    : Effect.fail(invalid(field, "must be an integer"))
}

/** SCIM's JSON answer. */
const scimJson = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, contentType: Scim.mediaType, headers })

const decodePatch = Schema.decodeUnknown(Scim.PatchRequest)
const decodeSearch = Schema.decodeUnknown(Scim.SearchRequest)

/** A query's comma-separated list of attribute paths (`attributes`, `excludedAttributes`). */
const pathsIn = (text: string | null): ReadonlyArray<string> =>
  text === null ? [] : text.split(",").map((path) => path.trim()).filter((path) => path !== "")

/**
 * An operation as scim-patch takes it: its `op` in lower case (Microsoft Entra sends `"Replace"`); a `remove` of
 * values from a multi-valued attribute (Entra's `{"op": "Remove", "path": "members", "value": [{"value": "<id>"}]}`)
 * is one removal by `value` filter for each, as Okta sends them (`members[value eq "<id>"]`), so that a value matches
 * whatever other sub-attributes it was answered with.
 */
const operationsOf = (operation: Scim.PatchRequest["Operations"][number]): ReadonlyArray<ScimPatchOperation> => {
  const value = operation.value === undefined ? {} : { value: operation.value }
  const path = operation.path === undefined ? {} : { path: operation.path }
  switch (operation.op.toLowerCase()) {
    case "remove": {
      const removed = operation.value
      const values = Array.isArray(removed) && removed.length > 0 &&
          removed.every((item) => typeof item === "object" && item !== null && typeof item.value === "string")
        ? removed.map((item: { readonly value: string }) => item.value)
        : undefined
      return values !== undefined && operation.path !== undefined && !operation.path.includes("[")
        ? values.map((v) => ({ op: "remove", path: `${operation.path}[value eq ${JSON.stringify(v)}]` }))
        : [{ op: "remove", path: operation.path ?? "", ...value }]
    }
    case "add":
      return [{ op: "add", ...path, ...value }]
    default:
      return [{ op: "replace", ...path, ...value }]
  }
}

/**
 * A resource type's endpoint: its service's operations, how its resource reads, what a list may filter on, and the
 * attributes every one of them has (a PATCH may set them, never remove them).
 */
interface Endpoint<R extends { readonly version: number }> {
  readonly name: "User" | "Group"
  readonly schema: string
  readonly unremovable: ReadonlyArray<string>
  readonly idOf: (resource: R) => string
  readonly render: (resource: R, location: string) => Record<string, unknown>
  /** The resource as a PATCH edits it: as rendered, with the lists it has none of present and empty. */
  readonly editable: (resource: R, location: string) => Record<string, unknown>
  readonly create: (client: Credentials.Client, input: unknown) => Effect.Effect<R, Errors.ArborError>
  readonly get: (client: Credentials.Client, id: string) => Effect.Effect<R, Errors.ArborError>
  readonly list: (
    client: Credentials.Client,
    filter: string | null,
    page: ScimUsers.Page
  ) => Effect.Effect<{ readonly total: number; readonly resources: ReadonlyArray<R> }, Errors.ArborError>
  readonly replace: (
    client: Credentials.Client,
    id: string,
    input: unknown,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<R, Errors.ArborError>
  readonly patch: (
    client: Credentials.Client,
    id: string,
    apply: (resource: R) => Effect.Effect<unknown, Errors.InvalidArgument>,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<R, Errors.ArborError>
  readonly remove: (
    client: Credentials.Client,
    id: string,
    ifMatch?: ReadonlyArray<number>
  ) => Effect.Effect<void, Errors.ArborError>
}

/** The endpoints below the API's `baseUrl`, each SCIM token limited to `requestsPerMinute`. */
export const layer = (options: { readonly baseUrl: string; readonly requestsPerMinute: number }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const credentials = yield* ScimCredentials.ScimCredentials
      const users = yield* ScimUsers.ScimUsers
      const groups = yield* ScimGroups.ScimGroups
      const perToken = new Windows(60_000)

      /**
       * The client a request's bearer names at `provider`, once its token is within its rate. Only tokens that
       * authenticate are counted, so the counts stay as few as the tokens issued.
       */
      const client = (request: HttpServerRequest.HttpServerRequest, provider: string) =>
        Effect.gen(function*() {
          const token = Authentication.bearerIn(request.headers.authorization)
          if (token === "") return yield* Authentication.missing()
          const authenticated = yield* credentials.authenticate(provider, token)
          const key = createHash("sha256").update(token).digest("base64url")
          const now = Date.now()
          if (perToken.count(key, now) >= options.requestsPerMinute) {
            return yield* new Errors.ResourceExhausted({
              description: `at most ${options.requestsPerMinute} requests a minute for each SCIM token`,
              retryAfterSeconds: perToken.retryAfter(key, now),
              reason: "TOO_MANY_REQUESTS"
            })
          }
          perToken.add(key, now)
          return authenticated
        })

      const body = (request: HttpServerRequest.HttpServerRequest) =>
        Effect.flatMap(request.json, (json) =>
          typeof json === "object" && json !== null && !Array.isArray(json)
            ? Effect.succeed(json)
            : Effect.fail(invalid("body", "must be a JSON object", "INVALID_SYNTAX")))

      /** A PATCH's operations applied to `resource` by scim-patch; what is left is the new resource. */
      const patched = (operations: ReadonlyArray<ScimPatchOperation>) => (resource: Record<string, unknown>) =>
        Effect.try({
          try: () => {
            const document = { ...resource, meta: { created: new Date(), lastModified: new Date() } } as ScimResource
            const { id: _id, meta: _meta, schemas: _schemas, ...rest } = scimPatch(document, [...operations], {
              mutateDocument: false,
              treatMissingAsAdd: true
            })
            return rest
          },
          catch: (error) =>
            error instanceof ScimError
              ? invalid(
                "Operations",
                error.message,
                (error.scimCode ?? "invalidSyntax").replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()
              )
              : invalid("Operations", "could not be applied", "INVALID_SYNTAX")
        })

      const userFilter = filterOf(["userName", "externalId"] as const)
      const groupFilter = filterOf(["displayName", "externalId"] as const)

      /** The two resource types, at `base` (the provider's endpoint). */
      const endpoints = (base: string) => {
        const usersAt = `${base}/Users`
        const user: Endpoint<ScimUser.ScimUser> = {
          name: "User",
          schema: Scim.schemas.user,
          unremovable: ["username", "externalid", "active"],
          idOf: (resource) => resource.identityUid,
          render: Scim.user,
          editable: Scim.user,
          create: users.createUser,
          get: users.getUser,
          list: (client, text, page) =>
            Effect.flatMap(userFilter(text), (filter) =>
              Effect.map(users.listUsers(client, filter, page), (found) => ({
                total: found.total,
                resources: found.users
              }))),
          replace: users.replaceUser,
          patch: (client, id, apply, ifMatch) => users.patchUser(client, id, (found) => apply(found), ifMatch),
          remove: users.deleteUser
        }
        const group: Endpoint<ScimGroup.ScimGroup> = {
          name: "Group",
          schema: Scim.schemas.group,
          unremovable: ["displayname"],
          idOf: ScimGroup.scimIdOf,
          render: (resource, location) => Scim.group(resource, location, usersAt),
          editable: (resource, location) => ({ members: [], ...Scim.group(resource, location, usersAt) }),
          create: groups.createGroup,
          get: groups.getGroup,
          list: (client, text, page) =>
            Effect.flatMap(groupFilter(text), (filter) =>
              Effect.map(groups.listGroups(client, filter, page), (found) => ({
                total: found.total,
                resources: found.groups
              }))),
          replace: groups.replaceGroup,
          patch: groups.patchGroup,
          remove: groups.deleteGroup
        }
        return { Users: user, Groups: group }
      }

      const serve = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const url = new URL(request.url, "http://localhost")
        const match = route.exec(url.pathname)
        if (match === null) {
          return yield* new Errors.NotFound({ resourceType: "SCIM endpoint", uid: url.pathname })
        }
        const [, provider = "", resource = "", id] = match
        const authenticated = yield* client(request, provider)
        // Locations are the configured base URL's, never the Host header's.
        const discovery = `${options.baseUrl}${Scim.endpointPath(provider)}`
        const method = request.method
        if (resource === "ServiceProviderConfig") {
          if (method !== "GET" || id !== undefined) {
            return yield* notAllowed(method)
          }
          return scimJson(Scim.serviceProviderConfig(`${options.baseUrl}/docs`))
        }
        // Discovery (RFC 7644 §4): the resource types and their schemas, as a list or by id.
        if (resource === "ResourceTypes" || resource === "Schemas") {
          if (method !== "GET") {
            return yield* notAllowed(method)
          }
          const documents: ReadonlyArray<readonly [string, unknown]> = resource === "ResourceTypes"
            ? [
              ["User", Scim.userResourceType("/Users", `${discovery}/ResourceTypes/User`)],
              ["Group", Scim.groupResourceType("/Groups", `${discovery}/ResourceTypes/Group`)]
            ]
            : [
              [Scim.schemas.user, Scim.userSchemaDocument(`${discovery}/Schemas/${Scim.schemas.user}`)],
              [Scim.schemas.group, Scim.groupSchemaDocument(`${discovery}/Schemas/${Scim.schemas.group}`)]
            ]
          if (id === undefined) {
            return scimJson(Scim.listResponse(
              documents.length,
              1,
              documents.map(([, document]) =>
                document
              )
            ))
          }
          const found = documents.find(([known]) => known === decodeURIComponent(id))
          if (found === undefined) {
            return yield* new Errors.NotFound({ resourceType: resource.slice(0, -1), uid: decodeURIComponent(id) })
          }
          return scimJson(found[1])
        }
        const { Groups, Users } = endpoints(discovery)
        if (resource === ".search") {
          if (method !== "POST" || id !== undefined) return yield* notAllowed(method)
          return yield* searchedAtRoot(request, authenticated, discovery)
        }
        const at = (type: "Users" | "Groups") => ({
          request,
          url,
          client: authenticated,
          base: `${discovery}/${type}`,
          id
        })
        return yield* (resource === "Groups" ? served(Groups, at("Groups")) : served(Users, at("Users")))
      })

      /**
       * A search at the root (RFC 7644 §3.4.3): every resource of the provider, users then groups, one page across
       * both; a filter on an attribute only one type has matches none of the other.
       */
      const searchedAtRoot = (
        request: HttpServerRequest.HttpServerRequest,
        client: Credentials.Client,
        discovery: string
      ) =>
        Effect.gen(function*() {
          const search = yield* Effect.mapError(
            decodeSearch(yield* body(request)),
            (error) => invalid("body", error.message, "INVALID_SYNTAX")
          )
          const projection = { attributes: search.attributes ?? [], excluded: search.excludedAttributes ?? [] }
          const startIndex = Math.max(1, search.startIndex ?? 1)
          const count = Math.min(ScimUsers.maxPageSize, Math.max(0, search.count ?? defaultCount))
          const { Groups, Users } = endpoints(discovery)
          /** One type's page, shown as its own endpoint shows it; undefined when the filter cannot name its resources. */
          const part = <R extends { readonly version: number }>(
            endpoint: Endpoint<R>,
            type: "Users" | "Groups",
            page: ScimUsers.Page
          ) =>
            endpoint.list(client, search.filter ?? null, page).pipe(
              Effect.map((found) => ({
                total: found.total,
                shown: found.resources.map((value) =>
                  Scim.projected(
                    endpoint.render(value, `${discovery}/${type}/${endpoint.idOf(value)}`),
                    projection
                  )
                )
              })),
              Effect.catchIf(
                (error) => error._tag === "InvalidArgument" && error.violations[0]?.field === "filter",
                () => Effect.succeed(undefined)
              )
            )
          const users = yield* part(Users, "Users", { startIndex, count })
          const groups = yield* part(Groups, "Groups", {
            startIndex: Math.max(1, startIndex - (users?.total ?? 0)),
            count: count - (users?.shown.length ?? 0)
          })
          if (users === undefined && groups === undefined) {
            return yield* invalid(
              "filter",
              "must be userName, displayName or externalId eq \"…\"",
              "INVALID_FILTER"
            )
          }
          return scimJson(Scim.listResponse(
            (users?.total ?? 0) + (groups?.total ?? 0),
            startIndex,
            [...users?.shown ?? [], ...groups?.shown ?? []]
          ))
        })

      /** A request to one resource type's endpoint, at `base`: a list, a search, or one resource by `id`. */
      const served = <R extends { readonly version: number }>(endpoint: Endpoint<R>, at: {
        readonly request: HttpServerRequest.HttpServerRequest
        readonly url: URL
        readonly client: Credentials.Client
        readonly base: string
        readonly id: string | undefined
      }) =>
        Effect.gen(function*() {
          const { base, client: authenticated, id, request, url } = at
          const location = (value: R) => `${base}/${endpoint.idOf(value)}`
          // Which attributes answers carry (RFC 7644 §3.9): from the query, on every method; from the body of a search.
          const asked: Scim.Projection = {
            attributes: pathsIn(url.searchParams.get("attributes")),
            excluded: pathsIn(url.searchParams.get("excludedAttributes"))
          }
          const shown = (value: R, projection: Scim.Projection = asked) =>
            Scim.projected(endpoint.render(value, location(value)), projection)
          const answer = (value: R, status = 200) =>
            scimJson(shown(value), status, {
              etag: Scim.versionOf(value),
              ...(status === 201 ? { location: location(value) } : {})
            })
          const method = request.method
          /** A page of the resources `filter` names, shaped by `projection`. */
          const listed = (filter: string | null, startAt: number, counted: number, projection: Scim.Projection) =>
            Effect.gen(function*() {
              const startIndex = Math.max(1, startAt)
              const count = Math.min(ScimUsers.maxPageSize, Math.max(0, counted))
              const page = yield* endpoint.list(authenticated, filter, { startIndex, count })
              return scimJson(
                Scim.listResponse(page.total, startIndex, page.resources.map((value) => shown(value, projection)))
              )
            })
          // A search by POST (RFC 7644 §3.4.3): a list whose query is the body.
          if (id === ".search") {
            if (method !== "POST") return yield* notAllowed(method)
            const search = yield* Effect.mapError(
              decodeSearch(yield* body(request)),
              (error) => invalid("body", error.message, "INVALID_SYNTAX")
            )
            return yield* listed(search.filter ?? null, search.startIndex ?? 1, search.count ?? defaultCount, {
              attributes: search.attributes ?? [],
              excluded: search.excludedAttributes ?? []
            })
          }
          const ifMatch = Scim.versionsIn(request.headers["if-match"])
          /** The versions a write may change (`If-Match`), undefined when any. */
          const expected = ifMatch === "any" ? undefined : ifMatch
          if (id === undefined) {
            if (method === "POST") return answer(yield* endpoint.create(authenticated, yield* body(request)), 201)
            if (method !== "GET") return yield* notAllowed(method)
            const query = url.searchParams
            return yield* listed(
              query.get("filter"),
              yield* integer(query.get("startIndex"), "startIndex", 1),
              yield* integer(query.get("count"), "count", defaultCount),
              asked
            )
          }
          switch (method) {
            case "GET": {
              const value = yield* endpoint.get(authenticated, id)
              const unchanged = Scim.versionsIn(request.headers["if-none-match"])
              if (unchanged === "any" || unchanged?.includes(value.version) === true) {
                return HttpServerResponse.empty({ status: 304, headers: { etag: Scim.versionOf(value) } })
              }
              return answer(value)
            }
            case "PUT":
              return answer(yield* endpoint.replace(authenticated, id, yield* body(request), expected))
            case "PATCH": {
              const patch = yield* Effect.mapError(
                decodePatch(yield* body(request)),
                (error) => invalid("Operations", error.message, "INVALID_SYNTAX")
              )
              const operations = patch.Operations.flatMap(operationsOf)
              const removed = operations.find((o) =>
                o.op === "remove" &&
                endpoint.unremovable.includes(o.path.toLowerCase().replace(`${endpoint.schema.toLowerCase()}:`, ""))
              )
              if (removed !== undefined && removed.op === "remove") {
                return yield* invalid(
                  "Operations",
                  `cannot remove ${removed.path}: every ${endpoint.name.toLowerCase()} has one` +
                    (removed.path.toLowerCase() === "active" ? "; replace it with false to deactivate the user" : ""),
                  "MUTABILITY"
                )
              }
              const apply = patched(operations)
              return answer(
                yield* endpoint.patch(authenticated, id, (value) =>
                  apply(endpoint.editable(value, location(value))), expected)
              )
            }
            case "DELETE":
              yield* endpoint.remove(authenticated, id, expected)
              return HttpServerResponse.empty({ status: 204 })
            default:
              return yield* notAllowed(method)
          }
        })

      yield* router.all("/scim/v2/*", serve)
    })
  )

const notAllowed = (method: string) =>
  Effect.fail(
    new Errors.NotFound({ resourceType: "SCIM operation", uid: method })
  )
