/**
 * Groups (`@arbor/api`'s `methods/groups.ts`): the resource over v2 and v1, organizations, verified organizations,
 * organizations as code (export and apply) and the terms a group accepted; over gRPC, GroupsService and TermsService
 * (the reference protos have no export or apply).
 */
import { Organizations, OrganizationsAsCode, Terms, VerifiedOrganizations } from "@arbor/api/Api"
import { GroupsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/groups_pb"
import { TermsAcceptanceSchema, TermsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/terms_pb"
import * as Resources from "@arbor/api/Resources"
import * as Wire from "@arbor/api/Wire"
import { type Declarative, Errors, OrganizationDocument } from "@arbor/core"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Domain from "../internal/domain.js"
import { listOptions, listResponse, message, protoJsonOf, serveResource } from "../internal/grpc.js"
import { asCaller, envelope, serve, v1, writable } from "../internal/rest.js"

/**
 * The client secrets a request carries, as its caller read them (`secrets`, by `env:NAME` or `file:PATH`): never the
 * server's own environment or files, which a document could otherwise name.
 */
const sentWith =
  (secrets: unknown, plan: boolean) =>
  (from: OrganizationDocument.SecretFrom, field: string): Effect.Effect<string | undefined, Errors.InvalidArgument> => {
    const source = OrganizationDocument.sourceOf(from)
    const secret = typeof secrets === "object" && secrets !== null
      ? new Map(Object.entries(secrets)).get(source)
      : undefined
    // A plan without it leaves it unknown (not compared); an apply needs it.
    return typeof secret === "string" || plan
      ? Effect.succeed(typeof secret === "string" ? secret : undefined)
      : Errors.InvalidArgument.field(
        field,
        `${source} was not sent with the request (secrets): arbor reads it and sends it`
      )
  }

/**
 * An apply's request as it came: its document, which the engine decodes after the permission check, and how to apply
 * it. The body is read as what it may be (anything: its schema at the edge checks nothing, so that a caller without
 * access learns nothing from its errors), never as what it should be.
 */
const applyRequest = (payload: unknown): { readonly document: unknown; readonly options: Declarative.Options } => {
  const body = typeof payload === "object" && payload !== null && !Array.isArray(payload)
    ? new Map(Object.entries(payload))
    : new Map<string, unknown>()
  const validateOnly = body.get("validateOnly") === true
  const etag = body.get("etag")
  return {
    document: body.get("document"),
    options: {
      prune: body.get("prune") === true,
      validateOnly,
      etag: typeof etag === "string" ? etag : undefined,
      secretOf: sentWith(body.get("secrets"), validateOnly)
    }
  }
}

export const groups = Domain.make({
  rest: ({ declarative, groups, terms }) =>
    Layer.mergeAll(
      writable(Resources.groups, groups),
      v1(Resources.groupsV1, groups),
      HttpApiBuilder.group(
        serve(Organizations),
        "organizations",
        (h) => h.handle("create", ({ payload }) => asCaller((p) => groups.createRoot(p, payload)))
      ),
      HttpApiBuilder.group(serve(VerifiedOrganizations), "verifiedOrganizations", (h) =>
        h
          .handle("lookup", () => asCaller((p) => Effect.map(groups.lookupVerified(p), (group) => ({ group }))))
          .handle("checkEligibility", () => asCaller((p) => groups.checkEligibility(p)))
          .handle("requestAccess", ({ path }) => asCaller((p) => groups.requestAccess(p, path.uid)))),
      HttpApiBuilder.group(serve(OrganizationsAsCode), "organizationsAsCode", (h) =>
        h
          .handle(
            "export",
            ({ path }) => asCaller((p) => Effect.map(declarative.exportAt(p, path.uid), (document) => ({ document })))
          )
          .handle("apply", ({ path, payload }) => {
            const { document, options } = applyRequest(payload)
            return asCaller((p) => declarative.applyAt(p, path.uid, document, options))
          })
          .handle("applyOrganizations", ({ payload }) => {
            const { document, options } = applyRequest(payload)
            return asCaller((p) => declarative.apply(p, document, options))
          })),
      HttpApiBuilder.group(serve(Terms), "terms", (h) =>
        h
          .handle("accept", ({ path, payload }) => asCaller((p) => terms.accept(p, path.uid, payload)))
          .handle(
            "list",
            ({ path, urlParams }) =>
              asCaller((p) => terms.list(p, path.uid, urlParams)).pipe(Effect.map(envelope("termsAcceptances")))
          ))
    ),
  services: [GroupsService, TermsService],
  grpc: ({ groups, terms }, run, router) => {
    const groupJson = protoJsonOf(Resources.groups)
    router.rpc(
      GroupsService.method.lookupGroup,
      (_, context) =>
        run.asCaller(
          context,
          (p) =>
            Effect.map(groups.lookupVerified(p), (group) =>
              message(GroupsService.method.lookupGroup.output, { group: groupJson(group) }))
        )
    )
    router.rpc(
      GroupsService.method.checkEligibility,
      (_, context) => run.asCaller(context, (p) => groups.checkEligibility(p))
    )
    router.rpc(
      GroupsService.method.requestGroupAccess,
      (request, context) => run.asCaller(context, (p) => groups.requestAccess(p, request.groupUid))
    )
    // A group created without a parent is an organization, which REST creates at its own path.
    serveResource(router, run, GroupsService, Resources.groups, {
      ...groups,
      create: (p, parent, body) => parent === "" ? groups.createRoot(p, body) : groups.create(p, parent, body)
    })

    const acceptance = Schema.encodeSync(Wire.TermsAcceptance)
    router.service(TermsService, {
      acceptTerms: (request, context) =>
        run.asCaller(context, (p) =>
          Effect.map(
            terms.accept(p, request.group, { documentIds: request.documentIds }),
            ({ documentIds, group }) => ({ group, documentIds: [...documentIds] })
          )),
      listTermsAcceptances: (request, context) =>
        run.asCaller(context, (p) =>
          Effect.map(
            terms.list(p, request.group, listOptions({ ...request, uidp: undefined })),
            (page) =>
              listResponse("termsAcceptances", page, (a) => {
                const { uid: _, ...json } = acceptance(a)
                return message(TermsAcceptanceSchema, json)
              })
          ))
    })
  }
})
