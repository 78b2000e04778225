/**
 * The registry's read model and advisories (`@arbor/api`'s `methods/registry.ts`): repos (v2 and v1) and their
 * READMEs, tags (v2 and v1), advisories; over gRPC, ReposService, TagsService and AdvisoriesService, whose advisory
 * message is mapped here.
 */
import { RepoReadmes } from "@arbor/api/Api"
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
import * as Resources from "@arbor/api/Resources"
import * as Wire from "@arbor/api/Wire"
import type { Advisory } from "@arbor/core/Advisory"
import { create, type MessageInitShape } from "@bufbuild/protobuf"
import { timestampFromMs } from "@bufbuild/protobuf/wkt"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Domain from "../internal/domain.js"
import {
  firstSet,
  listOptions,
  listResponse,
  message,
  nonEmpty,
  refusedUnless,
  serveResource
} from "../internal/grpc.js"
import { asCaller, readable, readHandlers, serve, v1 } from "../internal/rest.js"

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

export const registry = Domain.make({
  rest: ({ advisories, repos, tags }) => {
    // Their lists take queries of their own, which the framework's request types cannot carry through `readable`.
    const tag = readHandlers(Resources.tags, tags)
    const advisory = readHandlers(Resources.advisories, advisories)
    return Layer.mergeAll(
      readable(Resources.repos, repos),
      v1(Resources.reposV1, repos),
      HttpApiBuilder.group(serve(RepoReadmes), "repoReadmes", (h) =>
        h
          .handle("get", ({ path }) => asCaller((p) => repos.readme(p, path.uid)))
          .handle("update", ({ path, payload, urlParams }) =>
            asCaller((p) =>
              repos.updateReadme(p, path.uid, payload, urlParams.updateMask)
            ))),
      HttpApiBuilder.group(
        serve(Resources.tags.group),
        "tags",
        (h) => h.handle("list", tag.list).handle("get", tag.get)
      ),
      v1(Resources.tagsV1, tags),
      HttpApiBuilder.group(
        serve(Resources.advisories.group),
        "advisories",
        (h) => h.handle("list", advisory.list).handle("get", advisory.get)
      )
    )
  },
  services: [ReposService, TagsService, AdvisoriesService],
  grpc: ({ advisories, repos, tags }, run, router) => {
    const readmeJson = Schema.encodeSync(Wire.RepoReadme)
    const readme = (value: Parameters<typeof readmeJson>[0]) => message(RepoReadmeSchema, readmeJson(value))
    router.rpc(
      ReposService.method.getRepoReadme,
      (request, context) => run.asCaller(context, (p) => Effect.map(repos.readme(p, request.uid), readme))
    )
    router.rpc(
      ReposService.method.updateRepoReadme,
      (request, context) =>
        run.asCaller(context, (p) =>
          Effect.map(
            repos.updateReadme(
              p,
              request.repoReadme?.uid ?? "",
              // A message leaves out an empty content: only a mask naming it clears the README.
              request.repoReadme?.content === "" ? {} : { content: request.repoReadme?.content },
              request.updateMask?.paths.join(",") || undefined
            ),
            readme
          ))
    )
    serveResource(router, run, ReposService, Resources.repos, repos)
    serveResource(router, run, TagsService, Resources.tags, tags)

    router.service(AdvisoriesService, {
      getAdvisory: (request, context) =>
        run.asCaller(context, (p) => Effect.map(advisories.get(p, request.uid), advisory)),
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
            Effect.zipRight(advisories.list(p, {
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
  }
})
