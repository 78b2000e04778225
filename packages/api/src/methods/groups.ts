/**
 * The custom methods of groups: organizations, verified organizations and the terms a group accepted.
 */
import * as TermsAcceptance from "@arbor/core/TermsAcceptance"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import * as Schema from "effect/Schema"
import { authenticated, jsonShape, UidPath, unchecked } from "../internal/declaration.js"
import * as ListQuery from "../ListQuery.js"
import * as Resources from "../Resources.js"
import * as Wire from "../Wire.js"

/** `POST /iam/v2beta1/groups`: an organization, a group without a parent. */
export const Organizations = authenticated(
  HttpApiGroup.make("organizations").add(
    HttpApiEndpoint.post("create", "/groups")
      .setPayload(Resources.groups.body.create)
      .addSuccess(Wire.Group.v2)
      .annotate(OpenApi.Summary, "Create an organization (platform admins)")
      .annotate(
        OpenApi.Description,
        "Creates a root group. Only the platform admins (ARBOR_PLATFORM_ADMINS) may; anyone else is PERMISSION_DENIED."
      )
  ),
  "/iam/v2beta1",
  "Organizations: the root groups, created by platform admins."
)

/** Verified organizations (docs/api.md §13): found and asked for access by people at their domain. */
export const VerifiedOrganizations = authenticated(
  HttpApiGroup.make("verifiedOrganizations")
    .add(
      // `::` is a literal `:` to the router: the path is `/groups:lookupGroup`.
      HttpApiEndpoint.get("lookup", "/groups::lookupGroup")
        .addSuccess(Schema.Struct({ group: Wire.Group.v2 }))
        .annotate(OpenApi.Summary, "Find the verified organization of your email's domain")
        .annotate(
          OpenApi.Description,
          "The verified organization named by the domain of the caller's email, as the server's own provider " +
            "verified it. NOT_FOUND when there is none, when the caller is not eligible (no verified email, a free " +
            "mail domain, a narrowed token) or anything else: the cases cannot be told apart."
        )
    )
    .add(
      // `::` is a literal `:` to the router: the path is `/groups:checkEligibility`.
      HttpApiEndpoint.get("checkEligibility", "/groups::checkEligibility")
        .addSuccess(Schema.Struct({ eligible: Schema.Boolean }))
        .annotate(OpenApi.Summary, "Whether your email's domain may look for its organization")
        .annotate(
          OpenApi.Description,
          "True when the caller has an email the server's own provider verified, at a domain that is not a free " +
            "mail service, and signed in with a token that is not narrowed. It says nothing of whether an " +
            "organization is found."
        )
    )
    .add(
      // The path is `/groups/<uid>:requestGroupAccess`; the router takes the custom method as a segment.
      HttpApiEndpoint.post("requestAccess", "/groups/:uid/requestGroupAccess")
        .setPath(UidPath)
        .addSuccess(Schema.Struct({}))
        .annotate(OpenApi.Summary, "Ask a verified organization's owners for access")
        .annotate(
          OpenApi.Description,
          "Records the request in the organization's change log, where its owners' subscriptions and audit trail " +
            "see it. NOT_FOUND unless the uid is the verified organization LookupGroup finds for the caller; " +
            "RESOURCE_EXHAUSTED (429) when the caller asked the same organization within the last day."
        )
    ),
  "/iam/v2beta1",
  "Verified organizations: found by people at their domain."
)

/** The legal documents a group has accepted (the protos' TermsService; docs/api.md §13). */
export const Terms = authenticated(
  HttpApiGroup.make("terms")
    .add(
      HttpApiEndpoint.post("accept", "/terms/:uid")
        .setPath(UidPath)
        .setPayload(unchecked<typeof TermsAcceptance.AcceptTerms.Encoded>(
          "AcceptTerms",
          jsonShape(TermsAcceptance.AcceptTerms)
        ))
        .addSuccess(Schema.Struct({ group: Wire.Uid, documentIds: Schema.Array(Schema.String) }))
        .annotate(OpenApi.Summary, "Accept legal documents for a group")
        .annotate(
          OpenApi.Description,
          "Records that the group accepts each document (`terms.accept` there). A document the group has accepted " +
            "stays accepted as it was; the answer names every document of the request."
        )
    )
    .add(
      HttpApiEndpoint.get("list", "/terms/:uid")
        .setPath(UidPath)
        .setUrlParams(ListQuery.ListQuery)
        .addSuccess(Wire.listEnvelope("termsAcceptances", Wire.TermsAcceptance))
        .annotate(OpenApi.Summary, "List the documents a group has accepted")
        .annotate(
          OpenApi.Description,
          "The acceptances of the group and of the groups above it (`terms.list` at the group), oldest first."
        )
    ),
  "/iam/v2beta1",
  "Terms: the legal documents each group has accepted."
)

