/**
 * The OpenID AuthZEN working group's certification scenario for Authorization API 1.0 PDPs
 * (`certification/authorization-api-1_0-scenario.md` of github.com/openid/authzen), its requests as the scenario writes
 * them, sent to an organization's decision point configured with the scenario's fixture (§C.1): people `alice` and
 * `bob` (identities by their path), records `record-1` and `record-2` (folders below `records`), actions `read`,
 * `write`, `delete`; rules 5 to 8 are conditions on the people's bindings, reading the request's properties.
 * Each case is named by the scenario's section.
 */
import { DecisionVocabularies, Groups, Identities, Principal, RoleBindings, Roles } from "@arbor/core"
import * as Effect from "effect/Effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { member } from "./support.js"

let server: Awaited<ReturnType<typeof startServer>>
let org: string
let pep: string

/** The fixture's vocabulary: people by their path, records by their folder's name, the three actions. */
const vocabulary = {
  subjects: { user: { by: "path" } },
  actions: { read: "repo.list", write: "repo.update", delete: "repo.delete" },
  resources: { record: { folders: "records" } }
}

beforeAll(async () => {
  server = await startServer(await freePort(), {})
  // The enforcement point asks about others: it may list bindings.
  const enforcer = await server.runtime.runPromise(member("records-app", "viewer"))
  org = enforcer.org
  pep = enforcer.token
  await server.runtime.runPromise(Effect.gen(function*() {
    const groups = yield* Groups.Groups
    const roles = yield* Roles.Roles
    const bindings = yield* RoleBindings.RoleBindings
    const identities = yield* Identities.Identities
    const records = yield* groups.create(Principal.system, org, { name: "records" })
    yield* groups.create(Principal.system, records.uid, { name: "record-1" })
    const archived = yield* groups.create(Principal.system, records.uid, { name: "record-2" })
    const role = (name: string, capability: "repo.list" | "repo.update" | "repo.delete") =>
      roles.create(Principal.system, org, { name, capabilities: [capability] })
    const reader = yield* role("record-reader", "repo.list")
    const writer = yield* role("record-writer", "repo.update")
    const deleter = yield* role("record-deleter", "repo.delete")
    const person = (name: string) =>
      identities.create(Principal.system, org, {
        name,
        claimMatch: { issuer: "https://records.invalid", subject: name }
      })
    const alice = yield* person("alice")
    const bob = yield* person("bob")
    // Rules 1-3: both read every record.
    for (const identityUid of [alice.uid, bob.uid]) {
      yield* bindings.create(Principal.system, records.uid, { identityUid, roleUid: reader.uid })
    }
    // Rules 2 and 5: alice writes a record that is not archived.
    yield* bindings.create(Principal.system, records.uid, {
      identityUid: alice.uid,
      roleUid: writer.uid,
      condition: {
        expression: `!has(resource.properties.status) || resource.properties.status != "archived"`,
        title: "not archived"
      }
    })
    // Rules 7 and 8: alice deletes softly only.
    yield* bindings.create(Principal.system, records.uid, {
      identityUid: alice.uid,
      roleUid: deleter.uid,
      condition: { expression: "action.properties.soft == true", title: "soft deletes" }
    })
    // Rules 4 and 6: bob, the administrator of archived records, writes record-2 and no other, while the subject's
    // role, when a request gives one, says admin.
    yield* bindings.create(Principal.system, archived.uid, {
      identityUid: bob.uid,
      roleUid: writer.uid,
      condition: {
        expression: `!has(subject.properties.role) || subject.properties.role == "admin"`,
        title: "administrators"
      }
    })
    yield* (yield* DecisionVocabularies.DecisionVocabularies).set(Principal.system, org, vocabulary)
  }))
}, 30_000)

afterAll(async () => {
  await server?.close()
})

/** A request to the organization's endpoint `path`, as a PEP sends it (`X-Request-ID` when given). */
const send = async (path: string, body: string | undefined, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.url}/authzen/${org}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${pep}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body })
  })
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, body: json }
}
const ask = (path: string, body: unknown) => send(path, JSON.stringify(body))

const evaluation = "/access/v1/evaluation"
const evaluations = "/access/v1/evaluations"
const searchSubject = "/access/v1/search/subject"
const searchResource = "/access/v1/search/resource"
const searchAction = "/access/v1/search/action"

const alice = { type: "user", id: "alice" }
const bob = { type: "user", id: "bob" }
const admin = { type: "user", id: "bob", properties: { role: "admin" } }
const record1 = { type: "record", id: "record-1" }
const record2 = { type: "record", id: "record-2" }
const archived = { ...record2, properties: { status: "archived" } }
const context = { time: "2025-06-27T18:03-07:00", ip: "192.168.1.1" }

