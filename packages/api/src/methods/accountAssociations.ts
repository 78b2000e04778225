/**
 * The custom method of account associations: checking that a cloud accepts this server's tokens.
 */
import * as AccountAssociationCheck from "@arbor/core/AccountAssociationCheck"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { authenticated, jsonShape, UidPath, unchecked } from "../internal/declaration.js"
import * as Wire from "../Wire.js"

/** `CheckAccountAssociation` (docs/api.md §13): whether a cloud accepts this server's canary token. */
export const AccountAssociationChecks = authenticated(
  HttpApiGroup.make("accountAssociationChecks").add(
    // The path is `/accountAssociations/<uid>:checkAccountAssociation`; the router takes the method as a segment.
    HttpApiEndpoint.post("check", "/accountAssociations/:uid/checkAccountAssociation")
      .setPath(UidPath)
      .setPayload(unchecked<typeof AccountAssociationCheck.CheckAccountAssociation.Encoded>(
        "CheckAccountAssociationRequest",
        jsonShape(AccountAssociationCheck.CheckAccountAssociation)
      ))
      .addSuccess(Wire.AccountAssociationCheckResult)
      .annotate(OpenApi.Summary, "Check a cloud account association with a live credential exchange")
      .annotate(
        OpenApi.Description,
        "Signs a token of this server (subject canary:<group>) and exchanges it at the cloud's token service for " +
          "the association's canary role (AWS: role chainguard-canary; Google Cloud: pool chainguard-pool, provider " +
          "chainguard-provider, service account chainguard-canary; Azure: the client id named canary). " +
          "CHECK_STATUS_READY when the cloud accepts it; CHECK_STATUS_NOT_READY with the reason otherwise. " +
          "`account_associations.list` at the group."
      )
  ),
  "/iam/v2beta1",
  "Account association checks."
)
