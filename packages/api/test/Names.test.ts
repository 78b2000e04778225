import { assert, describe, it } from "@effect/vitest"
import * as Names from "../src/Names.js"

describe("Names.ofEntry", () => {
  const of = (body: Record<string, unknown>) => Names.ofEntry({ body })

  it("names each resource as a person knows it", () => {
    assert.strictEqual(of({ uid: "a", name: "payments" }), "payments")
    assert.strictEqual(of({ identity: { name: "deployer" }, role: { name: "viewer" } }), "deployer → viewer")
    assert.strictEqual(
      of({ role: { name: "viewer" }, email: "ada@acme.example" }),
      "invite for ada@acme.example → viewer"
    )
    assert.strictEqual(of({ role: { name: "viewer" } }), "invite → viewer")
    assert.strictEqual(of({ userName: "ada@acme.example", externalId: "00u1" }), "ada@acme.example")
    assert.strictEqual(of({ externalGroupId: "admins", roleUid: "r" }), "external group admins")
    assert.strictEqual(of({ docId: "tos.v1" }), "terms tos.v1")
  })

  it("names nothing the reader cannot see", () => {
    // A binding whose role the reader may not list embeds the role by its uid alone.
    assert.isUndefined(of({ identity: { name: "deployer" }, role: { uid: "0123" } }))
    assert.isUndefined(of({ uid: "a", enabled: true }))
    assert.isUndefined(of({ name: "" }))
  })
})
