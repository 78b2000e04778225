/**
 * The AccountAssociationChecks service: whether an account association works, by a live credential exchange with
 * the cloud's token service (docs/api.md §13). Outbound requests go through `IssuerKeys`, within its limits (size,
 * time) and `Egress`'s address checks; the endpoints are `AccountAssociationCheck.CloudEndpoints`.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Errors from "../engine/Errors.js"
import { operation } from "../engine/internal/tracing.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import { IssuerKeys } from "../tokens/internal/issuerKeys.js"
import { TokenIssuer } from "../tokens/TokenIssuer.js"
import type * as AccountAssociation from "./AccountAssociation.js"
import * as Check from "./AccountAssociationCheck.js"
import { AccountAssociations } from "./AccountAssociations.js"
import type { Principal } from "./Principal.js"

const ready = new Check.CheckResult({ status: "READY", reason: "", message: "" })

const notReady = (reason: string, message: string) => new Check.CheckResult({ status: "NOT_READY", reason, message })

const notConfigured = (message: string) => notReady("not configured", message)

/** The text between `<tag>` and `</tag>` in an AWS XML answer, if any. */
const xmlText = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1]

/** An OAuth error answer (`error`, `error_description`) or Google's (`error.message`). */
const ErrorAnswer = Schema.parseJson(Schema.Struct({
  error: Schema.optional(Schema.Union(Schema.String, Schema.Struct({ message: Schema.optional(Schema.String) }))),
  error_description: Schema.optional(Schema.String)
}))

/** An error answer's words; its first 500 characters when it is not one. */
const errorOf = (body: string): string =>
  Option.match(Schema.decodeUnknownOption(ErrorAnswer)(body), {
    onNone: () => body.slice(0, 500),
    onSome: ({ error, error_description }) =>
      [typeof error === "string" ? error : error?.message, error_description].filter((v) => v !== undefined)
        .join(": ") || body.slice(0, 500)
  })

/** A token exchange's access token. */
const accessTokenOf = Schema.decodeUnknownOption(Schema.parseJson(Schema.Struct({ access_token: Schema.String })))

/** The AccountAssociationChecks service: whether an account association works with its cloud (`CheckAccountAssociation`). */
export interface AccountAssociationChecksService {
  /**
   * Whether the association of group `uid` works with cloud `input.providerType` (`account_associations.list`
   * there): READY once the cloud accepted this server's canary token, else NOT_READY and why. An association
   * that names no such account is NOT_READY (`not configured`); none at all is NOT_FOUND.
   */
  readonly check: (
    principal: Principal,
    uid: string,
    input: unknown
  ) => Effect.Effect<Check.CheckResult, Errors.ReadFailure>
}

