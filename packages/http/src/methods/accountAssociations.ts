/**
 * Account associations (`@arbor/api`'s `methods/accountAssociations.ts`): the resource, and the live check of a
 * group's cloud accounts; over gRPC, AccountAssociationsService.
 */
import { AccountAssociationChecks } from "@arbor/api/Api"
import { AccountAssociationsService } from "@arbor/api/proto/chainguard/platform/iam/v2beta1/account_associations_pb"
import * as Resources from "@arbor/api/Resources"
import * as Wire from "@arbor/api/Wire"
import { HttpApiBuilder } from "@effect/platform"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Domain from "../internal/domain.js"
import { fieldsOf, message, serveResource, text } from "../internal/grpc.js"
import { asCaller, serve, writable } from "../internal/rest.js"

export const accountAssociations = Domain.make({
  rest: ({ associations, checks }) =>
    Layer.merge(
      writable(Resources.accountAssociations, associations),
      HttpApiBuilder.group(
        serve(AccountAssociationChecks),
        "accountAssociationChecks",
        (h) => h.handle("check", ({ path, payload }) => asCaller((p) => checks.check(p, path.uid, payload)))
      )
    ),
  services: [AccountAssociationsService],
  grpc: ({ associations, checks }, run, router) => {
    const check = AccountAssociationsService.method.checkAccountAssociation
    const checked = Schema.encodeSync(Wire.AccountAssociationCheckResult)
    router.rpc(check, (request, context) =>
      run.asCaller(context, (p) =>
        fieldsOf(check.input, request, "request").pipe(
          Effect.flatMap(({ uid, ...body }) => checks.check(p, text(uid), body)),
          Effect.map((result) => message(check.output, checked(result)))
        )))
    serveResource(router, run, AccountAssociationsService, Resources.accountAssociations, associations)
  }
})
