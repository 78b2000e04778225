/**
 * Checking an account association (the protos' `CheckAccountAssociation`; docs/api.md §13): a live credential
 * exchange against the cloud's token service with a token of this server's, as the cloud's account association
 * (Chainguard's Terraform modules) trusts it: subject `canary:<group>`, for the role, service account or application
 * named `chainguard-canary` (Azure: the client id named `canary`), which holds no permissions.
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"

/** The clouds a check asks for, in the protos' enum spelling. */
export const ProviderType = Schema.Literal(
  "ACCOUNT_PROVIDER_TYPE_GOOGLE",
  "ACCOUNT_PROVIDER_TYPE_AMAZON",
  "ACCOUNT_PROVIDER_TYPE_AZURE"
).annotations({
  message: () => "must be ACCOUNT_PROVIDER_TYPE_GOOGLE, ACCOUNT_PROVIDER_TYPE_AMAZON or ACCOUNT_PROVIDER_TYPE_AZURE"
})
export type ProviderType = typeof ProviderType.Type

/** What a check takes, beside the association's uid. */
export const CheckAccountAssociation = Schema.Struct({
  providerType: Schema.propertySignature(ProviderType).annotations({ missingMessage: () => "is required" })
})
export type CheckAccountAssociation = typeof CheckAccountAssociation.Encoded

/** A check's outcome (`CheckStatus`). */
export const CheckStatus = Schema.Literal("READY", "NOT_READY")

/** What a check answers: ready, or not and why (`reason` a short code, `message` the cloud's words). */
export class CheckResult extends Schema.Class<CheckResult>("@arbor/core/CheckAccountAssociationResult")({
  status: CheckStatus,
  reason: Schema.String,
  message: Schema.String
}) {}

/** The name of the canary role (AWS), service account (Google Cloud) and client id (Azure) a check assumes. */
export const canary = "chainguard-canary"

/** The Google Cloud workload identity pool and provider the association made. */
export const googlePool = { pool: "chainguard-pool", provider: "chainguard-provider" } as const

/** Where the clouds' token services are: their public endpoints unless a deployment (or a test) says otherwise. */
export interface CloudEndpointsService {
  /** AWS STS, for `AssumeRoleWithWebIdentity`. */
  readonly amazonSts: string
  /** Google Cloud's Security Token Service, for the token exchange. */
  readonly googleSts: string
  /** Google Cloud's IAM Credentials API, to impersonate the canary service account. */
  readonly googleIamCredentials: string
  /** Microsoft Entra ID's login endpoint, for client credentials with a federated assertion. */
  readonly azureLogin: string
}

/** The clouds' token services. */
export class CloudEndpoints extends Context.Reference<CloudEndpoints>()("@arbor/core/CloudEndpoints", {
  defaultValue: (): CloudEndpointsService => ({
    amazonSts: "https://sts.amazonaws.com",
    googleSts: "https://sts.googleapis.com",
    googleIamCredentials: "https://iamcredentials.googleapis.com",
    azureLogin: "https://login.microsoftonline.com"
  })
}) {}
