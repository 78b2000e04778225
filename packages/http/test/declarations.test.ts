/**
 * Every list's declared query reaches the gRPC surface: each parameter of each resource's declaration
 * (`@arbor/api/Resources`) is a field of its list request in the protos the gRPC client reads (the reference's in
 * CI), or an exemption said here. (The command-line client's flags and docs/api.md are walked in `@arbor/cli`'s
 * `lists.test.ts`.)
 */
import * as ListQuery from "@arbor/api/ListQuery"
import * as Resources from "@arbor/api/Resources"
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { join } from "node:path"
import protobuf from "protobufjs"
import { clientProtos, files } from "./grpcSupport.js"

/** Every declaration of a resource with a list and a proto service. */
const declarations = Object.values(Resources).flatMap((value) =>
  typeof value === "object" && "query" in value && Schema.isSchema(value.query) && "proto" in value &&
    "service" in value.proto && typeof value.name === "string"
    ? [{ name: value.name, query: value.query, service: value.proto.service }]
    : []
)

/** The engine refuses `name` where a resource has none (`INVALID_ARGUMENT`), as gRPC refuses a field it lacks. */
const nameless = { name: "a resource without a name: REST refuses the filter" }

/** Parameters a list takes that its gRPC request has no field for, and why. */
const notInProtos: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  roleBindings: nameless,
  groupInvites: nameless,
  externalGroupRoleMappings: nameless,
  subscriptions: nameless,
  advisories: {
    ...nameless,
    package_names: "the protos' artifact_names, which the advisories' gRPC method maps to it"
  }
}

/** The fields of `service`'s list request for `plural`, in the documented spelling of query parameters. */
const requestFields = (protos: protobuf.Root, service: string, plural: string) => {
  const method = Object.values(protos.lookupService(service).methods).find((m) =>
    m.name.startsWith("List") && protos.lookupType(m.responseType).fields[plural] !== undefined
  )
  if (method === undefined) return undefined
  const named = new Set<string>()
  for (const field of Object.values(protos.lookupType(method.requestType).fields)) {
    const inner = field.resolve().resolvedType
    const names = field.name === "uidp" && inner instanceof protobuf.Type
      ? Object.keys(inner.fields).map((f) => `uidp.${f}`)
      : [field.name]
    for (const name of names) named.add(ListQuery.aliases[name] ?? name)
  }
  return named
}

describe("list queries and the protos", () => {
  it("walks every declaration with a list", () => {
    assert.isAtLeast(declarations.length, 12)
  })

  it("each parameter is a field of its list request", () => {
    const protos = new protobuf.Root()
    protos.resolvePath = (_origin, target) => (target.startsWith("/") ? target : join(clientProtos, target))
    protos.loadSync(files.map((file) => join(clientProtos, file)))
    protos.resolveAll()
    const missing: Array<string> = []
    for (const { name, query, service } of declarations) {
      const fields = requestFields(protos, service, name)
      if (fields === undefined) missing.push(`${service} has no list of ${name}`)
      for (const parameter of ListQuery.parameters(query)) {
        if (notInProtos[name]?.[parameter.name] === undefined && !fields?.has(parameter.name)) {
          missing.push(`${name}: ${parameter.name}`)
        }
      }
    }
    assert.deepStrictEqual(missing, [])
  })
})
