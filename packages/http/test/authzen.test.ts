/**
 * The OpenID AuthZEN Authorization API 1.0 (docs/api.md §14): the requests of its examples, in this server's
 * vocabulary (subject type `identity`, actions are capabilities, resources the API's kinds), over HTTP.
 */
import { Principal, Role, RoleBindings } from "@arbor/core"
import * as Effect from "effect/Effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

const viewerRole = Role.builtInByName("viewer")!.uid

let server: Awaited<ReturnType<typeof startServer>>
let owner: { org: string; identity: string; token: string }
let viewer: { org: string; identity: string; token: string }

beforeAll(async () => {
  server = await startServer(await freePort(), {})
  owner = await server.runtime.runPromise(member("decided"))
  viewer = await server.runtime.runPromise(member("decided", "viewer"))
}, 30_000)

afterAll(async () => {
  await server?.close()
})

const post = (path: string, token: string, body: unknown) => fetchJson(server.url, "POST", path, token, body)

const evaluation = (subject: string, action: string, context?: object) => ({
  subject: { type: "identity", id: subject },
  action: { name: action },
  resource: { type: "group", id: owner.org },
  ...(context === undefined ? {} : { context })
})

describe("AuthZEN", () => {
  it("echoes the client's X-Request-ID, as the specification requires, and gives its own id when none is sent", async () => {
    const ask = (headers: Record<string, string>) =>
      fetch(`${server.url}/access/v1/evaluation`, {
        method: "POST",
        headers: { authorization: `Bearer ${viewer.token}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(evaluation(viewer.identity, "groups.list"))
      })
    const echoed = await ask({ "x-request-id": "bfe9eb29-ab87-4ca3-be83-a1d5d8305716" })
    assert.strictEqual(echoed.status, 200)
    assert.strictEqual(echoed.headers.get("x-request-id"), "bfe9eb29-ab87-4ca3-be83-a1d5d8305716")
    const refused = await fetch(`${server.url}/access/v1/evaluation`, {
      method: "POST",
      headers: { "x-request-id": "req-401", "content-type": "application/json" },
      body: "{}"
    })
    assert.strictEqual(refused.status, 401)
    assert.strictEqual(refused.headers.get("x-request-id"), "req-401", "on a refusal too")
    const own = (await ask({})).headers.get("x-request-id")
    assert.match(own ?? "", /^[0-9a-z]+-[0-9a-z]+$/)
  })

  it("publishes its endpoints at /.well-known/authzen-configuration, to anyone", async () => {
    const response = await fetch(`${server.url}/.well-known/authzen-configuration`)
    assert.strictEqual(response.status, 200)
    assert.deepStrictEqual(await response.json(), {
      policy_decision_point: server.url,
      access_evaluation_endpoint: `${server.url}/access/v1/evaluation`,
      access_evaluations_endpoint: `${server.url}/access/v1/evaluations`,
      search_subject_endpoint: `${server.url}/access/v1/search/subject`,
      search_resource_endpoint: `${server.url}/access/v1/search/resource`,
      search_action_endpoint: `${server.url}/access/v1/search/action`
    })
  })

  it("an evaluation: 200 with the decision, false included; explain names the binding; a revocation flips it", async () => {
    const held = await post("/access/v1/evaluation", viewer.token, evaluation(viewer.identity, "groups.list"))
    assert.deepStrictEqual([held.status, held.body], [200, { decision: true }])
    const notHeld = await post("/access/v1/evaluation", viewer.token, evaluation(viewer.identity, "groups.delete"))
    assert.deepStrictEqual([notHeld.status, notHeld.body], [200, { decision: false }])
    const explained = await post(
      "/access/v1/evaluation",
      viewer.token,
      evaluation(viewer.identity, "CAP_IAM_GROUPS_LIST", { explain: true })
    )
    const [grant] = explained.body.context.grantedBy
    assert.deepInclude(grant, { group: owner.org })
    // The owner asks about the viewer (role_bindings.list there); someone of another organization may not.
    assert.isTrue(
      (await post("/access/v1/evaluation", owner.token, evaluation(viewer.identity, "groups.list"))).body.decision
    )
    const stranger = await server.runtime.runPromise(member("undecided"))
    const refused = await post("/access/v1/evaluation", stranger.token, evaluation(owner.identity, "groups.list"))
    assert.strictEqual(refused.status, 403)
    await server.runtime.runPromise(
      Effect.flatMap(RoleBindings.RoleBindings, (bindings) => bindings.delete(Principal.system, grant.binding))
    )
    const revoked = await post("/access/v1/evaluation", viewer.token, evaluation(viewer.identity, "groups.list"))
    assert.deepStrictEqual(revoked.body, { decision: false })
  })

  it("subject and resource searches: who may act here, and where one may; paged; unknown types find nothing", async () => {
    // An organization of its own: other tests revoke bindings of theirs.
    const owner = await server.runtime.runPromise(member("searched"))
    const viewer = await server.runtime.runPromise(member("searched", "viewer"))
    const outsider = await server.runtime.runPromise(member("elsewhere"))
    const who = (token: string, action: string, page?: object) =>
      post("/access/v1/search/subject", token, {
        subject: { type: "identity" },
        action: { name: action },
        resource: { type: "group", id: owner.org },
        ...(page === undefined ? {} : { page })
      })
    const listers = await who(owner.token, "groups.list")
    assert.strictEqual(listers.status, 200, JSON.stringify(listers.body))
    const ids = listers.body.results.map((r: { id: string }) => r.id)
    assert.includeMembers(ids, [owner.identity, viewer.identity])
    assert.isTrue(listers.body.results.every((r: { type: string }) => r.type === "identity"))
    const deleters = (await who(owner.token, "groups.delete")).body.results.map((r: { id: string }) => r.id)
    assert.include(deleters, owner.identity)
    assert.notInclude(deleters, viewer.identity, "a viewer may not delete")
    // Paged: one at a time, every one found once.
    const seen: Array<string> = []
    let page = await who(owner.token, "groups.list", { limit: 1 })
    for (let i = 0; i < 20; i++) {
      seen.push(...page.body.results.map((r: { id: string }) => r.id))
      if (!page.body.page?.next_token) break // absent, or "" on the last page
      page = await who(owner.token, "groups.list", { limit: 1, token: page.body.page.next_token })
    }
    assert.deepStrictEqual(seen, ids)
    assert.strictEqual((await who(outsider.token, "groups.list")).status, 403, "only for who may list the bindings")
    const unknown = await post("/access/v1/search/subject", owner.token, {
      subject: { type: "user" },
      action: { name: "groups.list" },
      resource: { type: "group", id: owner.org }
    })
    assert.deepStrictEqual([unknown.status, unknown.body.results], [200, []])

    const where = (token: string, subject: string, action: string, type = "group") =>
      post("/access/v1/search/resource", token, {
        subject: { type: "identity", id: subject },
        action: { name: action },
        resource: { type }
      })
    const mine = await where(viewer.token, viewer.identity, "groups.list")
    assert.strictEqual(mine.status, 200, JSON.stringify(mine.body))
    assert.deepInclude(mine.body.results, { type: "group", id: owner.org })
    assert.deepStrictEqual((await where(viewer.token, viewer.identity, "groups.delete")).body.results, [])
    assert.deepStrictEqual(
      (await where(outsider.token, viewer.identity, "groups.list")).body.results,
      [],
      "another identity's, only where the caller may list bindings"
    )
    assert.deepInclude((await where(owner.token, viewer.identity, "groups.list")).body.results, {
      type: "group",
      id: owner.org
    })
    assert.deepStrictEqual((await where(owner.token, owner.identity, "groups.list", "document")).body.results, [])
  })

  it("a resource search answers only what its caller may list: a puller finds no identities, bindings or invites", async () => {
    const owner = await server.runtime.runPromise(member("pulled"))
    const puller = await server.runtime.runPromise(member("pulled", "registry.pull"))
    const made = async (path: string, body: object) => {
      const reply = await post(path, owner.token, body)
      assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
      return (reply.body.uid ?? reply.body.id) as string // v1's repos say `id`
    }
    const invite = await made(`/iam/v2beta1/groupInvites/${owner.org}`, { roleUid: viewerRole })
    const subscription = await made(`/events/v2beta1/subscriptions/${owner.org}`, {
      sink: "http://127.0.0.1:9/searched"
    })
    const repo = await made(`/registry/v1/repos/${owner.org}`, { name: "app" })
    const found = async (type: string, action: string) =>
      (await post("/access/v1/search/resource", puller.token, {
        subject: { type: "identity", id: puller.identity },
        action: { name: action },
        resource: { type }
      })).body.results.map((r: { id: string }) => r.id)
    // It holds groups.list and repo.list where these live, and lists none of identities, bindings, invites or
    // subscriptions there: a search tells it none of their uids.
    for (const type of ["identity", "role_binding", "group_invite", "subscription"]) {
      assert.deepStrictEqual(await found(type, "groups.list"), [], type)
    }
    assert.deepStrictEqual(await found("repo", "repo.list"), [repo], "what it may list, it finds")
    const owned = (type: string) =>
      post("/access/v1/search/resource", owner.token, {
        subject: { type: "identity", id: owner.identity },
        action: { name: "groups.list" },
        resource: { type }
      })
    assert.includeMembers((await owned("group_invite")).body.results.map((r: { id: string }) => r.id), [invite])
    assert.includeMembers((await owned("subscription")).body.results.map((r: { id: string }) => r.id), [subscription])
  })

  it("evaluations with each semantic; search/action lists what is held; bad input names the field; 401 without a token", async () => {
    const batch = (semantic: string) =>
      post("/access/v1/evaluations", owner.token, {
        subject: { type: "identity", id: owner.identity },
        resource: { type: "group", id: owner.org },
        evaluations: [
          { action: { name: "groups.list" } },
          { action: { name: "groups.delete" }, resource: { type: "group", id: viewer.identity.split("/")[0] } },
          { action: { name: "repo.create" } }
        ],
        options: { evaluations_semantic: semantic }
      })
    const decisions = async (semantic: string) =>
      (await batch(semantic)).body.evaluations.map((d: { decision: boolean }) => d.decision)
    assert.deepStrictEqual(await decisions("execute_all"), [true, true, true])
    const searched = await post("/access/v1/search/action", owner.token, {
      subject: { type: "identity", id: owner.identity },
      resource: { type: "repo", id: `${owner.org}/0123456789abcdef` }
    })
    assert.include(searched.body.results.map((r: { name: string }) => r.name), "repo.update")
    const bad = await post("/access/v1/evaluation", owner.token, {
      ...evaluation(owner.identity, "groups.list"),
      resource: { type: "document", id: owner.org }
    })
    assert.strictEqual(bad.status, 400)
    assert.strictEqual(bad.body.details[1].fieldViolations[0].field, "resource.type")
    // In a batch, an item that cannot be evaluated is its own false decision, saying why; a field is named as the
    // request wrote it (the batch's own subject at the top, an item's below it).
    const mixed = await post("/access/v1/evaluations", owner.token, {
      subject: { type: "identity", id: owner.identity },
      resource: { type: "group", id: owner.org },
      evaluations: [
        { action: { name: "groups.list" } },
        { action: { name: "groups.list" }, resource: { type: "document", id: owner.org } },
        { action: { name: "groups.list" }, subject: { type: "identity", id: viewer.identity } }
      ]
    })
    assert.strictEqual(mixed.status, 200, JSON.stringify(mixed.body))
    assert.deepStrictEqual(mixed.body.evaluations[0], { decision: true })
    assert.deepInclude(mixed.body.evaluations[1], { decision: false })
    assert.strictEqual(mixed.body.evaluations[1].context.error.status, 400)
    assert.include(mixed.body.evaluations[1].context.error.message, "evaluations[1].resource.type")
    const asViewer = await post("/access/v1/evaluations", viewer.token, {
      subject: { type: "user", id: viewer.identity },
      action: { name: "groups.list" },
      evaluations: [{ resource: { type: "group", id: owner.org } }, { resource: { type: "group", id: owner.org } }]
    })
    assert.strictEqual(asViewer.status, 200, JSON.stringify(asViewer.body))
    for (const item of asViewer.body.evaluations) {
      assert.strictEqual(item.decision, false)
      assert.include(item.context.error.message, ": subject.type:")
    }
    const anonymous = await fetch(`${server.url}/access/v1/evaluation`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(evaluation(owner.identity, "groups.list"))
    })
    assert.strictEqual(anonymous.status, 401)
  })
})
