/**
 * The custom method of invites: redeeming a code.
 */
import * as GroupInvite from "@arbor/core/GroupInvite"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { authenticated, jsonShape, unchecked } from "../internal/declaration.js"
import * as Wire from "../Wire.js"

/** `POST /iam/v2beta1/groupInvites:redeem`: the AIP-136 custom method of invites. */
export const InviteCodes = authenticated(
  HttpApiGroup.make("inviteCodes").add(
    // `::` is a literal `:` to the router: the path is `/groupInvites:redeem`.
    HttpApiEndpoint.post("redeem", "/groupInvites::redeem")
      .setPayload(unchecked<typeof GroupInvite.RedeemGroupInvite.Encoded>(
        "RedeemGroupInvite",
        jsonShape(GroupInvite.RedeemGroupInvite)
      ))
      .addSuccess(Wire.RoleBinding.v2)
      .annotate(OpenApi.Summary, "Redeem an invite code")
      .annotate(
        OpenApi.Description,
        "Binds the calling identity to the invite's role in its group. The code works once, before it expires, and " +
          "for the email the invite names, if it names one."
      )
  ),
  "/iam/v2beta1",
  "Invite codes: redeemed by the identity they bind."
)