/** The decision of one evaluation, after checking its structure (§C.2.3). */
const decisionOf = async (body: unknown) => {
  const answer = await ask(evaluation, body)
  assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
  assert.match(answer.headers.get("content-type") ?? "", /^application\/json/)
  assert.isBoolean(answer.body.decision, JSON.stringify(answer.body))
  return answer.body.decision as boolean
}

/** The decisions of a batch, after checking their structure (§C.3.3). */
const decisionsOf = async (body: { readonly evaluations: ReadonlyArray<unknown>; readonly [key: string]: unknown }) => {
  const answer = await ask(evaluations, body)
  assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
  assert.lengthOf(answer.body.evaluations, body.evaluations.length)
  for (const item of answer.body.evaluations) assert.isBoolean(item.decision, JSON.stringify(item))
  return answer.body.evaluations.map((item: { decision: boolean }) => item.decision)
}

/** The results of a search, after checking their structure (§C.4). */
const resultsOf = async (path: string, body: unknown) => {
  const answer = await ask(path, body)
  assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
  assert.isArray(answer.body.results, JSON.stringify(answer.body))
  return answer
}
const idsOf = async (
  path: string,
  body: { readonly subject?: { type: string }; readonly resource?: { type: string }; readonly [key: string]: unknown }
) => {
  const answer = await resultsOf(path, body)
  const type = path === searchSubject ? body.subject!.type : body.resource!.type
  for (const found of answer.body.results) assert.strictEqual(found.type, type)
  return answer.body.results.map((found: { id: string }) => found.id)
}
const namesOf = async (body: unknown) =>
  (await resultsOf(searchAction, body)).body.results.map((found: { name: string }) => found.name)

