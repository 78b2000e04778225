/**
 * The SCIM 2.0 endpoint of each identity provider (docs/api.md §13): `/scim/v2/<provider uid>/Users` (RFC 7644's
 * create, get, list with `filter`, `startIndex` and `count`, replace, PATCH and delete, with ETags: `If-Match` on a
 * write, `If-None-Match` on a read) and its discovery (`/ServiceProviderConfig`, `/ResourceTypes`, `/Schemas`), the
 * provider's SCIM token as bearer. A token past its rate is answered 429 with
 * `Retry-After`. Every failure is rendered in SCIM's error format by the server's error middleware (`ErrorRendering`).
 */
import * as Scim from "@arbor/api/Scim"
import { Errors, ScimCredentials, ScimUsers } from "@arbor/core"
import type { ScimUser } from "@arbor/core"
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
 * The paths below `/scim/v2/`: a provider's uid, then `Users`, `Users/<id>`, `ServiceProviderConfig`,
 * `ResourceTypes[/User]`, `Schemas[/<urn>]`, or a search by POST: `.search` or `Users/.search`.
 */
const route =
  /^\/scim\/v2\/([0-9a-f]{40}(?:\/[0-9a-f]{16})+)\/(Users|ServiceProviderConfig|ResourceTypes|Schemas|\.search)(?:\/([^/]+))?\/?$/

/** Attributes a user always has: a PATCH may set them, never remove them. */
const unremovable = ["username", "externalid", "active"]

/** The default number of users a page holds when `count` is absent. */
const defaultCount = 100

const invalid = (field: string, description: string, reason?: string) =>
  new Errors.InvalidArgument({
    violations: [new Errors.FieldViolation({ field, description })],
    ...(reason === undefined ? {} : { reason })
  })

/**
 * The one filter the store answers: `userName eq "…"` or `externalId eq "…"` (what Okta and Microsoft Entra send);
 * anything else is `invalidFilter`.
 */
