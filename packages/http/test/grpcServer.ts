/**
 * The server the gRPC tests call (`grpc*.test.ts`), one per test file: on loopback, with an owner of an organization
 * and a stranger to it, the independent client on the reference protos (`grpcSupport`), and REST beside it.
 */
import { afterAll, beforeAll } from "@effect/vitest"
import { OAuth2Server } from "oauth2-mock-server"
import { clientProtos, connect } from "./grpcSupport.js"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

export const iam = "chainguard.platform.iam.v2beta1"
export const registry = "chainguard.platform.registry.v2beta1"

export let server: Awaited<ReturnType<typeof startServer>>
export let clients: ReturnType<typeof connect>
export let owner: { org: string; identity: string; token: string }
export let stranger: { org: string; identity: string; token: string }
/** An OpenID provider of workloads, on loopback. */
export const oidc = new OAuth2Server()

/** A REST call as `token`: status and parsed body. */
export const rest = (method: string, path: string, token: string, body?: unknown) =>
  fetchJson(server.url, method, path, token, body)

/** The REST error body of `path` as the gRPC client decodes a failure: code, message, details. */
export const restFailure = async (method: string, path: string, token: string, body?: unknown) => {
  const { body: status } = await rest(method, path, token, body)
  return { code: status.code, message: status.message, details: status.details }
}

/** Starts a test file's server and client (inside its `describe`), stopped when its tests end. */
export const useGrpcServer = () => {
  beforeAll(async () => {
    await oidc.issuer.keys.generate("RS256")
    await oidc.start(0, "127.0.0.1")
    const port = await freePort()
    server = await startServer(port, {})
    owner = await server.runtime.runPromise(member("acme"))
    stranger = await server.runtime.runPromise(member("elsewhere"))
    clients = connect(clientProtos, `127.0.0.1:${port}`)
  })
  afterAll(async () => {
    clients?.close()
    await server?.close()
    await oidc.stop()
  })
}
