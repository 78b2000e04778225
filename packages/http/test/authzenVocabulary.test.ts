/**
 * An organization's decision point (docs/api.md §14): the OpenID AuthZEN interop scenarios' decisions (the Todo
 * backend's and the API gateways', copied whole into `authzen-interop/`, see its SOURCE.md), each request sent as the
 * file writes it to `/authzen/<organization uid>` of an organization whose vocabulary says what its words mean.
 */
import { DecisionVocabularies, Identities, Principal, Role, RoleBindings, Roles } from "@arbor/core"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

let server: Awaited<ReturnType<typeof startServer>>
let owner: { org: string; identity: string; token: string }
let pep: { org: string; identity: string; token: string }
/** The API gateway's organization, and its enforcement point. */
let gateway: { org: string; identity: string; token: string }
let gatewayPep: { org: string; identity: string; token: string }

/** A scenario's decisions, as the working group's file has them. */
interface Decisions {
  readonly evaluation: ReadonlyArray<{ readonly request: unknown; readonly expected: boolean }>
  readonly evaluations?: ReadonlyArray<{ readonly request: unknown; readonly expected: ReadonlyArray<unknown> }>
}
const decisionsOf = (file: string): Decisions =>
  JSON.parse(readFileSync(new URL(`./authzen-interop/${file}`, import.meta.url), "utf8"))

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

/**
 * The API gateway's vocabulary: the same people, named `identity` by their `sub`; HTTP methods on the Todo API's
 * routes. The gateway lets a person reach a route; which todo they may change is the backend's decision above.
 */
const gatewayVocabulary = {
  subjects: { identity: { by: "subject", issuer } },
  actions: { GET: "repo.list", POST: "repo.create", PUT: "repo.update", DELETE: "repo.delete" },
  resources: { route: {} }
}

beforeAll(async () => {
  server = await startServer(await freePort(), {})
  owner = await server.runtime.runPromise(member("todo-app"))
  // The Todo backend, the enforcement point: it asks about others, so it may list bindings.
  pep = await server.runtime.runPromise(member("todo-app", "viewer"))
  gateway = await server.runtime.runPromise(member("todo-gateway"))
  gatewayPep = await server.runtime.runPromise(member("todo-gateway", "viewer"))
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
      yield* bindings.create(Principal.system, gateway.org, {
        identityUid,
        roleUid: Role.builtInByName(person.role)!.uid
      })
    }
    const vocabularies = yield* DecisionVocabularies.DecisionVocabularies
    yield* vocabularies.set(Principal.system, owner.org, vocabulary)
    yield* vocabularies.set(Principal.system, gateway.org, gatewayVocabulary)
  }))
  const folder = await fetchJson(server.url, "POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "todos" })
  assert.strictEqual(folder.status, 200, JSON.stringify(folder.body))
}, 30_000)

afterAll(async () => {
  await server?.close()
})

const post = (path: string, token: string, body: unknown) => fetchJson(server.url, "POST", path, token, body)

/** Each decision of `file` asked at `org`'s decision point by `token`: what came out otherwise than the file says. */
const run = async (org: string, token: string, file: string) => {
  const { evaluation, evaluations = [] } = decisionsOf(file)
  const wrong: Array<string> = []
  for (const { expected, request } of evaluation) {
    const answer = await post(`/authzen/${org}/access/v1/evaluation`, token, request)
    if (answer.status !== 200 || answer.body.decision !== expected) {
      wrong.push(`${JSON.stringify(request)}: ${answer.status} ${JSON.stringify(answer.body)}`)
    }
  }
  for (const { expected, request } of evaluations) {
    const answer = await post(`/authzen/${org}/access/v1/evaluations`, token, request)
    if (answer.status !== 200 || JSON.stringify(answer.body.evaluations) !== JSON.stringify(expected)) {
      wrong.push(`${JSON.stringify(request)}: ${answer.status} ${JSON.stringify(answer.body)}`)
    }
  }
  return { wrong, asked: evaluation.length + evaluations.length }
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

  it("the Todo scenario's decisions, verbatim: each decided by the people's bindings", async () => {
    const { asked, wrong } = await run(owner.org, pep.token, "todo-decisions.json")
    assert.deepStrictEqual(wrong, [])
    assert.strictEqual(asked, 43, "the file's 40 evaluations and 3 batches")
  })

  it("the API gateway scenario's decisions, verbatim: people named `identity` by their sub, routes by method", async () => {
    const { asked, wrong } = await run(gateway.org, gatewayPep.token, "gateway-decisions.json")
    assert.deepStrictEqual(wrong, [])
    assert.strictEqual(asked, 25, "the file's evaluations")
    // `identity` means the sub of the gateway's issuer there: an Arbor uid finds no one, and no one is searched by it.
    const rick = await server.runtime.runPromise(
      Effect.flatMap(Identities.Identities, (identities) => identities.lookup({ issuer, subject: people.rick.sub }))
    )
    const byUid = await post(`/authzen/${gateway.org}/access/v1/evaluation`, gatewayPep.token, {
      subject: { type: "identity", id: rick.uid },
      action: { name: "GET" },
      resource: { type: "route", id: "/todos" }
    })
    assert.deepStrictEqual([byUid.status, byUid.body], [200, { decision: false }])
    const who = await post(`/authzen/${gateway.org}/access/v1/search/subject`, gatewayPep.token, {
      subject: { type: "identity" },
      action: { name: "GET" },
      resource: { type: "route", id: "/todos" }
    })
    assert.deepStrictEqual(who.body, { results: [] })
    // A word the vocabulary does not hold, though every object has it, is refused naming its field.
    const inherited = await post(`/authzen/${gateway.org}/access/v1/evaluation`, gatewayPep.token, {
      subject: { type: "identity", id: people.rick.sub },
      action: { name: "GET" },
      resource: { type: "constructor", id: "/todos" }
    })
    assert.strictEqual(inherited.status, 400, JSON.stringify(inherited.body))
    assert.match(JSON.stringify(inherited.body), /resource\.type/)
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
    // No decision point but an organization's: any other string, a folder's uid or a uid of none is 404.
    const folder = owner.org + "/0123456789abcdef"
    for (const other of ["anything", "0".repeat(40), folder]) {
      const none = await fetch(`${server.url}/.well-known/authzen-configuration/authzen/${other}`)
      assert.include([400, 404], none.status, other)
      assert.notInclude(await none.text(), `/authzen/${other}/access`, `${other} is not echoed`)
    }
    assert.strictEqual(
      (await fetch(`${server.url}/.well-known/authzen-configuration/authzen/${"0".repeat(40)}`)).status,
      404
    )
    // The server's own decision point does not read the organization's words.
    const global = await post("/access/v1/evaluation", pep.token, {
      subject: { type: "user", id: people.rick.sub },
      action: { name: "can_read_todos" },
      resource: { type: "todo", id: "todo-1" }
    })
    assert.strictEqual(global.status, 400)
  })
})
