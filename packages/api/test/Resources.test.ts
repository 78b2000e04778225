import { Api } from "@arbor/api/Api"
import * as Resources from "@arbor/api/Resources"
import { OpenApi } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Option from "effect/Option"

/** Every declaration `Resources` exports, by its export name. */
const declarations = Object.entries(Resources).flatMap(([key, value]) =>
  typeof value === "object" && value !== null && "group" in value ? [{ key, declaration: value }] : []
)

describe("Resources", () => {
  it("declares each resource's group once, and the API serves every one of them", () => {
    assert.isAtLeast(declarations.length, 16)
    for (const { declaration, key } of declarations) {
      assert.strictEqual(declaration.name, key, `${key} is declared under its own name`)
      assert.strictEqual(Api.groups[declaration.name], declaration.group, `${key}'s group is the API's`)
    }
  })

  it("says in each endpoint's reference which capability it needs", () => {
    for (const resource of [Resources.groups, Resources.roleBindings, Resources.tags]) {
      for (const endpoint of Object.values(resource.group.endpoints)) {
        const needed: Record<string, string | undefined> = { ...resource.permissions, get: resource.permissions.list }
        const capability = needed[String(endpoint.name)]
        assert.isDefined(capability, `${resource.name}.${endpoint.name}`)
        const description = Context.getOption(endpoint.annotations, OpenApi.Description).pipe(
          Option.getOrElse(() => "")
        )
        assert.include(description, `\`${capability}\``, `${resource.name}.${endpoint.name}`)
      }
    }
  })
})
