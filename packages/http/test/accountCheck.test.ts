/**
 * CheckAccountAssociation (docs/api.md §13) against stand-ins for the clouds' token services on loopback, each
 * trusting the server's canary token as the clouds' account associations do: it verifies the token against the
 * server's JWKS, its issuer, its audience and its subject `canary:<group>` before it answers.
 */
import * as jose from "jose"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

/** What the stand-in clouds trust: the group whose canary may assume, and the accounts set up for it. */
const trusted = {
  group: "",
  account: "111111111111",
  project: "acme-prod",
  projectNumber: "1234567890",
  tenant: "",
  client: ""
}
trusted.tenant = "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"
trusted.client = "6b0d5d1a-3c0e-4d2b-9a39-0d6c7e7b9a11"

let server: Awaited<ReturnType<typeof startServer>>
let clouds: Server
let owner: { org: string; identity: string; token: string }

const bodyOf = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = ""
    request.on("data", (chunk) => (text += chunk)).on("end", () => resolve(text))
  })

/** The canary token's claims if the server signed it for `audience` and the trusted group; undefined otherwise. */
const canary = async (token: string | null | undefined, audience: string) => {
  try {
    const jwks = jose.createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`))
    const { payload } = await jose.jwtVerify(token ?? "", jwks, { issuer: server.config.authUrl, audience })
    return payload.sub === `canary:${trusted.group}` ? payload : undefined
  } catch {
    return undefined
  }
}

/** AWS STS, Google's STS and IAM Credentials, and Entra ID's token endpoint, as far as a check calls them. */
const startClouds = async () => {
  const cloudServer = createServer(async (request, response) => {
    const body = await bodyOf(request)
    const answer = (status: number, type: string, text: string) =>
      response.writeHead(status, { "content-type": type }).end(text)
    const url = new URL(request.url ?? "/", "http://clouds")
    if (url.pathname === "/aws/") {
      const form = new URLSearchParams(body)
      const ok = form.get("Action") === "AssumeRoleWithWebIdentity" &&
        form.get("RoleArn") === `arn:aws:iam::${trusted.account}:role/chainguard-canary` &&
        (await canary(form.get("WebIdentityToken"), "amazon")) !== undefined
      return ok
        ? answer(
          200,
          "text/xml",
          "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult/></AssumeRoleWithWebIdentityResponse>"
        )
        : answer(
          403,
          "text/xml",
          "<ErrorResponse><Error><Code>AccessDenied</Code><Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message></Error></ErrorResponse>"
        )
    }
    if (url.pathname === "/google-sts/v1/token") {
      const exchange = JSON.parse(body)
      const ok = exchange.audience ===
          `//iam.googleapis.com/projects/${trusted.projectNumber}/locations/global/workloadIdentityPools/chainguard-pool/providers/chainguard-provider` &&
        (await canary(exchange.subjectToken, "google")) !== undefined
      return ok
        ? answer(200, "application/json", JSON.stringify({ access_token: "federated", token_type: "Bearer" }))
        : answer(
          400,
          "application/json",
          JSON.stringify({ error: "invalid_grant", error_description: "The audience in ID Token does not match" })
        )
    }
    if (url.pathname.startsWith("/google-iam/v1/projects/-/serviceAccounts/")) {
      const ok = request.headers.authorization === "Bearer federated" &&
        decodeURIComponent(url.pathname).endsWith(
          `/chainguard-canary@${trusted.project}.iam.gserviceaccount.com:generateAccessToken`
        )
      return ok
        ? answer(200, "application/json", JSON.stringify({ accessToken: "ya29", expireTime: "2030-01-01T00:00:00Z" }))
        : answer(
          403,
          "application/json",
          JSON.stringify({ error: { code: 403, message: "Permission 'iam.serviceAccounts.getAccessToken' denied" } })
        )
    }
    if (url.pathname === `/entra/${trusted.tenant}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(body)
      const ok = form.get("client_id") === trusted.client &&
        (await canary(form.get("client_assertion"), "api://AzureADTokenExchange")) !== undefined
      return ok
        ? answer(200, "application/json", JSON.stringify({ access_token: "entra", token_type: "Bearer" }))
        : answer(
          400,
          "application/json",
          JSON.stringify({
            error: "invalid_client",
            error_description: "AADSTS700213: No matching federated identity record found"
          })
        )
    }
    answer(404, "text/plain", "no such endpoint")
  })
  await new Promise<void>((resolve) => cloudServer.listen(0, "127.0.0.1", () => resolve()))
  return cloudServer
}

beforeAll(async () => {
  clouds = await startClouds()
  const cloud = `http://127.0.0.1:${(clouds.address() as AddressInfo).port}`
  server = await startServer(await freePort(), {
    cloudEndpoints: {
      amazonSts: `${cloud}/aws`,
      googleSts: `${cloud}/google-sts`,
      googleIamCredentials: `${cloud}/google-iam`,
      azureLogin: `${cloud}/entra`
    }
  })
  owner = await server.runtime.runPromise(member("checked"))
  trusted.group = owner.org
}, 30_000)

