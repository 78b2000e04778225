/**
 * The OpenAPI document made true and whole: error bodies, conflicts only on writes, custom methods' colons, the
 * sign-in endpoints.
 */
import type { OpenApi } from "@effect/platform"
import type { OpenApiJsonSchema } from "@effect/platform"
import { customMethodAfterUid } from "../methods/paths.js"
import * as OAuth from "../OAuth.js"

/**
 * What the generated document says, made true and whole: every error body is a google.rpc.Status (the framework's
 * own decode-error body never reaches a client), a read never answers a write's conflict (409), the custom method's
 * path keeps its literal colon, and the sign-in endpoints, which speak OAuth, are there beside the API's.
 */
export const truthful = (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => {
  const paths: OpenApi.OpenAPISpecPaths = {}
  for (const [path, item] of Object.entries(spec.paths)) {
    delete item.get?.responses?.["409"]
    for (const operation of Object.values(item)) {
      const bad = (operation as OpenApi.OpenAPISpecOperation).responses?.["400"]
      const schema = bad?.content?.["application/json"]?.schema
      if (bad !== undefined && schema !== undefined && "anyOf" in schema && Array.isArray(schema.anyOf)) {
        const kept = (schema.anyOf as ReadonlyArray<OpenApiJsonSchema.JsonSchema>).filter((s) =>
          !("$ref" in s && s.$ref === "#/components/schemas/HttpApiDecodeError")
        )
        bad.content!["application/json"]!.schema = kept.length === 1 ? kept[0]! : { anyOf: kept }
        bad.description = "invalid argument (code 3) or failed precondition (code 9)"
      }
    }
    // `/groupInvites::redeem` (a literal colon to the router) reaches here as `/groupInvites:{redeem}`.
    paths[customMethodAfterUid(path.replace(/:\{(\w+)\}$/, ":$1"))] = item
  }
  const schemas = { ...spec.components.schemas }
  for (const internal of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete schemas[internal]
  return withoutIds({
    ...spec,
    paths: { ...paths, ...OAuth.openApiPaths },
    components: { ...spec.components, schemas },
    tags: [...(spec.tags ?? []), {
      name: "Sign-in",
      description: "People signing in: OAuth's endpoints, form bodies in and OAuth's JSON out."
    }]
  })
}

/** Drops the `$id`s the schema generator gives `unknown` (the same id many times over). */
const withoutIds = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map(withoutIds) as A
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== "$id").map(([k, v]) => [k, withoutIds(v)])) as A
}