const filterOf = (text: string | null): Effect.Effect<ScimUsers.Filter | undefined, Errors.InvalidArgument> => {
  if (text === null || text.trim() === "") return Effect.succeed(undefined)
  const refused = invalid(
    "filter",
    "must be userName eq \"…\" or externalId eq \"…\"",
    "INVALID_FILTER"
  )
  return Effect.try({ try: () => parseFilter(text), catch: () => refused }).pipe(
    Effect.flatMap((parsed): Effect.Effect<ScimUsers.Filter, Errors.InvalidArgument> => {
      if (parsed.op !== "eq" || !("attrPath" in parsed) || typeof parsed.compValue !== "string") {
        return Effect.fail(refused)
      }
      const attribute = parsed.attrPath.toLowerCase()
      return attribute === "username"
        ? Effect.succeed({ attribute: "userName", value: parsed.compValue })
        : attribute === "externalid"
        ? Effect.succeed({ attribute: "externalId", value: parsed.compValue })
        : Effect.fail(refused)
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

/** An operation as scim-patch takes it: its `op` in lower case (Microsoft Entra sends `"Replace"`). */
const operationOf = (operation: Scim.PatchRequest["Operations"][number]): ScimPatchOperation => {
  const value = operation.value === undefined ? {} : { value: operation.value }
  const path = operation.path === undefined ? {} : { path: operation.path }
  switch (operation.op.toLowerCase()) {
    case "remove":
      return { op: "remove", path: operation.path ?? "", ...value }
    case "add":
      return { op: "add", ...path, ...value }
    default:
      return { op: "replace", ...path, ...value }
  }
}

/** The endpoints below the API's `baseUrl`, each SCIM token limited to `requestsPerMinute`. */
export const layer = (options: { readonly baseUrl: string; readonly requestsPerMinute: number }) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const credentials = yield* ScimCredentials.ScimCredentials
      const scim = yield* ScimUsers.ScimUsers
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

      /** A PATCH's operations applied to `user` (as its resource) by scim-patch; what is left is the new user. */
      const patched = (operations: ReadonlyArray<ScimPatchOperation>, location: string) => (user: ScimUser.ScimUser) =>
        Effect.try({
          try: () => {
            const resource: ScimResource = {
              ...Scim.user(user, location),
              meta: { created: new Date(), lastModified: new Date() }
            }
            const { id: _id, meta: _meta, schemas: _schemas, ...rest } = scimPatch(resource, [...operations], {
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

      const serve = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const url = new URL(request.url, "http://localhost")
        const match = route.exec(url.pathname)
        if (match === null) {
          return yield* new Errors.NotFound({ resourceType: "SCIM endpoint", uid: url.pathname })
        }
        const [, provider = "", resource, id] = match
        const authenticated = yield* client(request, provider)
        // Locations are the configured base URL's, never the Host header's.
        const base = `${options.baseUrl}${Scim.endpointPath(provider)}/Users`
        const location = (user: ScimUser.ScimUser) => `${base}/${user.identityUid}`
        // Which attributes answers carry (RFC 7644 §3.9): from the query, on every method; from the body of a search.
        const asked: Scim.Projection = {
          attributes: pathsIn(url.searchParams.get("attributes")),
          excluded: pathsIn(url.searchParams.get("excludedAttributes"))
        }
        const shown = (user: ScimUser.ScimUser, projection: Scim.Projection = asked) =>
          Scim.projected(Scim.user(user, location(user)), projection)
        const answer = (user: ScimUser.ScimUser, status = 200) =>
          scimJson(shown(user), status, {
            etag: Scim.versionOf(user),
            ...(status === 201 ? { location: location(user) } : {})
          })
        const method = request.method
        if (resource === "ServiceProviderConfig") {
          if (method !== "GET" || id !== undefined) return yield* notAllowed(method)
          return scimJson(Scim.serviceProviderConfig(`${options.baseUrl}/docs`))
        }
        // Discovery (RFC 7644 §4): the one resource type and its schema, as a list or by id.
        const discovery = `${options.baseUrl}${Scim.endpointPath(provider)}`
        if (resource === "ResourceTypes" || resource === "Schemas") {
          if (method !== "GET") return yield* notAllowed(method)
          const [known, document] = resource === "ResourceTypes"
            ? ["User", Scim.userResourceType("/Users", `${discovery}/ResourceTypes/User`)]
            : [Scim.schemas.user, Scim.userSchemaDocument(`${discovery}/Schemas/${Scim.schemas.user}`)]
          if (id === undefined) return scimJson(Scim.listResponse(1, 1, [document]))
          if (decodeURIComponent(id) !== known) {
            return yield* new Errors.NotFound({ resourceType: resource.slice(0, -1), uid: decodeURIComponent(id) })
          }
          return scimJson(document)
        }
        /** A page of the users `filter` names, shaped by `projection`. */
        const listed = (
          filter: string | null,
          startAt: number,
          counted: number,
          projection: Scim.Projection
        ) =>
          Effect.gen(function*() {
            const startIndex = Math.max(1, startAt)
            const count = Math.min(ScimUsers.maxPageSize, Math.max(0, counted))
            const page = yield* scim.listUsers(authenticated, yield* filterOf(filter), { startIndex, count })
            return scimJson(
              Scim.listResponse(page.total, startIndex, page.users.map((user) => shown(user, projection)))
            )
          })
        // A search by POST (RFC 7644 §3.4.3), at the root or below `Users`: a list whose query is the body.
        if (resource === ".search" || id === ".search") {
          if (method !== "POST" || (resource === ".search" && id !== undefined)) return yield* notAllowed(method)
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
          if (method === "POST") return answer(yield* scim.createUser(authenticated, yield* body(request)), 201)
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
            const user = yield* scim.getUser(authenticated, id)
            const unchanged = Scim.versionsIn(request.headers["if-none-match"])
            if (unchanged === "any" || unchanged?.includes(user.version) === true) {
              return HttpServerResponse.empty({ status: 304, headers: { etag: Scim.versionOf(user) } })
            }
            return answer(user)
          }
          case "PUT":
            return answer(yield* scim.replaceUser(authenticated, id, yield* body(request), expected))
          case "PATCH": {
            const patch = yield* Effect.mapError(
              decodePatch(yield* body(request)),
              (error) => invalid("Operations", error.message, "INVALID_SYNTAX")
            )
            const operations = patch.Operations.map(operationOf)
            const removed = operations.find((o) =>
              o.op === "remove" &&
              unremovable.includes(o.path.toLowerCase().replace(`${Scim.schemas.user.toLowerCase()}:`, ""))
            )
            if (removed !== undefined && removed.op === "remove") {
              return yield* invalid(
                "Operations",
                `cannot remove ${removed.path}: every user has one` +
                  (removed.path.toLowerCase() === "active" ? "; replace it with false to deactivate the user" : ""),
                "MUTABILITY"
              )
            }
            return answer(yield* scim.patchUser(authenticated, id, patched(operations, `${base}/${id}`), expected))
          }
          case "DELETE":
            yield* scim.deleteUser(authenticated, id, expected)
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