afterAll(async () => {
  await server?.close()
  await new Promise((resolve) => clouds?.close(resolve))
})

const check = (providerType: string, token = owner.token) =>
  fetchJson(server.url, "POST", `/iam/v2beta1/accountAssociations/${owner.org}:checkAccountAssociation`, token, {
    providerType
  })

describe("CheckAccountAssociation", () => {
  it("READY for each cloud that trusts the canary token; NOT_READY, with the cloud's words, for one that does not", async () => {
    const association = (amazon: string, project: string, client: string) =>
      fetchJson(server.url, "PATCH", `/iam/v2beta1/accountAssociations/${owner.org}`, owner.token, {
        name: "clouds",
        amazon: { account: amazon },
        google: { projectId: project, projectNumber: trusted.projectNumber },
        azure: { tenantId: trusted.tenant, clientIds: { canary: client } }
      })
    const created = await fetchJson(server.url, "POST", `/iam/v2beta1/accountAssociations/${owner.org}`, owner.token, {
      name: "clouds"
    })
    assert.strictEqual(created.status, 200, JSON.stringify(created.body))
    const unconfigured = await check("ACCOUNT_PROVIDER_TYPE_AMAZON")
    assert.deepStrictEqual(unconfigured.body, {
      status: "CHECK_STATUS_NOT_READY",
      reason: "not configured",
      message: "the association names no AWS account"
    })
    assert.strictEqual((await association(trusted.account, trusted.project, trusted.client)).status, 200)
    for (const cloud of ["AMAZON", "GOOGLE", "AZURE"]) {
      const ready = await check(`ACCOUNT_PROVIDER_TYPE_${cloud}`)
      assert.deepStrictEqual(
        ready.body,
        { status: "CHECK_STATUS_READY", reason: "", message: "" },
        JSON.stringify(ready.body)
      )
    }
    // Accounts the clouds were never set up for.
    await association("222222222222", "other-project", "9b0d5d1a-3c0e-4d2b-9a39-0d6c7e7b9a11")
    const amazon = await check("ACCOUNT_PROVIDER_TYPE_AMAZON")
    assert.deepStrictEqual(amazon.body, {
      status: "CHECK_STATUS_NOT_READY",
      reason: "error exchanging credentials",
      message: "AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity"
    })
    const google = await check("ACCOUNT_PROVIDER_TYPE_GOOGLE")
    assert.strictEqual(google.body.reason, "error impersonating the canary service account")
    assert.match(google.body.message, /getAccessToken' denied/)
    const azure = await check("ACCOUNT_PROVIDER_TYPE_AZURE")
    assert.match(azure.body.message, /^invalid_client: AADSTS700213/)
  })

  it("refuses a missing or unknown provider type, a caller without account_associations.list, a group with none", async () => {
    const missing = await check("ACCOUNT_PROVIDER_TYPE_UNSPECIFIED")
    assert.strictEqual(missing.status, 400)
    assert.strictEqual(missing.body.details[1].fieldViolations[0].field, "providerType")
    const stranger = await server.runtime.runPromise(member("unchecked"))
    assert.strictEqual((await check("ACCOUNT_PROVIDER_TYPE_AMAZON", stranger.token)).status, 403)
    const none = await fetchJson(
      server.url,
      "POST",
      `/iam/v2beta1/accountAssociations/${stranger.org}:checkAccountAssociation`,
      stranger.token,
      { providerType: "ACCOUNT_PROVIDER_TYPE_AMAZON" }
    )
    assert.strictEqual(none.status, 404)
  })
})
