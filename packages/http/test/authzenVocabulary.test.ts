/**
 * An organization's decision point (docs/api.md §14): the OpenID AuthZEN interop Todo scenario's requests
 * (`interop/authzen-todo-backend/test/decisions-authorization-api-1_0-02.json` of github.com/openid/authzen), sent
 * verbatim to `/authzen/<organization uid>` of an organization whose vocabulary says what its words mean.
 */
import { DecisionVocabularies, Identities, Principal, Role, RoleBindings, Roles } from "@arbor/core"
import * as Effect from "effect/Effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

let server: Awaited<ReturnType<typeof startServer>>
let owner: { org: string; identity: string; token: string }
let pep: { org: string; identity: string; token: string }

/** The Todo application's identity provider, as its people's `sub`s are read. */
const issuer = "https://todo-idp.invalid"

/** The scenario's people: their `sub` (as the Todo IdP encodes it), email and role. */
const people = {
  rick: {
    sub: "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "rick@the-citadel.com",
    role: "owner"
  },
  morty: {
    sub: "CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "morty@the-citadel.com",
    role: "editor"
  },
  summer: {
    sub: "CiRmZDI2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "summer@the-smiths.com",
    role: "editor"
  },
  beth: {
    sub: "CiRmZDM2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "beth@the-smiths.com",
    role: "viewer"
  },
  jerry: {
    sub: "CiRmZDQ2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
    email: "jerry@the-smiths.com",
    role: "viewer"
  }
} as const

/** The vocabulary that reads the scenario's words: people by their `sub`, todos and users decided at folders. */
const vocabulary = {
  subjects: { user: { by: "subject", issuer } },
  actions: {
    can_read_user: "identity.list",
    can_read_todos: "repo.list",
    can_create_todo: "repo.create",
    can_update_todo: "repo.update",
    can_delete_todo: "repo.delete"
  },
  resources: { todo: { folder: "todos" }, user: {} }
}

