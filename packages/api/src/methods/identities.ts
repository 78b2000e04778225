/**
 * The custom methods of identities: a person's uid by lookup, and the caller's own metadata.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated } from "../internal/declaration.js"
import * as Wire from "../Wire.js"

/** `GET /iam/v2beta1/identities:lookupIdentity`: a person's uid, before or after their first sign-in. */
export const IdentityLookup = authenticated(
  HttpApiGroup.make("identityLookup").add(
    // `::` is a literal `:` to the router: the path is `/identities:lookupIdentity`.
    HttpApiEndpoint.get("lookup", "/identities::lookupIdentity")
      .setUrlParams(Schema.Struct({
        issuer: Schema.optionalWith(Schema.String, { default: () => "" }).annotations({
          description: "the OpenID issuer the person signs in with"
        }),
        subject: Schema.optionalWith(Schema.String, { default: () => "" }).annotations({
          description: "their subject at that issuer"
        })
      }))
      .addSuccess(Schema.Struct({ uid: Schema.String }))
      .annotate(OpenApi.Summary, "Look up a person's identity uid")
      .annotate(
        OpenApi.Description,
        "The uid of the person who signs in with this issuer and subject: theirs once they have signed in, and the " +
          "one they will get before (a person's uid is derived from the two). Any signed-in caller may ask."
      )
  ),
  "/iam/v2beta1",
  "Identities by their sign-in."
)

/** `PATCH /iam/v2beta1/identities:updateIdentityMetadata`: the caller's own metadata. */
export const OwnMetadata = authenticated(
  HttpApiGroup.make("ownMetadata").add(
    // `::` is a literal `:` to the router: the path is `/identities:updateIdentityMetadata`.
    HttpApiEndpoint.patch("update", "/identities::updateIdentityMetadata")
      .setPayload(Schema.Struct({
        identityMetadata: Schema.optional(Schema.Unknown).annotations({
          description: "the fields to set: company, updatesOptIn, product, jobTitle, utm*, latest*Url, selfServe"
        }),
        updateMask: Schema.optional(Schema.String).annotations({
          description: "the fields to change, comma-separated (`*`: all of them); without it, those present"
        })
      }))
      .addSuccess(Wire.IdentityMetadata)
      .annotate(OpenApi.Summary, "Update your own identity's metadata")
      .annotate(
        OpenApi.Description,
        "Sets profile fields on the calling identity (any identity, on itself only; not with a narrowed token) and " +
          "answers them with the identity's name. Strings up to 256 characters, URLs up to 2048."
      )
  ),
  "/iam/v2beta1",
  "The calling identity's own metadata."
)
