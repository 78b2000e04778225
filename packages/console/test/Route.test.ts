/** The console's addresses: every view's fragment reads back as that view, a uid's slashes included. */
import { assert, describe, it } from "vitest"
import * as Route from "../src/Route.js"

describe("routes", () => {
  it("every route survives its own fragment", () => {
    const uid = `${"a".repeat(40)}/0123456789abcdef`
    const routes: ReadonlyArray<Route.Route> = [
      { _tag: "Home" },
      Route.group(uid),
      Route.group(uid, "bindings"),
      { _tag: "Identity", uid: `${uid}/fedcba9876543210` },
      { _tag: "Audit", group: uid },
      { _tag: "Audit" },
      { _tag: "Access" }
    ]
    for (const route of routes) assert.deepStrictEqual(Route.parse(Route.href(route)), route)
  })

  it("an unknown fragment or section is home or the group's first section", () => {
    assert.deepStrictEqual(Route.parse("#/nowhere"), { _tag: "Home" })
    assert.deepStrictEqual(Route.parse(""), { _tag: "Home" })
    assert.deepStrictEqual(Route.parse("#/groups/abc/secrets"), Route.group("abc"))
  })
})