beforeAll(async () => {
  server = await startServer(await freePort(), {})
  owner = await server.runtime.runPromise(member("todo-app"))
  // The Todo backend, the enforcement point: it asks about others, so it may list bindings.
  pep = await server.runtime.runPromise(member("todo-app", "viewer"))
  await server.runtime.runPromise(Effect.gen(function*() {
    const bindings = yield* RoleBindings.RoleBindings
    const identities = yield* Identities.Identities
    // An editor reads and creates todos, and changes only their own: the editor role on the condition that the
    // todo's owner is theirs (DECISIONS §21), beside a role that reads and creates.
    const writer = yield* (yield* Roles.Roles).create(Principal.system, owner.org, {
      name: "todo-writer",
      capabilities: ["identity.list", "repo.list", "repo.create"]
    })
    // Each person bound before they sign in: their identity is the one LookupIdentity names.
    for (const person of Object.values(people)) {
      const identityUid = (yield* identities.lookup({ issuer, subject: person.sub })).uid
      if (person.role === "editor") {
        yield* bindings.create(Principal.system, owner.org, { identityUid, roleUid: writer.uid })
        yield* bindings.create(Principal.system, owner.org, {
          identityUid,
          roleUid: Role.builtInByName("editor")!.uid,
          condition: { expression: `resource.properties.ownerID == "${person.email}"`, title: "their own todos" }
        })
      } else {
        yield* bindings.create(Principal.system, owner.org, {
          identityUid,
          roleUid: Role.builtInByName(person.role)!.uid
        })
      }
    }
    yield* (yield* DecisionVocabularies.DecisionVocabularies).set(Principal.system, owner.org, vocabulary)
  }))
  const folder = await fetchJson(server.url, "POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "todos" })
  assert.strictEqual(folder.status, 200, JSON.stringify(folder.body))
}, 30_000)

afterAll(async () => {
  await server?.close()
})

const post = (path: string, token: string, body: unknown) => fetchJson(server.url, "POST", path, token, body)

/** A todo of the scenario, with its owner's email as its `ownerID` property. */
const todo = (id: string, owner: string) => ({ type: "todo", id, properties: { ownerID: owner } })

/** The scenario's evaluations of one person: each request as the file has it, and its expected decision. */
const evaluationsOf = (person: keyof typeof people, owned: { readonly id: string; readonly mine: boolean }) => {
  const { role, sub } = people[person]
  const subject = { type: "user", id: sub }
  const writes = role !== "viewer"
  return [
    {
      request: { subject, action: { name: "can_read_user" }, resource: { type: "user", id: "beth@the-smiths.com" } },
      expected: true
    },
    {
      request: { subject, action: { name: "can_read_todos" }, resource: { type: "todo", id: "todo-1" } },
      expected: true
    },
    {
      request: { subject, action: { name: "can_create_todo" }, resource: { type: "todo", id: "todo-1" } },
      expected: writes
    },
    {
      request: { subject, action: { name: "can_update_todo" }, resource: todo(owned.id, people[person].email) },
      expected: writes && owned.mine
    },
    {
      request: { subject, action: { name: "can_delete_todo" }, resource: todo(owned.id, people[person].email) },
      expected: writes && owned.mine
    },
    {
      request: {
        subject,
        action: { name: "can_update_todo" },
        resource: todo("7240d0db-8ff0-41ec-98b2-34a096273b92", "rick@the-citadel.com")
      },
      // Only the admin may change another's todo: an editor's owner check is the condition of their binding.
      expected: role === "owner"
    }
  ]
}

describe("an organization's decision point, in its vocabulary", () => {
  it("the vocabulary is read by who may list, replaced whole by who may update the organization, with its etag", async () => {
    const other = await server.runtime.runPromise(member("todo-rules"))
    const reader = await server.runtime.runPromise(member("todo-rules", "viewer"))
    const path = `/iam/v2beta1/decisionVocabularies/${other.org}`
    const empty = await fetchJson(server.url, "GET", path, reader.token)
    assert.deepInclude(empty.body, { uid: other.org, subjects: {}, actions: {}, resources: {}, etag: "0" })
    assert.strictEqual((await fetchJson(server.url, "GET", path, pep.token)).status, 403, "another organization's")
    const refused = await fetchJson(server.url, "PUT", path, reader.token, vocabulary)
    assert.strictEqual(refused.status, 403)
    const wrong = await fetchJson(server.url, "PUT", path, other.token, {
      actions: { can_read: "groups.read", "groups.list": "groups.list" }
    })
    assert.strictEqual(wrong.status, 400)
    assert.match(JSON.stringify(wrong.body), /actions/)
    assert.deepInclude((await fetchJson(server.url, "GET", path, reader.token)).body, { etag: "0" }, "unchanged")
    const set = await fetchJson(server.url, "PUT", path, other.token, { ...vocabulary, etag: "0" })
    assert.strictEqual(set.status, 200, JSON.stringify(set.body))
    assert.deepInclude(set.body, { etag: "1", actions: vocabulary.actions })
    const stale = await fetchJson(server.url, "PUT", path, other.token, { ...vocabulary, etag: "0" })
    assert.strictEqual(stale.status, 409)
    assert.deepInclude((await fetchJson(server.url, "GET", path, reader.token)).body, { etag: "1" })
    const logged = await fetchJson(server.url, "GET", `/events/v2beta1/events?subject=${other.org}`, other.token)
    assert.include(JSON.stringify(logged.body), "dev.chainguard.api.iam.decision_vocabularies.created.v1")
  })

  it("the Todo scenario's evaluations, verbatim: each decided by the people's bindings", async () => {
    const cases = [
      ...evaluationsOf("rick", { id: "7240d0db-8ff0-41ec-98b2-34a096273b92", mine: true }),
      ...evaluationsOf("morty", { id: "7240d0db-8ff0-41ec-98b2-34a096273b91", mine: true }),
      ...evaluationsOf("summer", { id: "7240d0db-8ff0-41ec-98b2-34a096273b93", mine: true }),
      ...evaluationsOf("beth", { id: "7240d0db-8ff0-41ec-98b2-34a096273b94", mine: false }),
      ...evaluationsOf("jerry", { id: "7240d0db-8ff0-41ec-98b2-34a096273b95", mine: false })
    ]
    const wrong: Array<string> = []
    for (const { expected, request } of cases) {
      const answer = await post(`/authzen/${owner.org}/access/v1/evaluation`, pep.token, request)
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      if (answer.body.decision !== expected) wrong.push(`${JSON.stringify(request)}: ${answer.body.decision}`)
    }
    assert.deepStrictEqual(wrong, [])
    assert.strictEqual(cases.length, 30, "the scenario's evaluations")

    // The batch of the same file: a subject and action for all, each todo its own.
    const batch = await post(`/authzen/${owner.org}/access/v1/evaluations`, pep.token, {
      subject: { type: "user", id: people.beth.sub },
      action: { name: "can_read_todos" },
      evaluations: [{ resource: todo("a", "rick@the-citadel.com") }, { resource: todo("b", "beth@the-smiths.com") }]
    })
    assert.deepStrictEqual(batch.body, { evaluations: [{ decision: true }, { decision: true }] })
  })

  it("unknown people, folders and words: false decisions and empty searches, or 400 naming the field", async () => {
    const unknownPerson = await post(`/authzen/${owner.org}/access/v1/evaluation`, pep.token, {
      subject: { type: "user", id: "no-such-sub" },
      action: { name: "can_read_todos" },
      resource: { type: "todo", id: "todo-1" }
    })
    assert.deepStrictEqual([unknownPerson.status, unknownPerson.body], [200, { decision: false }])
    const unknownAction = await post(`/authzen/${owner.org}/access/v1/evaluation`, pep.token, {
      subject: { type: "user", id: people.rick.sub },
      action: { name: "can_fly" },
      resource: { type: "todo", id: "todo-1" }
    })
    assert.strictEqual(unknownAction.status, 400)
    assert.match(JSON.stringify(unknownAction.body), /action\.name/)
    // The action search answers the vocabulary's names of what is held.
    const actions = await post(`/authzen/${owner.org}/access/v1/search/action`, pep.token, {
      subject: { type: "user", id: people.beth.sub },
      resource: { type: "todo", id: "todo-1" }
    })
    assert.deepStrictEqual(actions.body, { results: [{ name: "can_read_user" }, { name: "can_read_todos" }] })
    const resources = await post(`/authzen/${owner.org}/access/v1/search/resource`, pep.token, {
      subject: { type: "user", id: people.rick.sub },
      action: { name: "can_read_todos" },
      resource: { type: "todo" }
    })
    assert.deepStrictEqual(resources.body, { results: [] }, "a folder's resources cannot be listed")
    // Who may create todos: found by uid, as identities; a type that finds people by their sub finds nothing.
    const creators = await post(`/authzen/${owner.org}/access/v1/search/subject`, pep.token, {
      subject: { type: "identity" },
      action: { name: "can_create_todo" },
      resource: { type: "todo", id: "todo-1" }
    })
    const found = creators.body.results.map((r: { id: string }) => r.id)
    const uidOf = (sub: string) =>
      server.runtime.runPromise(
        Effect.map(
          Effect.flatMap(Identities.Identities, (identities) => identities.lookup({ issuer, subject: sub })),
          (known) => known.uid
        )
      )
    assert.include(found, await uidOf(people.summer.sub))
    assert.notInclude(found, await uidOf(people.beth.sub))
    const byUser = await post(`/authzen/${owner.org}/access/v1/search/subject`, pep.token, {
      subject: { type: "user" },
      action: { name: "can_create_todo" },
      resource: { type: "todo", id: "todo-1" }
    })
    assert.deepStrictEqual(byUser.body, { results: [] })
    // The organization's metadata names its own endpoints; the server's stay its own.
    const metadata = await fetchJson(server.url, "GET", `/.well-known/authzen-configuration/authzen/${owner.org}`, "")
    assert.deepInclude(metadata.body, {
      policy_decision_point: `${server.url}/authzen/${owner.org}`,
      access_evaluation_endpoint: `${server.url}/authzen/${owner.org}/access/v1/evaluation`
    })
    // The server's own decision point does not read the organization's words.
    const global = await post("/access/v1/evaluation", pep.token, {
      subject: { type: "user", id: people.rick.sub },
      action: { name: "can_read_todos" },
      resource: { type: "todo", id: "todo-1" }
    })
    assert.strictEqual(global.status, 400)
  })
})
