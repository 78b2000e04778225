/**
 * The gRPC surface's mapping (docs/api.md §11): each served method of the protos in `@arbor/api/proto` calls the
 * engine operation of its REST twin, with the same principal, list options, request body and wire encoding. A
 * resource leaves the engine through its v2 wire schema (`Wire`), whose JSON is the proto3 JSON of its message, and a
 * request body enters the engine as the proto3 JSON of its message, which is the REST body. Methods left out here
 * answer `UNIMPLEMENTED`.
 */
import {
  AccountAssociationSchema,
  AccountAssociationsService
} from "@arbor/api/proto/chainguard/platform/iam/v2beta1/account_associations_pb"
import {
  GroupInviteSchema,
  GroupInvitesService
} from "@arbor/api/proto/chainguard/platform/iam/v2beta1/group_invites_pb"
import { GroupSchema, GroupsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { IdentitiesService, IdentitySchema } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/identities_pb"
import {
  IdentityProviderSchema,
  IdentityProvidersService
} from "@arbor/api/proto/chainguard/platform/iam/v2beta1/identity_providers_pb"
import {
  RoleBindingSchema,
  RoleBindingsService
} from "@arbor/api/proto/chainguard/platform/iam/v2beta1/role_bindings_pb"
import { RoleSchema, RolesService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/roles_pb"
import { RepoSchema, ReposService } from "@arbor/api/proto/chainguard/platform/registry/v2beta1/repos_pb"
import { TagSchema, TagsService } from "@arbor/api/proto/chainguard/platform/registry/v2beta1/tags_pb"
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
import * as Wire from "@arbor/api/Wire"
import type { Lists, Principal, ResourceService } from "@arbor/core"
import { Errors } from "@arbor/core"
import type { Advisory } from "@arbor/core/Advisory"
import {
  create,
  type DescMessage,
  fromJson,
  type JsonValue,
  type MessageInitShape,
  type MessageShape,
  toJson
} from "@bufbuild/protobuf"
import { type FieldMask, timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt"
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect"
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

/** A field the engine has no feature for, set in a request. */
const unsupported = (field: string) => Errors.InvalidArgument.field(field, "is not supported by this server")

/** A message from its proto3 JSON; fields the message lacks (REST-only ones such as a tag's `createTime`) drop. */
const message = <D extends DescMessage>(desc: D, json: unknown): MessageShape<D> =>
  fromJson(desc, json as JsonValue, { ignoreUnknownFields: true })

/**
 * A request's resource as the REST body of the same request: its proto3 JSON, defaults left out. A value proto3
 * JSON cannot hold (a timestamp past year 9999) is the request's own error, as a malformed REST body is.
 */
const body = <D extends DescMessage>(
  field: string,
  desc: D,
  value: MessageShape<D> | undefined
): Effect.Effect<Record<string, unknown>, Errors.InvalidArgument> =>
  value === undefined ? Effect.succeed({}) : Effect.try({
    try: () => toJson(desc, value) as Record<string, unknown>,
    catch: (error) => Errors.InvalidArgument.field(field, error instanceof Error ? error.message : String(error))
  })

/** An update mask as REST takes it: the paths, comma-separated. */
const mask = (updateMask: FieldMask | undefined) => updateMask?.paths.join(",")

interface ListRequest {
  readonly uidp?: UIDPFilter | undefined
  readonly name?: string | undefined
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
  name: request.name || undefined,
  pageSize: request.pageSize,
  pageToken: request.pageToken || undefined,
  orderBy: request.orderBy || undefined,
  skip: request.skip
})

/** A list response: the page's items under the plural, the next page token, the counts. */
const listResponse = <P extends string, A, M>(plural: P, page: Lists.Page<A>, item: (a: A) => M) => ({
  ...({ [plural]: page.items.map(item) } as { readonly [K in P]: Array<M> }),
  nextPageToken: page.nextPageToken ?? "",
  totalCount: BigInt(page.totalCount),
  skipped: page.skipped
})

/** A resource's proto message from the engine's value, through its v2 wire JSON. */
const encoder = <A, I, D extends DescMessage>(
  wire: Schema.Schema<A, I>,
  desc: D,
  adjust: (json: I) => unknown = (json) => json
) => {
  const encode = Schema.encodeSync(wire)
  return (value: A): MessageShape<D> => message(desc, adjust(encode(value)))
}

/** How a resource travels: its engine service, its message, its encoding, its list's plural, its request field. */
interface Mapping<A, D extends DescMessage> {
  readonly service: ResourceService.Writable<A>
  readonly desc: D
  readonly encode: (value: A) => MessageShape<D>
  readonly plural: string
  readonly field: string
  /** The REST body from the message's JSON, where the two differ. */
  readonly input?: (json: Record<string, unknown>) => Record<string, unknown>
}

/** Get, list, create, update and delete of a resource. */
const crud = <A, D extends DescMessage>(run: Runner, m: Mapping<A, D>) => {
  const input = (request: object) =>
    body(m.field, m.desc, (request as Record<string, MessageShape<D> | undefined>)[m.field]).pipe(
      Effect.map((json) => m.input === undefined ? json : m.input(json))
    )
  return {
    get: (request: { readonly uid: string }, context: HandlerContext) =>
      run.asCaller(context, (p) => Effect.map(m.service.get(p, request.uid), m.encode)),
    list: (request: ListRequest, context: HandlerContext) =>
      run.asCaller(
        context,
        (p) => Effect.map(m.service.list(p, listOptions(request)), (page) => listResponse(m.plural, page, m.encode))
      ),
    create: (request: { readonly parent: string }, context: HandlerContext) =>
      run.asCaller(context, (p) =>
        input(request).pipe(
          Effect.flatMap((json) => m.service.create(p, request.parent, json)),
          Effect.map(m.encode)
        )),
    update: (request: { readonly updateMask?: FieldMask | undefined }, context: HandlerContext) =>
      run.asCaller(context, (p) =>
        input(request).pipe(
          Effect.flatMap(({ uid = "", ...patch }) => m.service.update(p, String(uid), patch, mask(request.updateMask))),
          Effect.map(m.encode)
        )),
    delete: (request: { readonly uid: string }, context: HandlerContext) =>
      run.asCaller(context, (p) => Effect.as(m.service.delete(p, request.uid), {}))
  }
}

/** The first of `fields` that is set, as the refusal of a field the engine does not support. */
const firstSet = (fields: Record<string, boolean>): Errors.InvalidArgument | undefined => {
  const set = Object.entries(fields).find(([, isSet]) => isSet)
  return set === undefined ? undefined : unsupported(set[0])
}

/** The proto's catalog tiers are the engine's with this prefix. */
const catalogTierPrefix = "CATALOG_TIER_"

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

/** The services served, every method of each: those without an engine feature answer `UNIMPLEMENTED`. */
export const served = [
  GroupsService,
  IdentitiesService,
  RolesService,
  RoleBindingsService,
  IdentityProvidersService,
  AccountAssociationsService,
  GroupInvitesService,
  ReposService,
  TagsService,
  AdvisoriesService,
  SecurityTokenService
] as const

/** The routes of every served service, over the engine. */
export const routes = Effect.gen(function*() {
  const engine = yield* EngineServices.services

  const encodeGroup = encoder(Wire.Group.v2, GroupSchema)
  const encodeTag = encoder(Wire.Tag.v2, TagSchema)
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
    /** `then`, unless the request sets a field the engine does not support; the caller is authenticated first. */
    const checked = <A>(
      context: HandlerContext,
      refusal: Errors.InvalidArgument | undefined,
      then: () => Promise<A>
    ): Promise<A> => refusal === undefined ? then() : run.asCaller(context, () => Effect.fail(refusal))

    const group = crud(run, {
      service: engine.groups,
      desc: GroupSchema,
      encode: encodeGroup,
      plural: "groups",
      field: "group"
    })
    router.service(GroupsService, {
      getGroup: group.get,
      listGroups: group.list,
      createGroup: (request, context) =>
        request.parent === ""
          ? run.asCaller(
            context,
            (p) =>
              body("group", GroupSchema, request.group).pipe(
                Effect.flatMap((json) => engine.groups.createRoot(p, json)),
                Effect.map(encodeGroup)
              )
          )
          : group.create(request, context),
      updateGroup: group.update,
      deleteGroup: group.delete
    })

    const identity = crud(run, {
      service: engine.identities,
      desc: IdentitySchema,
      encode: encoder(Wire.Identity.v2, IdentitySchema),
      plural: "identities",
      field: "identity"
    })
    const relationship = (request: { readonly identity?: MessageShape<typeof IdentitySchema> | undefined }) => {
      const chosen = request.identity?.relationship.case
      return firstSet({
        "identity.awsIdentity": chosen === "awsIdentity",
        "identity.servicePrincipal": chosen === "servicePrincipal"
      })
    }
    router.service(IdentitiesService, {
      getIdentity: identity.get,
      listIdentities: (request, context) =>
        checked(
          context,
          firstSet({ relationshipType: request.relationshipType !== 0 }),
          () => identity.list(request, context)
        ),
      createIdentity: (request, context) =>
        checked(context, relationship(request), () => identity.create(request, context)),
      updateIdentity: (request, context) =>
        checked(context, relationship(request), () => identity.update(request, context)),
      deleteIdentity: identity.delete
    })

    const role = crud(run, {
      service: engine.roles,
      desc: RoleSchema,
      encode: encoder(Wire.Role.v2, RoleSchema),
      plural: "roles",
      field: "role"
    })
    router.service(RolesService, {
      getRole: role.get,
      listRoles: role.list,
      createRole: role.create,
      updateRole: role.update,
      deleteRole: role.delete
    })

    const binding = crud(run, {
      service: engine.bindings,
      desc: RoleBindingSchema,
      // The proto also names the identity and the role by uid at the top level.
      encode: encoder(
        Wire.RoleBinding.v2,
        RoleBindingSchema,
        (b) => ({ ...b, identityUid: b.identity.uid, roleUid: b.role.uid })
      ),
      plural: "roleBindings",
      field: "roleBinding",
      // The REST body names them only there; nested references are output only.
      input: ({ group: _g, identity: _i, role: _r, ...json }) => json
    })
    router.service(RoleBindingsService, {
      getRoleBinding: binding.get,
      listRoleBindings: (request, context) =>
        checked(
          context,
          firstSet({ identity: request.identity !== "", group: request.group !== "", role: request.role !== "" }),
          () => binding.list(request, context)
        ),
      createRoleBinding: binding.create,
      updateRoleBinding: binding.update,
      deleteRoleBinding: binding.delete
    })

    const provider = crud(run, {
      service: engine.providers,
      desc: IdentityProviderSchema,
      encode: encoder(Wire.IdentityProvider.v2, IdentityProviderSchema),
      plural: "identityProviders",
      field: "identityProvider"
    })
    router.service(IdentityProvidersService, {
      getIdentityProvider: provider.get,
      listIdentityProviders: provider.list,
      createIdentityProvider: provider.create,
      updateIdentityProvider: provider.update,
      deleteIdentityProvider: provider.delete
    })

    const association = crud(run, {
      service: engine.associations,
      desc: AccountAssociationSchema,
      encode: encoder(Wire.AccountAssociation.v2, AccountAssociationSchema),
      plural: "accountAssociations",
      field: "accountAssociation"
    })
    router.service(AccountAssociationsService, {
      getAccountAssociation: association.get,
      listAccountAssociations: association.list,
      createAccountAssociation: association.create,
      updateAccountAssociation: association.update,
      deleteAccountAssociation: association.delete
    })

    const invite = crud(run, {
      service: engine.invites,
      desc: GroupInviteSchema,
      encode: encoder(Wire.GroupInvite.v2, GroupInviteSchema),
      plural: "groupInvites",
      field: "groupInvite",
      input: ({ role: _, ...json }) => json
    })
    router.service(GroupInvitesService, {
      getGroupInvite: invite.get,
      listGroupInvites: (request, context) =>
        checked(context, firstSet({ keyId: request.keyId !== "" }), () => invite.list(request, context)),
      createGroupInvite: invite.create,
      deleteGroupInvite: invite.delete
    })

    const repo = crud(run, {
      service: engine.repos,
      desc: RepoSchema,
      encode: encoder(Wire.Repo.v2, RepoSchema, (r) => ({ ...r, catalogTier: `${catalogTierPrefix}${r.catalogTier}` })),
      plural: "repos",
      field: "repo",
      input: (json) =>
        typeof json.catalogTier === "string"
          ? { ...json, catalogTier: json.catalogTier.replace(catalogTierPrefix, "") }
          : json
    })
    router.service(ReposService, {
      getRepo: repo.get,
      listRepos: repo.list,
      createRepo: repo.create,
      updateRepo: repo.update,
      deleteRepo: repo.delete
    })

    const tag = crud(run, {
      service: engine.tags,
      desc: TagSchema,
      encode: encodeTag,
      plural: "tags",
      field: "tag"
    })
    router.service(TagsService, {
      getTag: tag.get,
      listTags: (request, context) =>
        run.asCaller(context, (p) =>
          Effect.try({
            try: () =>
              request.updatedSince === undefined
                ? undefined
                : new Date(timestampMs(request.updatedSince)).toISOString(),
            catch: () => Errors.InvalidArgument.field("updatedSince", "is not a valid time")
          }).pipe(
            Effect.flatMap((updatedSince) =>
              engine.tags.list(p, { ...listOptions(request), digest: request.digest || undefined, updatedSince })
            ),
            Effect.map((page) => listResponse("tags", page, encodeTag))
          )),
      createTag: tag.create,
      deleteTag: tag.delete
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
        run.withBearer(context, (upstream) =>
          refusedUnless(firstSet({
            cap: request.cap.length > 0,
            scopes: request.scopes.length > 0,
            identityProvider: request.identityProvider !== ""
          })).pipe(
            Effect.zipRight(audience(request.aud)),
            Effect.flatMap((aud) =>
              engine.sts.exchange({ token: upstream, audience: aud, identity: request.identity })
            ),
            Effect.map(rawToken)
          )),
      exchangeRefreshToken: (request, context) =>
        run.withBearer(
          context,
          (refresh) =>
            refusedUnless(firstSet({ cap: request.cap.length > 0, scopes: request.scopes.length > 0 })).pipe(
              Effect.zipRight(audience(request.aud)),
              Effect.flatMap((aud) => engine.refreshTokens.exchange(refresh, aud)),
              Effect.map((refreshed) => ({
                token: rawToken(refreshed.token),
                refreshToken: rawToken(refreshed.refreshToken)
              }))
            )
        )
    })
  }
})
