/**
 * An independent gRPC client for the tests: `@grpc/grpc-js` with `@grpc/proto-loader` on the reference protos (the
 * public SDK's, found through `ARBOR_TEST_PROTOS`, which CI always sets), never the project's generated code; error
 * details decoded from `grpc-status-details-bin` with protobufjs. Without `ARBOR_TEST_PROTOS` (a plain `pnpm test` on a
 * clone) the client reads Arbor's own protos instead, so every gRPC check still runs; `@arbor/api`'s proto test holds
 * those to the reference's names and numbers wherever the reference is at hand.
 */
import * as grpc from "@grpc/grpc-js"
import * as protoLoader from "@grpc/proto-loader"
import { join } from "node:path"
import protobuf from "protobufjs"

/** Where the reference protos are, when the tests have them. */
export const referenceProtos = process.env.ARBOR_TEST_PROTOS

/** Arbor's own protos (`@arbor/api`'s), which the server serves. */
export const ownProtos = join(import.meta.dirname, "..", "..", "api", "proto")

/** The protos the independent client reads: the reference's when the tests have them, else Arbor's own. */
export const clientProtos = referenceProtos ?? ownProtos

/** Which protos those are, for the tests' names. */
export const clientProtosNamed = referenceProtos === undefined ? "Arbor's own protos" : "the reference protos"

/** The reference protos' files of the services the server serves. */
export const files = [
  "chainguard/platform/iam/v2beta1/groups.proto",
  "chainguard/platform/iam/v2beta1/identities.proto",
  "chainguard/platform/iam/v2beta1/roles.proto",
  "chainguard/platform/iam/v2beta1/role_bindings.proto",
  "chainguard/platform/iam/v2beta1/identity_providers.proto",
  "chainguard/platform/iam/v2beta1/account_associations.proto",
  "chainguard/platform/iam/v2beta1/group_invites.proto",
  "chainguard/platform/iam/v2beta1/terms.proto",
  "chainguard/platform/iam/v2beta1/external_group_role_mappings.proto",
  "chainguard/platform/registry/v2beta1/repos.proto",
  "chainguard/platform/registry/v2beta1/tags.proto",
  "chainguard/platform/vulnerabilities/v2beta1/advisories.proto",
  "chainguard/platform/events/v2beta1/subscriptions.proto",
  "platform/oidc/v1/oidc.platform.proto"
]

/** A failed call: its code, message and decoded details, each `{ "@type", ...fields }` as the REST body has them. */
export interface Failure {
  readonly code: number
  readonly message: string
  readonly details: ReadonlyArray<Record<string, unknown>>
}

/** A unary method: the request (proto3 field names in camelCase), the caller's token; the answer or a Failure. */
export type Unary = (request: object, token?: string) => Promise<any>

/** Clients for every service of the reference protos, on `address` (`127.0.0.1:port`, plaintext HTTP/2). */
export const connect = (dir: string, address: string) => {
  const definition = protoLoader.loadSync(files, {
    includeDirs: [dir],
    longs: String,
    enums: String,
    defaults: false,
    oneofs: false
  })
  const loaded = grpc.loadPackageDefinition(definition) as any
  const statusTypes = protobuf.loadSync([
    join(dir, "google/rpc/status.proto"),
    join(dir, "google/rpc/error_details.proto")
  ])
  const Status = statusTypes.lookupType("google.rpc.Status")
  const decodeDetails = (error: grpc.ServiceError): ReadonlyArray<Record<string, unknown>> => {
    const [bin] = error.metadata.get("grpc-status-details-bin")
    if (bin === undefined) return []
    const status = Status.toObject(Status.decode(bin as Buffer)) as {
      details?: Array<{ type_url: string; value: Uint8Array }>
    }
    return (status.details ?? []).map((any) => {
      const type = statusTypes.lookupType(any.type_url.slice(any.type_url.lastIndexOf("/") + 1))
      return { "@type": any.type_url, ...type.toObject(type.decode(any.value)) }
    })
  }
  const opened: Array<grpc.Client> = []
  /** The methods of the service `name` (fully qualified), each as a promise. */
  // Typed loosely: the methods are named by the reference protos, which the project does not compile.
  const service = (name: string): any => {
    const Client = name.split(".").reduce((o, key) => o[key], loaded)
    const client: grpc.Client = new Client(address, grpc.credentials.createInsecure())
    opened.push(client)
    return new Proxy({}, {
      get: (_, method: string) => (request: object, token?: string) =>
        new Promise((resolve, reject) => {
          const metadata = new grpc.Metadata()
          if (token !== undefined) metadata.set("authorization", `Bearer ${token}`)
          ;(client as any)[method](request, metadata, (error: grpc.ServiceError | null, answer: unknown) =>
            error === null
              ? resolve(answer)
              : reject({ code: error.code, message: error.details, details: decodeDetails(error) } satisfies Failure))
        })
    })
  }
  return { service, close: () => opened.forEach((client) => client.close()) }
}

/** The failure of a call that must fail. */
export const failure = (call: Promise<unknown>): Promise<Failure> =>
  call.then(
    (answer) => {
      throw new Error(`expected the call to fail, got ${JSON.stringify(answer)}`)
    },
    (failure: Failure) => failure
  )

/**
 * A value as both surfaces can be compared: timestamps as RFC 3339 with milliseconds, and default values (empty
 * strings, false, 0, empty lists and maps), which proto3 does not send, left out.
 */
export const comparable = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    const items = value.map(comparable)
    return items.length === 0 ? undefined : items
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value)
    if ("seconds" in value && keys.every((key) => key === "seconds" || key === "nanos")) {
      const { nanos = 0, seconds } = value as { seconds: string; nanos?: number }
      return new Date(Number(seconds) * 1000 + Math.floor(nanos / 1e6)).toISOString()
    }
    const out: Record<string, unknown> = {}
    for (const key of keys) {
      const v = comparable((value as Record<string, unknown>)[key])
      if (v !== undefined) out[key] = v
    }
    return Object.keys(out).length === 0 ? undefined : out
  }
  return value === "" || value === false || value === 0 || value === null ? undefined : value
}

/** `value` without `keys`. */
export const without = (value: Record<string, unknown>, ...keys: ReadonlyArray<string>) =>
  Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)))
