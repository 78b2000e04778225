/**
 * Every endpoint of the API refuses a query parameter it does not take (DECISIONS §18, §20): each is under
 * `KnownParameters`, and what each takes is what its declaration says.
 */
import { HttpApi } from "@effect/platform"
import { assert, describe, it } from "vitest"
import { Api } from "../src/Api.js"
import * as ListQuery from "../src/ListQuery.js"
import { KnownParameters } from "../src/Security.js"

describe("query parameters", () => {
  it("every endpoint is under KnownParameters, whatever its method", () => {
    const unguarded: Array<string> = []
    let endpoints = 0
    HttpApi.reflect(Api, {
      onGroup() {},
      onEndpoint({ endpoint, middleware }) {
        endpoints++
        if (![...middleware].some((tag) => tag.key === KnownParameters.key)) {
          unguarded.push(`${endpoint.method} ${endpoint.path}`)
        }
      }
    })
    assert.isAbove(endpoints, 100)
    assert.deepStrictEqual(unguarded, [])
  })

  it("what each endpoint takes is its declaration's: none for a get, a delete or a create; a list's filters", () => {
    const declared = ListQuery.declaredParameters(Api)
    assert.deepStrictEqual([...declared.get("DELETE /iam/v2beta1/roleBindings/:uid")!], [])
    assert.deepStrictEqual([...declared.get("POST /iam/v2beta1/roleBindings/:uid")!], [])
    assert.deepStrictEqual([...declared.get("PATCH /iam/v2beta1/groups/:uid")!], ["updateMask"])
    assert.includeMembers([...declared.get("GET /iam/v2beta1/roleBindings")!], [
      "identity",
      "role",
      "group",
      "page_size",
      "uidp.descendants_of"
    ])
  })
})
