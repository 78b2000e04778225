/**
 * Identity providers (`@arbor/api`'s `methods/identityProviders.ts`): the resource, its SCIM credentials, and its
 * group mappings with their batches; over gRPC, IdentityProvidersService and ExternalGroupRoleMappingsService.
 */
import * as Api from "@arbor/api/Api"
import { ExternalGroupRoleMappingsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/external_group_role_mappings_pb"
import { IdentityProvidersService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/identity_providers_pb"
import * as Resources from "@arbor/api/Resources"
import type { Errors, Principal } from "@arbor/core"
import type { DescMethodUnary, JsonObject, Message } from "@bufbuild/protobuf"
import type { HandlerContext } from "@connectrpc/connect"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Domain from "../internal/domain.js"
import { fieldsOf, message, protoJsonOf, serveResource, text } from "../internal/grpc.js"
import { asCaller, creatable, serve, writable } from "../internal/rest.js"

export const identityProviders = Domain.make({
  rest: ({ mappings, providers, scim }) =>
    Layer.mergeAll(
      writable(Resources.identityProviders, providers),
      HttpApiBuilder.group(serve(Api.ScimCredentials), "scimCredentials", (h) =>
        h
          .handle("generate", ({ path, payload }) => asCaller((p) => scim.generateToken(p, path.uid, payload)))
          .handle("regenerate", ({ path, payload }) => asCaller((p) => scim.regenerateToken(p, path.uid, payload)))
          .handle("revoke", ({ path }) => asCaller((p) => scim.revokeToken(p, path.uid)))
          .handle("setEnabled", ({ path, payload }) => asCaller((p) => scim.setEnabled(p, path.uid, payload)))),
      creatable(Resources.externalGroupRoleMappings, mappings),
      HttpApiBuilder.group(
        serve(Api.MappingBatches),
        "mappingBatches",
        (h) => h.handle("delete", ({ payload }) => asCaller((p) => mappings.batchDelete(p, payload)))
      )
    ),
  services: [IdentityProvidersService, ExternalGroupRoleMappingsService],
  grpc: ({ mappings, providers, scim }, run, router) => {
    // The SCIM methods' requests are their REST bodies (proto3 JSON) beside the provider's uid; answers REST's.
    const scimMethod = <A, I>(
      method: DescMethodUnary,
      answer: Schema.Schema<A, I>,
      operation: (p: Principal.Principal, provider: string, body: JsonObject) => Effect.Effect<A, Errors.ArborError>
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
    scimMethod(scimMethods.generateScimToken, Api.ScimTokenIssued, scim.generateToken)
    scimMethod(scimMethods.regenerateScimToken, Api.ScimTokenRegenerated, scim.regenerateToken)
    scimMethod(scimMethods.revokeScimToken, Api.ScimTokenRevoked, (p, provider) => scim.revokeToken(p, provider))
    scimMethod(scimMethods.setScimEnabled, Api.ScimEnabledSet, scim.setEnabled)
    serveResource(router, run, IdentityProvidersService, Resources.identityProviders, providers)

    // A batch's request is the REST body; each mapping leaves as the resource does.
    const batchDelete = ExternalGroupRoleMappingsService.method.batchDeleteExternalGroupRoleMappings
    const mappingJson = protoJsonOf(Resources.externalGroupRoleMappings)
    router.rpc(
      batchDelete,
      (request, context) =>
        run.asCaller(context, (p) =>
          Effect.map(
            mappings.batchDelete(p, { parent: request.parent, names: request.names }),
            (deleted) =>
              message(batchDelete.output, {
                parent: deleted.parent,
                externalGroupRoleMappings: deleted.externalGroupRoleMappings.map(mappingJson)
              })
          ))
    )
    serveResource(router, run, ExternalGroupRoleMappingsService, Resources.externalGroupRoleMappings, mappings)
  }
})
