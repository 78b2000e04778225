/**
 * The gRPC surface's mapping (docs/api.md §11): each served method of the protos in `@arbor/api/proto` calls the
 * engine operation of its REST twin, with the same principal, list options, request body and wire encoding. A
 * resource leaves the engine through its v2 wire schema (`Wire`), whose JSON is the proto3 JSON of its message, and a
 * request body enters the engine as the proto3 JSON of its message, which is the REST body. A method left out here
 * would answer `UNIMPLEMENTED`; none is (a test calls each).
 */
import * as Api from "@arbor/api/Api"
import * as ListQuery from "@arbor/api/ListQuery"
import { SubscriptionsService } from "@arbor/api/proto/chainguard/platform/events/v2beta1/subscriptions_pb"
import { AccountAssociationsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/account_associations_pb"
import { ExternalGroupRoleMappingsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/external_group_role_mappings_pb"
import { GroupInvitesService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/group_invites_pb"
import { GroupsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import {
  IdentitiesService,
  IdentityMetadataSchema
} from "@arbor/api/proto/chainguard/platform/iam/v2beta1/identities_pb"
import { IdentityProvidersService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/identity_providers_pb"
import { RoleBindingsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/role_bindings_pb"
import { RolesService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/roles_pb"
import { TermsAcceptanceSchema, TermsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/terms_pb"
import { RepoReadmeSchema, ReposService } from "@arbor/api/proto/chainguard/platform/registry/v2beta1/repos_pb"
import { TagsService } from "@arbor/api/proto/chainguard/platform/registry/v2beta1/tags_pb"
import type { AdvisoryEventSchema } from "@arbor/api/proto/chainguard/platform/vulnerabilities/v2beta1/advisories_pb"
import {
  AdvisoriesService,
  type Advisory as AdvisoryMessage,
  AdvisoryEvent_FalsePositiveDetermination_Type,
  AdvisorySchema,
  EventTypeFilter
} from "@arbor/api/proto/chainguard/platform/vulnerabilities/v2beta1/advisories_pb"
import type { UIDPFilter } from "@arbor/api/proto/platform/common/v1/uidp.platform_pb"
import { SecurityTokenService } from "@arbor/api/proto/platform/oidc/v1/oidc.platform_pb"
import * as Resources from "@arbor/api/Resources"
import * as Wire from "@arbor/api/Wire"
import type { Lists, Principal, ResourceService } from "@arbor/core"
import { Errors, Validation } from "@arbor/core"
import type { Advisory } from "@arbor/core/Advisory"
import {
  create,
  createRegistry,
  type DescMessage,
  type DescMethod,
  type DescMethodUnary,
  fromJson,
  type JsonObject,
  type JsonValue,
  type Message,
  type MessageInitShape,
  type MessageShape,
  toJson
} from "@bufbuild/protobuf"
import { timestampFromMs } from "@bufbuild/protobuf/wkt"
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type MethodImpl } from "@connectrpc/connect"
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as EngineServices from "./EngineServices.js"

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

/** The services served, every method of each. */
export const served = [
  GroupsService,
  IdentitiesService,
  RolesService,
  RoleBindingsService,
  IdentityProvidersService,
  AccountAssociationsService,
  GroupInvitesService,
  ExternalGroupRoleMappingsService,
  ReposService,
  TagsService,
  AdvisoriesService,
  SubscriptionsService,
  TermsService,
  SecurityTokenService
] as const

/** The descriptors of the served protos, by the full names the declarations give. */
const protos = (() => {
  const registry = createRegistry(...served.map((service) => service.file))
  const missing = (kind: string, name: string) => new Error(`no ${kind} ${name} among the served protos`)
  return {
    service: (name: string) => {
      const found = registry.getService(name)
      if (found === undefined) throw missing("service", name)
      return found
    },
    message: (name: string) => {
      const found = registry.getMessage(name)
      if (found === undefined) throw missing("message", name)
      return found
    }
  }
})()

/** A method the engine has no feature for, answered as ConnectRPC answers one left out of a service. */
const unimplemented = (method: DescMethodUnary): MethodImpl<DescMethodUnary> => () => {
  throw new ConnectError(`${method.parent.typeName}.${method.name} is not implemented`, Code.Unimplemented)
}

/** A field the engine has no feature for, set in a request. */
const unsupported = (field: string) => Errors.InvalidArgument.field(field, "is not supported by this server")

/** A message from its proto3 JSON; fields the message lacks (REST-only ones such as a tag's `createTime`) drop. */
const message = <D extends DescMessage>(desc: D, json: unknown): MessageShape<D> =>
  fromJson(desc, json as JsonValue, { ignoreUnknownFields: true })

interface ListRequest {
  readonly uidp?: UIDPFilter | undefined
  readonly pageSize: number
  readonly pageToken: string
  readonly orderBy: string
  readonly skip: number
}

/** The engine's list options from a list request; zero values are unset, as absent query parameters are. */
const listOptions = (request: ListRequest): Lists.ListOptions => ({
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
const listResponse = <P extends string, A, M>(plural: P, page: Lists.Page<A>, item: (a: A) => M) => ({
  ...({ [plural]: page.items.map(item) } as { readonly [K in P]: Array<M> }),
  nextPageToken: page.nextPageToken ?? "",
  totalCount: BigInt(page.totalCount),
  skipped: page.skipped
})

/** A message's fields as its proto3 JSON (defaults left out); one it cannot hold is the request's own error. */
const fieldsOf = (desc: DescMessage, value: Message, field: string) =>
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

const text = (value: JsonValue | undefined) => typeof value === "string" ? value : ""

/** A resource as its message's proto3 JSON: its v2 wire JSON, adjusted by its declaration. */
const protoJsonOf = <A, I>(resource: { readonly wire: Schema.Schema<A, I>; readonly proto: Resources.Proto<I> }) => {
  const { toProto = (json) => json } = resource.proto
  const encodeWire = Schema.encodeSync(resource.wire)
  return (value: A) => toProto(encodeWire(value))
}

/**
 * The methods of a resource's service, from its declaration (`@arbor/api/Resources`): `Get<Message>`,
 * `List<Plural>`, `Create<Message>`, `Update<Message>` and `Delete<Message>` call the engine service's operation of
 * that name, with the request's resource as the REST body would carry it (its proto3 JSON) and the resource back
 * through its v2 wire schema. A request that sets a field the engine has no feature for is refused, naming it. Methods
 * `custom` registers first keep their own mapping; the rest answer `UNIMPLEMENTED`.
 */
const serveResource = <A, I, Q extends Lists.ListOptions, QI, S extends Lists.ListOptions>(
  router: ConnectRouter,
  run: Runner,
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
  const desc = protos.message(resource.proto.message)
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
  for (const method of protos.service(resource.proto.service).methods) {
    if (registered.has(method) || !isUnary(method)) continue
    router.rpc(method, operations(method) ?? unimplemented(method))
  }
}

/** The first of `fields` that is set, as the refusal of a field the engine does not support. */
const firstSet = (fields: Record<string, boolean>): Errors.InvalidArgument | undefined => {
  const set = Object.entries(fields).find(([, isSet]) => isSet)
  return set === undefined ? undefined : unsupported(set[0])
}

const nonEmpty = <A>(values: ReadonlyArray<A>) => values.length > 0 ? values : undefined

/** An enum value's generated name (its prefix left off) in kebab case: `FIX_NOT_PLANNED` → `fix-not-planned`. */
const kebab = (name: string) => name.toLowerCase().replaceAll("_", "-")

/** An event type filter as the engine names the type (an unknown number stays unknown to it). */
const eventTypeName = (value: EventTypeFilter) => kebab(EventTypeFilter[value] ?? String(value))

/** An advisory event as the proto has it: its time, and its type's data as the member of the `type` oneof. */
const advisoryEvent = (event: Advisory["events"][number]): MessageInitShape<typeof AdvisoryEventSchema> => {
  const createTime = timestampFromMs(event.time.epochMillis)
  const note = (data: { readonly note?: string | undefined } | undefined) => ({ note: data?.note ?? "" })
  switch (event.type) {
    case "detection": {
      const { nvdapi, scan, type } = event.detection
      return {
        createTime,
        type: {
          case: "detection",
          value: {
            type: type === "nvdapi"
              ? { case: "nvdapi", value: { cpeSearched: nvdapi?.cpeSearched ?? "", cpeFound: nvdapi?.cpeFound ?? "" } }
              : type === "manual"
              ? { case: "manual", value: {} }
              : {
                case: "scanv1",
                value: {
                  scanner: scan?.scanner ?? "",
                  subpackage: scan?.subpackageName ?? "",
                  componentId: scan?.componentId ?? "",
                  component: scan?.componentName ?? "",
                  componentVersion: scan?.componentVersion ?? "",
                  componentType: scan?.componentType ?? "",
                  componentLocation: scan?.componentLocation ?? ""
                }
              }
          }
        }
      }
    }
    case "fixed":
      return { createTime, type: { case: "fixed", value: { fixedVersion: event.fixed.fixedVersion } } }
    case "false-positive-determination": {
      const { note, type } = event.falsePositiveDetermination
      const known = AdvisoryEvent_FalsePositiveDetermination_Type[
        type.toUpperCase().replaceAll("-", "_") as keyof typeof AdvisoryEvent_FalsePositiveDetermination_Type
      ]
      return {
        createTime,
        type: { case: "falsePositiveDetermination", value: { type: known ?? 0, note: note ?? "" } }
      }
    }
    case "true-positive-determination":
      return { createTime, type: { case: "truePositiveDetermination", value: note(event.truePositiveDetermination) } }
    case "analysis-not-planned":
      return { createTime, type: { case: "analysisNotPlanned", value: note(event.analysisNotPlanned) } }
    case "fix-not-planned":
      return { createTime, type: { case: "fixNotPlanned", value: note(event.fixNotPlanned) } }
    case "pending-upstream-fix":
      return { createTime, type: { case: "pendingUpstreamFix", value: note(event.pendingUpstreamFix) } }
  }
}

/** An advisory as the proto has it: the package is the artifact. */
const advisory = (a: Advisory): AdvisoryMessage =>
  create(AdvisorySchema, {
    uid: a.uid,
    advisoryId: a.advisoryId,
    createTime: timestampFromMs(a.createTime.epochMillis),
    updateTime: timestampFromMs(a.updateTime.epochMillis),
    artifactName: a.packageName,
    aliases: [...a.aliases],
    events: a.events.map(advisoryEvent)
  })

/** The routes of every served service, over the engine. */
export const routes = Effect.gen(function*() {
  const engine = yield* EngineServices.services

  const rawToken = (exchanged: { readonly token: string; readonly expiry: DateTime.Utc }) => ({
    token: exchanged.token,
    expiry: timestampFromMs(exchanged.expiry.epochMillis)
  })
  const audience = (aud: ReadonlyArray<string>) =>
    aud.length > 1
      ? Effect.fail(Errors.InvalidArgument.field("aud", "must name one audience"))
      : Effect.succeed(aud[0])
  const refusedUnless = (refusal: Errors.InvalidArgument | undefined) =>
    refusal === undefined ? Effect.void : Effect.fail(refusal)

  return (run: Runner) => (router: ConnectRouter) => {
    const groupJson = protoJsonOf(Resources.groups)
    router.rpc(
      GroupsService.method.lookupGroup,
      (_, context) =>
        run.asCaller(
          context,
          (p) =>
            Effect.map(engine.groups.lookupVerified(p), (group) =>
              message(GroupsService.method.lookupGroup.output, { group: groupJson(group) }))
        )
    )
    router.rpc(
      GroupsService.method.checkEligibility,
      (_, context) => run.asCaller(context, (p) => engine.groups.checkEligibility(p))
    )
    router.rpc(
      GroupsService.method.requestGroupAccess,
      (request, context) => run.asCaller(context, (p) => engine.groups.requestAccess(p, request.groupUid))
    )
    // A group created without a parent is an organization, which REST creates at its own path.
    serveResource(router, run, Resources.groups, {
      ...engine.groups,
      create: (p, parent, body) =>
        parent === "" ? engine.groups.createRoot(p, body) : engine.groups.create(p, parent, body)
    })
    router.rpc(
      IdentitiesService.method.lookupIdentity,
      (request, context) => run.asCaller(context, () => engine.identities.lookup(request))
    )
    // The request is the REST body (its proto3 JSON: the mask a comma-separated string), the answer REST's.
    const updateMetadata = IdentitiesService.method.updateIdentityMetadata
    const metadataJson = Schema.encodeSync(Wire.IdentityMetadata)
    router.rpc(
      updateMetadata,
      (request, context) =>
        run.asCaller(context, (p) =>
          fieldsOf(updateMetadata.input, request, "request").pipe(
            Effect.flatMap((json) =>
              engine.identities.updateMetadata(p, {
                identityMetadata: json.identityMetadata,
                updateMask: typeof json.updateMask === "string" ? json.updateMask : undefined
              })
            ),
            Effect.map((updated) => message(IdentityMetadataSchema, metadataJson(updated)))
          ))
    )
    serveResource(router, run, Resources.identities, engine.identities)
    serveResource(router, run, Resources.roles, engine.roles)
    // A batch's request is the REST body (its proto3 JSON); each binding leaves as the resource does.
    const batchCreate = RoleBindingsService.method.batchCreateRoleBindings
    const bindingJson = protoJsonOf(Resources.roleBindings)
    router.rpc(
      batchCreate,
      (request, context) =>
        run.asCaller(context, (p) =>
          fieldsOf(batchCreate.input, request, "request").pipe(
            Effect.flatMap((json) => engine.bindings.batchCreate(p, json)),
            Effect.map((made) => message(batchCreate.output, { roleBindings: made.map(bindingJson) }))
          ))
    )
    serveResource(router, run, Resources.roleBindings, engine.bindings)
    // The SCIM methods' requests are their REST bodies (proto3 JSON) beside the provider's uid; answers REST's.
    const scimMethod = <A, I>(
      method: DescMethodUnary,
      answer: Schema.Schema<A, I>,
      operation: (p: Principal.Principal, provider: string, body: JsonObject) => Effect.Effect<A, E>
    ) => {
      const encode = Schema.encodeSync(answer)
      router.rpc(
        method,
        (request: Message, context: HandlerContext) =>
          run.asCaller(context, (p) =>
            fieldsOf(method.input, request, "request").pipe(
              Effect.flatMap(({ identityProviderUid, ...body }) => operation(p, text(identityProviderUid), body)),
              Effect.map((answered) => message(method.output, encode(answered)))
            ))
      )
    }
    const scimMethods = IdentityProvidersService.method
    scimMethod(scimMethods.generateScimToken, Api.ScimTokenIssued, engine.scim.generateToken)
    scimMethod(scimMethods.regenerateScimToken, Api.ScimTokenRegenerated, engine.scim.regenerateToken)
    scimMethod(scimMethods.revokeScimToken, Api.ScimTokenRevoked, (p, provider) => engine.scim.revokeToken(p, provider))
    scimMethod(scimMethods.setScimEnabled, Api.ScimEnabledSet, engine.scim.setEnabled)
    serveResource(router, run, Resources.identityProviders, engine.providers)
    const check = AccountAssociationsService.method.checkAccountAssociation
    const checked = Schema.encodeSync(Wire.AccountAssociationCheckResult)
    router.rpc(check, (request, context) =>
      run.asCaller(context, (p) =>
        fieldsOf(check.input, request, "request").pipe(
          Effect.flatMap(({ uid, ...body }) => engine.checks.check(p, text(uid), body)),
          Effect.map((result) => message(check.output, checked(result)))
        )))
    serveResource(router, run, Resources.accountAssociations, engine.associations)
    serveResource(router, run, Resources.groupInvites, engine.invites)
    // A batch's request is the REST body; each mapping leaves as the resource does.
    const batchDelete = ExternalGroupRoleMappingsService.method.batchDeleteExternalGroupRoleMappings
    const mappingJson = protoJsonOf(Resources.externalGroupRoleMappings)
    router.rpc(
      batchDelete,
      (request, context) =>
        run.asCaller(context, (p) =>
          Effect.map(
            engine.mappings.batchDelete(p, { parent: request.parent, names: request.names }),
            (deleted) =>
              message(batchDelete.output, {
                parent: deleted.parent,
                externalGroupRoleMappings: deleted.externalGroupRoleMappings.map(mappingJson)
              })
          ))
    )
    serveResource(router, run, Resources.externalGroupRoleMappings, engine.mappings)
    const readmeJson = Schema.encodeSync(Wire.RepoReadme)
    const readme = (value: Parameters<typeof readmeJson>[0]) => message(RepoReadmeSchema, readmeJson(value))
    router.rpc(
      ReposService.method.getRepoReadme,
      (request, context) => run.asCaller(context, (p) => Effect.map(engine.repos.readme(p, request.uid), readme))
    )
    router.rpc(
      ReposService.method.updateRepoReadme,
      (request, context) =>
        run.asCaller(context, (p) =>
          Effect.map(
            engine.repos.updateReadme(
              p,
              request.repoReadme?.uid ?? "",
              // A message leaves out an empty content: only a mask naming it clears the README.
              request.repoReadme?.content === "" ? {} : { content: request.repoReadme?.content },
              request.updateMask?.paths.join(",") || undefined
            ),
            readme
          ))
    )
    serveResource(router, run, Resources.repos, engine.repos)
    serveResource(router, run, Resources.tags, engine.tags)
    serveResource(router, run, Resources.subscriptions, engine.subscriptions)

    const acceptance = Schema.encodeSync(Wire.TermsAcceptance)
    router.service(TermsService, {
      acceptTerms: (request, context) =>
        run.asCaller(context, (p) => engine.terms.accept(p, request.group, { documentIds: request.documentIds })),
      listTermsAcceptances: (request, context) =>
        run.asCaller(context, (p) =>
          Effect.map(
            engine.terms.list(p, request.group, listOptions({ ...request, uidp: undefined })),
            (page) =>
              listResponse("termsAcceptances", page, (a) => {
                const { uid: _, ...json } = acceptance(a)
                return message(TermsAcceptanceSchema, json)
              })
          ))
    })

    router.service(AdvisoriesService, {
      getAdvisory: (request, context) =>
        run.asCaller(context, (p) => Effect.map(engine.advisories.get(p, request.uid), advisory)),
      listAdvisories: (request, context) =>
        run.asCaller(context, (p) =>
          refusedUnless(firstSet({
            legacyAdvisoryIds: request.legacyAdvisoryIds.length > 0,
            artifactTypes: request.artifactTypes.length > 0,
            artifactArchitectures: request.artifactArchitectures.length > 0,
            componentNames: request.componentNames.length > 0,
            componentTypes: request.componentTypes.length > 0,
            componentLocations: request.componentLocations.length > 0,
            origin: request.origin !== undefined,
            eventReviewStates: request.eventReviewStates.length > 0,
            eventAuthors: request.eventAuthors.length > 0,
            excludeEventAuthors: request.excludeEventAuthors.length > 0,
            eventReviewers: request.eventReviewers.length > 0
          })).pipe(
            Effect.zipRight(engine.advisories.list(p, {
              ...listOptions(request),
              advisoryIds: nonEmpty(request.advisoryIds),
              packageNames: nonEmpty(request.artifactNames),
              aliases: nonEmpty(request.aliases),
              eventTypes: nonEmpty(request.eventTypes.map(eventTypeName)),
              latestEventType: request.latestEventType === undefined
                ? undefined
                : eventTypeName(request.latestEventType),
              query: request.query || undefined
            })),
            Effect.map((page) => listResponse("advisories", page, advisory))
          ))
    })

    router.service(SecurityTokenService, {
      exchange: (request, context) =>
        run.withBearer(
          context,
          (upstream) =>
            refusedUnless(firstSet({ identityProvider: request.identityProvider !== "" })).pipe(
              Effect.zipRight(audience(request.aud)),
              Effect.flatMap((aud) =>
                engine.sts.exchange({
                  token: upstream,
                  audience: aud,
                  identity: request.identity,
                  capabilities: request.cap,
                  scopes: request.scopes
                })
              ),
              Effect.map(rawToken)
            )
        ),
      exchangeRefreshToken: (request, context) =>
        run.withBearer(
          context,
          (refresh) =>
            Effect.flatMap(
              audience(request.aud),
              (aud) =>
                engine.refreshTokens.exchange(refresh, aud, { capabilities: request.cap, scopes: request.scopes })
            ).pipe(
              Effect.map((refreshed) => ({
                token: rawToken(refreshed.token),
                refreshToken: rawToken(refreshed.refreshToken)
              }))
            )
        )
    })
  }
})