/** A change of a plan, as the API answers it. */
const Change = Schema.Struct({
  action: Schema.Literal("create", "update", "delete"),
  kind: Schema.Literal(
    "organization",
    "folder",
    "role",
    "identity",
    "binding",
    "identityProvider",
    "mapping",
    "subscription",
    "decisions"
  ),
  path: Schema.String,
  detail: Schema.optional(Schema.String)
})

/** What an apply takes: the document, and how to apply it. */
const ApplyPayload = unchecked<{
  readonly document: unknown
  readonly prune?: boolean
  readonly validateOnly?: boolean
  readonly etag?: string
  readonly secrets?: { readonly [source: string]: string }
}>(
  "ApplyOrganization",
  {
    type: "object",
    required: ["document"],
    properties: {
      document: {
        type: "object",
        description:
          "the document (`{ organizations: { <name>: … } }`, docs/api.md); at `groups/<uid>:apply`, that organization only"
      },
      prune: { type: "boolean", description: "delete what the document leaves out" },
      validateOnly: { type: "boolean", description: "answer the plan without applying it (AIP-163)" },
      etag: {
        type: "string",
        description: "a plan's etag: apply only if nothing the plan read changed since (else 409 ABORTED)"
      },
      secrets: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "the client secrets the document's secretFrom names, as read by the caller: by " +
          "`env:NAME` or `file:PATH` (the server never reads its own environment or files for a request)"
      }
    }
  }
)

/** What an apply answers: the plan, each change by path, and the etag of what it read. */
const Applied = Schema.Struct({ changes: Schema.Array(Change), etag: Schema.String })

/** IAM as code (docs/api.md, "IAM as code"): an organization as a document, exported, planned and applied. */
export const OrganizationsAsCode = authenticated(
  HttpApiGroup.make("organizationsAsCode")
    .add(
      // The path is `/groups/<uid>:export`; the router takes the custom method as a segment.
      HttpApiEndpoint.get("export", "/groups/:uid/export")
        .setPath(UidPath)
        .addSuccess(Schema.Struct({ document: Schema.Unknown }))
        .annotate(OpenApi.Summary, "Export an organization as a document")
        .annotate(
          OpenApi.Description,
          "The organization as a document of names and paths (its folders, custom roles, identities, role " +
            "bindings, identity providers and their group mappings, subscriptions; a client secret as the variable to " +
            "supply it in), as the caller may list them, in a stable order: exported, applied to an empty server and " +
            "exported again, it is the same."
        )
    )
    .add(
      // The path is `/groups/<uid>:apply`.
      HttpApiEndpoint.post("apply", "/groups/:uid/apply")
        .setPath(UidPath)
        .setPayload(ApplyPayload)
        .addSuccess(Applied)
        .annotate(OpenApi.Summary, "Make an organization as a document says, in one transaction")
        .annotate(
          OpenApi.Description,
          "Plans the document against the organization (each create, update and delete by path) and applies " +
            "every change in one transaction, each as if the caller made it by hand (no escalation; names and " +
            "patterns checked); validateOnly makes them all and undoes them. prune deletes what the document leaves out, never the " +
            "caller's own owner binding nor the last owner. A bad document is INVALID_ARGUMENT naming its path."
        )
    )
    .add(
      // The path is `/groups:apply`.
      HttpApiEndpoint.post("applyOrganizations", "/groups::apply")
        .setPayload(ApplyPayload)
        .addSuccess(Applied)
        .annotate(OpenApi.Summary, "Make organizations as a document says, creating those it names that do not exist")
        .annotate(
          OpenApi.Description,
          "As `groups/<uid>:apply`, for a document of any organizations, including ones that do not exist yet: " +
            "creating an organization is for platform admins (ARBOR_PLATFORM_ADMINS), as `POST /groups` is."
        )
    ),
  "/iam/v2beta1",
  "IAM as code: organizations exported, planned and applied as documents."
)
