import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { Arbor, Events, Groups, Identities, Principal, RoleBindings } from "../src/index.js"
import { claimMatch, organization } from "./fixtures.js"

describe("Events", () => {
  it.scoped("every committed write publishes its changes, in order; a refused write publishes nothing", () =>
    Effect.gen(function*() {
      const events = yield* Events.Events
      const subscription = yield* events.subscribe
      const groups = yield* Groups.Groups
      const org = yield* organization("acme")
      const team = yield* groups.create(Principal.system, org.uid, { name: "team" })
      yield* groups.update(Principal.system, team.uid, { description: "d" })
      yield* Effect.flip(groups.create(Principal.system, org.uid, { name: "team" }))
      yield* Effect.flip(groups.delete(Principal.system, org.uid))
      const identity = yield* (yield* Identities.Identities).create(Principal.system, team.uid, {
        name: "ci",
        claimMatch: claimMatch("ci")
      })
      const binding = yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: identity.uid,
        roleUid: "cbface5d58f52d0ef8b668e8a94f5da62ed3a21b"
      })
      yield* (yield* Identities.Identities).delete(Principal.system, identity.uid)
      const received = Chunk.toArray(yield* Queue.takeAll(subscription))
      assert.deepStrictEqual(received.map((e) => [e.type, e.resource, e.uid]), [
        ["created", "group", org.uid],
        ["created", "group", team.uid],
        ["updated", "group", team.uid],
        ["created", "identity", identity.uid],
        ["created", "role_binding", binding.uid],
        ["deleted", "role_binding", binding.uid],
        ["deleted", "identity", identity.uid]
      ])
    }).pipe(Effect.provide(Arbor.layerMemory)))
})