/** Account association checks. */
export class AccountAssociationChecks
  extends Effect.Service<AccountAssociationChecks>()("@arbor/core/AccountAssociationChecks", {
    effect: Effect.gen(function*() {
      const associations = yield* AccountAssociations
      const tokens = yield* TokenIssuer
      const outbound = yield* IssuerKeys
      const clouds = yield* Check.CloudEndpoints

      /** Sends `request` to a cloud; an unreachable cloud is a reason the association is not ready. */
      const send = (cloud: string, request: HttpClientRequest.HttpClientRequest) =>
        Effect.either(outbound.request(cloud, request))

      const unreachable = (detail: string) => notReady("error exchanging credentials", detail)

      /** AWS: `AssumeRoleWithWebIdentity` on the account's canary role. */
      const amazon = (group: Uid.Uid, account: string) =>
        Effect.gen(function*() {
          const token = yield* tokens.signCanary(group, "amazon")
          const answer = yield* send(
            "amazon",
            HttpClientRequest.post(`${clouds.amazonSts}/`).pipe(
              HttpClientRequest.bodyUrlParams({
                Action: "AssumeRoleWithWebIdentity",
                Version: "2011-06-15",
                RoleArn: `arn:aws:iam::${account}:role/${Check.canary}`,
                RoleSessionName: "arbor-check",
                DurationSeconds: "900",
                WebIdentityToken: token
              })
            )
          )
          if (answer._tag === "Left") return unreachable(answer.left.detail)
          const { body, status } = answer.right
          if (status === 200 && body.includes("AssumeRoleWithWebIdentityResult")) return ready
          const code = xmlText(body, "Code") ?? `HTTP ${status}`
          return notReady("error exchanging credentials", `${code}: ${xmlText(body, "Message") ?? ""}`.trim())
        })

      /** Google Cloud: the token exchange at the pool's provider, then impersonating the canary service account. */
      const google = (group: Uid.Uid, projectId: string, projectNumber: string) =>
        Effect.gen(function*() {
          if (projectNumber === "") return notConfigured("the association's Google Cloud project has no projectNumber")
          const token = yield* tokens.signCanary(group, "google")
          const exchanged = yield* send(
            "google",
            HttpClientRequest.post(`${clouds.googleSts}/v1/token`).pipe(
              HttpClientRequest.bodyUnsafeJson({
                grantType: "urn:ietf:params:oauth:grant-type:token-exchange",
                audience: `//iam.googleapis.com/projects/${projectNumber}/locations/global/workloadIdentityPools/` +
                  `${Check.googlePool.pool}/providers/${Check.googlePool.provider}`,
                scope: "https://www.googleapis.com/auth/cloud-platform",
                requestedTokenType: "urn:ietf:params:oauth:token-type:access_token",
                subjectTokenType: "urn:ietf:params:oauth:token-type:jwt",
                subjectToken: token
              })
            )
          )
          if (exchanged._tag === "Left") return unreachable(exchanged.left.detail)
          if (exchanged.right.status !== 200) {
            return notReady("error exchanging credentials", errorOf(exchanged.right.body))
          }
          const federated = accessTokenOf(exchanged.right.body)
          if (Option.isNone(federated)) {
            return notReady("error exchanging credentials", "the answer holds no access token")
          }
          const impersonated = yield* send(
            "google",
            HttpClientRequest.post(
              `${clouds.googleIamCredentials}/v1/projects/-/serviceAccounts/` +
                `${encodeURIComponent(`${Check.canary}@${projectId}.iam.gserviceaccount.com`)}:generateAccessToken`
            ).pipe(
              HttpClientRequest.bearerToken(federated.value.access_token),
              HttpClientRequest.bodyUnsafeJson({ scope: ["https://www.googleapis.com/auth/cloud-platform"] })
            )
          )
          if (impersonated._tag === "Left") return unreachable(impersonated.left.detail)
          return impersonated.right.status === 200
            ? ready
            : notReady("error impersonating the canary service account", errorOf(impersonated.right.body))
        })

      /** Azure: client credentials for the `canary` client id, with this server's token as its assertion. */
      const azure = (group: Uid.Uid, tenantId: string, clientId: string | undefined) =>
        Effect.gen(function*() {
          if (clientId === undefined) return notConfigured("the association's Azure clientIds name no \"canary\"")
          const token = yield* tokens.signCanary(group, "api://AzureADTokenExchange")
          const answer = yield* send(
            "azure",
            HttpClientRequest.post(`${clouds.azureLogin}/${tenantId}/oauth2/v2.0/token`).pipe(
              HttpClientRequest.bodyUrlParams({
                grant_type: "client_credentials",
                client_id: clientId,
                client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                client_assertion: token,
                scope: "https://management.azure.com/.default"
              })
            )
          )
          if (answer._tag === "Left") return unreachable(answer.left.detail)
          return answer.right.status === 200
            ? ready
            : notReady("error exchanging credentials", errorOf(answer.right.body))
        })

      const service: AccountAssociationChecksService = {
        check: Effect.fnUntraced(function*(principal: Principal, uid: string, input: unknown) {
          const group = yield* Uid.parse(uid, "uid")
          const association: AccountAssociation.AccountAssociation = yield* associations.get(principal, group)
          const { providerType } = yield* Validation.decodeRequest(Check.CheckAccountAssociation)(input)
          switch (providerType) {
            case "ACCOUNT_PROVIDER_TYPE_AMAZON":
              return association.amazon == null
                ? notConfigured("the association names no AWS account")
                : yield* amazon(group, association.amazon.account)
            case "ACCOUNT_PROVIDER_TYPE_GOOGLE":
              return association.google == null
                ? notConfigured("the association names no Google Cloud project")
                : yield* google(group, association.google.projectId, association.google.projectNumber ?? "")
            case "ACCOUNT_PROVIDER_TYPE_AZURE":
              return association.azure == null
                ? notConfigured("the association names no Azure tenant")
                : yield* azure(group, association.azure.tenantId, association.azure.clientIds?.canary)
          }
        }, operation("AccountAssociationChecks.check"))
      }
      return service
    }),
    dependencies: [IssuerKeys.Default]
  })
{}