describe("AuthZEN 1.0 certification scenario, at an organization's decision point", () => {
  it("Basic (C.2.2): the fixture's rules 1 to 8 and the requests that must not change them", async () => {
    assert.isTrue(await decisionOf({ subject: alice, action: { name: "read" }, resource: record1 }), "C.2.2.1")
    assert.isFalse(await decisionOf({ subject: bob, action: { name: "write" }, resource: record1 }), "C.2.2.2")
    assert.isTrue(await decisionOf({ subject: alice, action: { name: "read" }, resource: record1, context }), "C.2.2.3")
    assert.isFalse(await decisionOf({ subject: alice, action: { name: "write" }, resource: archived }), "C.2.2.4")
    assert.isTrue(await decisionOf({ subject: admin, action: { name: "write" }, resource: archived }), "C.2.2.5")
    const soft = (value: boolean) => ({ subject: alice, action: { name: "delete", properties: { soft: value } } })
    assert.isTrue(await decisionOf({ ...soft(true), resource: record1 }), "C.2.2.6")
    assert.isFalse(await decisionOf({ ...soft(false), resource: record1 }), "C.2.2.7")
    assert.isTrue(
      await decisionOf({
        subject: { ...alice, properties: { department: "Sales", role: "manager" } },
        action: { name: "read", properties: { method: "GET" } },
        resource: { ...record1, properties: { status: "active", owner: "bob" } }
      }),
      "C.2.2.8"
    )
    assert.isTrue(
      await decisionOf({
        subject: alice,
        action: { name: "read" },
        resource: record1,
        foo: "bar",
        futureField: { nested: true }
      }),
      "C.2.2.9"
    )
    // The remaining rules: alice writes an active record, bob reads one.
    assert.isTrue(await decisionOf({ subject: alice, action: { name: "write" }, resource: record1 }), "rule 2")
    assert.isTrue(await decisionOf({ subject: bob, action: { name: "read" }, resource: record1 }), "rule 3")
    // C.2.6: the same request, the same decision.
    for (let i = 0; i < 3; i++) {
      assert.isFalse(await decisionOf({ subject: bob, action: { name: "write" }, resource: record1 }), "C.2.6")
    }
  })

  it("Basic (C.2.4, C.2.5): 400 for what is missing, malformed or of the wrong type; X-Request-ID echoed", async () => {
    const read = { name: "read" }
    const refused: ReadonlyArray<[string, unknown]> = [
      ["missing subject", { action: read, resource: record1 }],
      ["missing action", { subject: alice, resource: record1 }],
      ["missing resource", { subject: alice, action: read }],
      ["subject missing type", { subject: { id: "alice" }, action: read, resource: record1 }],
      ["subject missing id", { subject: { type: "user" }, action: read, resource: record1 }],
      ["action missing name", { subject: alice, action: {}, resource: record1 }],
      ["resource missing type", { subject: alice, action: read, resource: { id: "record-1" } }],
      ["resource missing id", { subject: alice, action: read, resource: { type: "record" } }],
      ["subject a string", { subject: "alice", action: read, resource: record1 }],
      ["action.name a number", { subject: alice, action: { name: 123 }, resource: record1 }]
    ]
    for (const [why, body] of refused) {
      assert.strictEqual((await ask(evaluation, body)).status, 400, why)
    }
    const valid = JSON.stringify({ subject: alice, action: read, resource: record1 })
    assert.strictEqual((await send(evaluation, valid, { "content-type": "text/plain" })).status, 400, "C.2.4.3")
    assert.strictEqual((await send(evaluation, "{\"subject\":")).status, 400, "C.2.4.4")
    assert.strictEqual((await send(evaluation, "")).status, 400, "C.2.4.5")
    const echoed = await send(evaluation, valid, { "x-request-id": "cert-2-5-1" })
    assert.strictEqual(echoed.headers.get("x-request-id"), "cert-2-5-1", "C.2.5.1")
    assert.strictEqual((await send(evaluation, valid)).status, 200, "C.2.5.2")
  })

  it("Batch (C.3): defaults, properties per item, order, an item that cannot be evaluated", async () => {
    const two = await decisionsOf({
      subject: alice,
      action: { name: "read" },
      evaluations: [{ resource: record1 }, { resource: record2 }]
    })
    assert.strictEqual(two[0], true, "C.3.2.1")
    assert.deepStrictEqual(
      await decisionsOf({
        subject: bob,
        resource: record1,
        evaluations: [{ action: { name: "read" } }, { action: { name: "write" } }]
      }),
      [true, false],
      "C.3.2.2"
    )
    assert.deepStrictEqual(
      await decisionsOf({
        subject: alice,
        action: { name: "write" },
        evaluations: [{ resource: { ...record1, properties: { status: "active" } } }, { resource: archived }]
      }),
      [true, false],
      "C.3.2.3"
    )
    assert.deepStrictEqual(
      await decisionsOf({
        action: { name: "write" },
        resource: archived,
        evaluations: [{ subject: alice }, { subject: admin }]
      }),
      [false, true],
      "C.3.2.4"
    )
    assert.deepStrictEqual(
      await decisionsOf({
        evaluations: [
          { subject: alice, action: { name: "read" }, resource: record1 },
          { subject: bob, action: { name: "write" }, resource: record1 }
        ]
      }),
      [true, false],
      "C.3.2.5"
    )
    await decisionsOf({
      subject: alice,
      action: { name: "read" },
      context: { time: "2025-06-27T18:03-07:00" },
      evaluations: [
        { resource: record1 },
        { resource: record2, context: { time: "2025-06-27T19:00-07:00", source: "batch-override" } }
      ]
    })
    assert.deepStrictEqual(
      await decisionsOf({
        subject: alice,
        action: { name: "write" },
        resource: { ...record1, properties: { status: "active" } },
        evaluations: [{}, { resource: archived }]
      }),
      [true, false],
      "C.3.2.7"
    )
    const partial = await ask(evaluations, {
      subject: alice,
      action: { name: "read" },
      options: { evaluations_semantic: "execute_all" },
      evaluations: [{ resource: record1 }, {}]
    })
    assert.strictEqual(partial.status, 200, "C.3.4.1")
    assert.deepStrictEqual(partial.body.evaluations.map((e: { decision: boolean }) => e.decision), [true, false])
    const single = { subject: alice, action: { name: "read" }, resource: record1 }
    assert.deepStrictEqual((await ask(evaluations, single)).body, { decision: true }, "C.3.4.2")
    assert.deepStrictEqual((await ask(evaluations, { ...single, evaluations: [] })).body, { decision: true }, "C.3.4.3")
  })

  it("Search (C.4): people, records and actions found by the fixture's rules, in the scenario's words", async () => {
    const readers = { subject: { type: "user" }, action: { name: "read" }, resource: record1 }
    for (
      const [section, body] of [
        ["C.4.2.1", readers],
        ["C.4.2.2", { ...readers, context }],
        ["C.4.2.3", { ...readers, subject: alice }]
      ] as const
    ) {
      const found = await idsOf(searchSubject, body)
      assert.includeMembers(found, ["alice", "bob"], section)
    }
    assert.include(
      await idsOf(searchSubject, { subject: { type: "user" }, action: { name: "write" }, resource: archived }),
      "bob",
      "C.4.2.4"
    )
    const records = { subject: alice, action: { name: "read" }, resource: { type: "record" } }
    for (
      const [section, body] of [
        ["C.4.3.1", records],
        ["C.4.3.2", { ...records, context }],
        ["C.4.3.3", { ...records, resource: record1 }]
      ] as const
    ) {
      assert.include(await idsOf(searchResource, body), "record-1", section)
    }
    assert.include(
      await idsOf(searchResource, { subject: admin, action: { name: "write" }, resource: { type: "record" } }),
      "record-2",
      "C.4.3.4"
    )
    assert.includeMembers(await namesOf({ subject: alice, resource: record1 }), ["read", "write"], "C.4.4.1")
    assert.includeMembers(await namesOf({ subject: alice, resource: record1, context }), ["read", "write"], "C.4.4.2")
    assert.include(await namesOf({ subject: admin, resource: archived }), "write", "C.4.4.3")
  })

  it("Search (C.4.5-C.4.7): pages to an empty next_token, empty results for the unknown, 400 for what is missing", async () => {
    const readers = { subject: { type: "user" }, action: { name: "read" }, resource: record1 }
    const first = await resultsOf(searchSubject, { ...readers, page: { limit: 1 } })
    assert.lengthOf(first.body.results, 1, "C.4.5.1")
    const seen = [first.body.results[0].id]
    let token: string = first.body.page.next_token
    while (token !== "") {
      const next = await resultsOf(searchSubject, { ...readers, page: { limit: 1, token } })
      assert.isObject(next.body.page, "C.4.5.2: a page asked with a token says where it ends")
      assert.isString(next.body.page.next_token)
      seen.push(...next.body.results.map((found: { id: string }) => found.id))
      token = next.body.page.next_token
    }
    assert.includeMembers(seen, ["alice", "bob"])
    assert.strictEqual(new Set(seen).size, seen.length, "no one twice")
    assert.deepStrictEqual(
      (await resultsOf(searchAction, { subject: { type: "user", id: "nonexistent-user" }, resource: record1 })).body,
      { results: [] },
      "C.4.6.1"
    )
    assert.deepStrictEqual(
      (await resultsOf(searchSubject, { ...readers, subject: { type: "spaceship" } })).body,
      { results: [] },
      "C.4.6.2"
    )
    const refused: ReadonlyArray<[string, string, unknown]> = [
      ["subject search without action", searchSubject, { subject: { type: "user" }, resource: record1 }],
      ["resource search without subject", searchResource, { action: { name: "read" }, resource: { type: "record" } }],
      ["action search without resource", searchAction, { subject: alice }],
      ["subject search, resource without id", searchSubject, { ...readers, resource: { type: "record" } }],
      ["resource search, subject without id", searchResource, {
        subject: { type: "user" },
        action: { name: "read" },
        resource: { type: "record" }
      }],
      ["action search, subject without id", searchAction, { subject: { type: "user" }, resource: record1 }]
    ]
    for (const [why, path, body] of refused) {
      assert.strictEqual((await ask(path, body)).status, 400, why)
    }
  })

  it("Search (C.4.6) at the server's own decision point: an entity Arbor does not know is an empty result", async () => {
    const global = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${pep}`, "content-type": "application/json" },
        body: JSON.stringify(body)
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }))
    const unknown: ReadonlyArray<[string, unknown]> = [
      [searchAction, { subject: { type: "user", id: "nonexistent-user" }, resource: record1 }],
      [searchAction, { subject: { type: "identity", id: "nonexistent-user" }, resource: { type: "group", id: org } }],
      [searchSubject, { subject: { type: "user" }, action: { name: "read" }, resource: record1 }],
      [searchSubject, {
        subject: { type: "identity" },
        action: { name: "read" },
        resource: { type: "group", id: "x" }
      }],
      [searchResource, { subject: { type: "user", id: "bob" }, action: { name: "read" }, resource: { type: "record" } }]
    ]
    for (const [path, body] of unknown) {
      const answer = await global(path, body)
      assert.strictEqual(answer.status, 200, `${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`)
      assert.deepStrictEqual(answer.body.results, [], `${path} ${JSON.stringify(body)}`)
    }
    // What is missing is still refused.
    assert.strictEqual((await global(searchAction, { subject: { type: "user" }, resource: record1 })).status, 400)
  })

  it("Discovery (C.6): the organization's metadata names each endpoint", async () => {
    const response = await fetch(`${server.url}/.well-known/authzen-configuration/authzen/${org}`)
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/)
    const base = `${server.url}/authzen/${org}`
    assert.deepInclude(await response.json(), {
      policy_decision_point: base,
      access_evaluation_endpoint: `${base}${evaluation}`,
      access_evaluations_endpoint: `${base}${evaluations}`,
      search_subject_endpoint: `${base}${searchSubject}`,
      search_resource_endpoint: `${base}${searchResource}`,
      search_action_endpoint: `${base}${searchAction}`
    })
  })
})
