/**
 * The audit trail over HTTP (docs/api.md §12): who changed what, read back by list and by watch (Server-Sent
 * Events), with the same visibility; writes over REST and gRPC both recorded with their request.
 */
import { Identities, Principal, RoleBindings, Roles } from "@arbor/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { clientProtos, comparable, connect } from "./grpcSupport.js"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member, tokenFor, watch } from "./support.js"

const created = "dev.chainguard.api.iam.group.created.v1"
const updated = "dev.chainguard.api.iam.group.updated.v1"

describe("the audit trail over HTTP", () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let owner: { org: string; identity: string; token: string }
  let stranger: { org: string; identity: string; token: string }
  const rest = (method: string, path: string, token: string, body?: unknown) =>
    fetchJson(server.url, method, path, token, body)

  beforeAll(async () => {
    server = await startServer(await freePort(), {})
    owner = await server.runtime.runPromise(member("acme"))
    stranger = await server.runtime.runPromise(member("elsewhere"))
  })
  afterAll(async () => {
    await server?.close()
  })

  it("records a REST write with its actor, the token's act and the request id; the body is v2 JSON", async () => {
    const response = await fetch(`${server.url}/iam/v2beta1/groups/${owner.org}`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "platform", description: "the platform team" })
    })
    const folder = await response.json() as { uid: string }
    const listed = await rest("GET", `/events/v2beta1/events?subject=${folder.uid}`, owner.token)
    assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
    assert.strictEqual(listed.body.totalCount, "1")
    const [entry] = listed.body.events
    assert.strictEqual(entry.type, created)
    assert.strictEqual(entry.kind, "group")
    assert.strictEqual(entry.group, folder.uid)
    assert.deepStrictEqual(entry.actor, {
      subject: owner.identity,
      act: { iss: "https://tests.invalid", sub: "tests" }
    })
    assert.strictEqual(entry.requestId, response.headers.get("x-request-id"))
    assert.deepStrictEqual(entry.body, folder, "the body is the resource as the API returned it")
    assert.match(entry.cursor, /^[0-9]{40}$/)
    assert.match(entry.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

    const role = await rest("POST", `/iam/v2beta1/roles/${owner.org}`, owner.token, {
      name: "auditor",
      capabilities: ["subscriptions.list"]
    })
    const roleEntry = await rest("GET", `/events/v2beta1/events?subject=${role.body.uid}`, owner.token)
    assert.deepStrictEqual(roleEntry.body.events[0].body.capabilities, ["CAP_EVENTS_SUBSCRIPTION_LIST"])

    // An update keeps the resource before it, in the same v2 JSON: what changed is where the two differ.
    await rest("PATCH", `/iam/v2beta1/roles/${role.body.uid}?update_mask=capabilities`, owner.token, {
      capabilities: ["subscriptions.list", "repo.delete"]
    })
    const changed = await rest("GET", `/events/v2beta1/events?subject=${role.body.uid}&kind=role`, owner.token)
    const [made, updated] = changed.body.events
    assert.isUndefined(made.before)
    assert.deepStrictEqual(updated.before.capabilities, ["CAP_EVENTS_SUBSCRIPTION_LIST"])
    assert.deepStrictEqual(updated.body.capabilities, ["CAP_REPO_DELETE", "CAP_EVENTS_SUBSCRIPTION_LIST"])
    // By kind: every change to roles, none to folders.
    const folders = await rest("GET", `/events/v2beta1/events?subject=${role.body.uid}&kind=group`, owner.token)
    assert.strictEqual(folders.body.totalCount, "0")
  })

  it("records a gRPC write with its own request id", async () => {
    const clients = connect(clientProtos, new URL(server.url).host)
    try {
      const groups = clients.service("chainguard.platform.iam.v2beta1.GroupsService")
      const folder = await groups.CreateGroup({ parent: owner.org, group: { name: "over-grpc" } }, owner.token)
      const listed = await rest("GET", `/events/v2beta1/events?subject=${folder.uid}`, owner.token)
      const [entry] = listed.body.events
      assert.strictEqual(entry.actor.subject, owner.identity)
      assert.match(entry.requestId, /^[0-9a-z]+-[0-9a-z]+$/)
      assert.deepStrictEqual(comparable(entry.body), comparable(folder))
    } finally {
      clients.close()
    }
  })

  it("shows a caller only the entries of groups where it holds subscriptions.list", async () => {
    const mine = await rest("GET", `/events/v2beta1/events?uidp.descendants_of=${owner.org}`, stranger.token)
    assert.strictEqual(mine.status, 200)
    assert.strictEqual(mine.body.totalCount, "0")
    const own = await rest("GET", "/events/v2beta1/events", stranger.token)
    assert.isTrue(own.body.events.every((e: { group: string }) => e.group.startsWith(stranger.org)))
    const newest = await rest("GET", "/events/v2beta1/events?order_by=time%20desc&page_size=1", owner.token)
    assert.strictEqual(newest.body.events.length, 1)
    assert.isString(newest.body.nextPageToken)
  })

  it("history is not rewritten: a binding's entries keep the names of an identity and a folder deleted since", async () => {
    // gone-bot in folder ops, bound viewer there; then its binding, it and the folder deleted.
    const folder = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "ops" })
    const bot = await rest("POST", `/iam/v2beta1/identities/${folder.body.uid}`, owner.token, {
      name: "gone-bot",
      claimMatch: { issuer: "https://issuer.example.com", subject: "gone-bot" }
    })
    const viewer = (await rest("GET", "/iam/v2beta1/roles?name=viewer", owner.token)).body.roles[0].uid
    const binding = await rest("POST", `/iam/v2beta1/roleBindings/${folder.body.uid}`, owner.token, {
      identityUid: bot.body.uid,
      roleUid: viewer
    })
    assert.strictEqual(binding.status, 200, JSON.stringify(binding.body))
    for (
      const path of [`roleBindings/${binding.body.uid}`, `identities/${bot.body.uid}`, `groups/${folder.body.uid}`]
    ) {
      assert.strictEqual((await rest("DELETE", `/iam/v2beta1/${path}`, owner.token)).status, 200, path)
    }
    const written = (token: string) =>
      rest("GET", `/events/v2beta1/events?subject=${encodeURIComponent(binding.body.uid)}`, token).then((r) =>
        r.body.events.map((e: { type: string; body: { identity: { name: string }; group: { name: string } } }) => [
          e.type.split(".").at(-2),
          e.body.identity.name,
          e.body.group.name
        ])
      )
    assert.deepStrictEqual(await written(owner.token), [["created", "gone-bot", "ops"], ["deleted", "gone-bot", "ops"]])
    // A reader who may read the trail but not identities where the bot lived sees its uid alone.
    const auditor = await server.runtime.runPromise(
      Effect.gen(function*() {
        const role = yield* (yield* Roles.Roles).create(Principal.system, owner.org, {
          name: "trail reader",
          capabilities: ["subscriptions.list"]
        })
        const identity = yield* (yield* Identities.Identities).create(Principal.system, owner.org, {
          name: "auditor",
          claimMatch: { issuer: "https://issuer.example.com", subject: "auditor" }
        })
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, owner.org, {
          identityUid: identity.uid,
          roleUid: role.uid
        })
        return yield* tokenFor(identity.uid)
      }).pipe(Effect.orDie)
    )
    assert.deepStrictEqual(await written(auditor), [["created", "", ""], ["deleted", "", ""]])
  })

  it("refuses bad filters and cursors, naming each", async () => {
    const bad = await rest("GET", "/events/v2beta1/events?since=yesterday&subject=nope", owner.token)
    assert.strictEqual(bad.status, 400)
    assert.strictEqual(bad.body.code, 3)
    const fields = bad.body.details.find((d: { "@type": string }) => d["@type"].endsWith("BadRequest")).fieldViolations
    assert.sameMembers(fields.map((f: { field: string }) => f.field), ["since", "subject"])
    const kind = await rest("GET", "/events/v2beta1/events?kind=folders", owner.token)
    assert.strictEqual(kind.status, 400)
    assert.include(JSON.stringify(kind.body), "'folders' is no kind of resource")
    const cursor = await watch(`${server.url}/events/v2beta1/events:watch?after=42`, owner.token, 1)
    assert.strictEqual(cursor.status, 400)
    const header = await watch(`${server.url}/events/v2beta1/events:watch`, owner.token, 1, { "last-event-id": "x" })
    assert.strictEqual(header.status, 400)
  })

  it("subscriptions over REST: create, get, list, delete; bad sinks named; each write in the trail", async () => {
    const created = await rest("POST", `/events/v2beta1/subscriptions/${owner.org}`, owner.token, {
      sink: "http://127.0.0.1:9/hook"
    })
    assert.strictEqual(created.status, 200, JSON.stringify(created.body))
    assert.strictEqual(created.body.sink, "http://127.0.0.1:9/hook")
    assert.strictEqual(created.body.createdBy, owner.identity)
    const got = await rest("GET", `/events/v2beta1/subscriptions/${created.body.uid}`, owner.token)
    // Read back with how its deliveries stand (output only, on reads).
    const { health, ...stored } = got.body
    assert.deepStrictEqual(stored, created.body)
    assert.deepStrictEqual(health, { state: "ACTIVE", pending: 0 })
    const listed = await rest("GET", "/events/v2beta1/subscriptions", owner.token)
    assert.deepStrictEqual(listed.body.subscriptions.map((s: { uid: string }) => s.uid), [created.body.uid])
    const elsewhere = await rest("GET", `/events/v2beta1/subscriptions/${created.body.uid}`, stranger.token)
    assert.strictEqual(elsewhere.status, 403)
    for (const sink of ["http://hooks.example.invalid/x", "https://10.0.0.1/x", "ftp://127.0.0.1/x"]) {
      const refused = await rest("POST", `/events/v2beta1/subscriptions/${owner.org}`, owner.token, { sink })
      assert.strictEqual(refused.status, 400, sink)
      assert.match(refused.body.message, /^Invalid argument: sink: /, sink)
    }
    assert.strictEqual(
      (await rest("DELETE", `/events/v2beta1/subscriptions/${created.body.uid}`, owner.token)).status,
      200
    )
    assert.strictEqual(
      (await rest("DELETE", `/events/v2beta1/subscriptions/${created.body.uid}`, owner.token)).status,
      200
    )
    const trail = await rest("GET", `/events/v2beta1/events?subject=${created.body.uid}`, owner.token)
    assert.deepStrictEqual(trail.body.events.map((e: { type: string }) => e.type), [
      "dev.chainguard.api.events.subscription.created.v1",
      "dev.chainguard.api.events.subscription.deleted.v1"
    ])
  })

  it("subscriptions over gRPC, as REST answers them", async () => {
    const clients = connect(clientProtos, new URL(server.url).host)
    try {
      const subscriptions = clients.service("chainguard.platform.events.v2beta1.SubscriptionsService")
      const created = await subscriptions.CreateSubscription(
        { parent: owner.org, subscription: { sink: "http://127.0.0.1:9/grpc" } },
        owner.token
      )
      assert.deepStrictEqual(Object.keys(created).sort(), ["sink", "uid"])
      const got = await subscriptions.GetSubscription({ uid: created.uid }, owner.token)
      assert.deepStrictEqual(got, created)
      const listed = await subscriptions.ListSubscriptions({ uidp: { descendantsOf: owner.org } }, owner.token)
      assert.include(listed.subscriptions.map((s: { uid: string }) => s.uid), created.uid)
      const twin = await rest("GET", `/events/v2beta1/subscriptions/${created.uid}`, owner.token)
      assert.strictEqual(twin.body.sink, created.sink)
      await subscriptions.DeleteSubscription({ uid: created.uid }, owner.token)
      assert.strictEqual((await rest("GET", `/events/v2beta1/subscriptions/${created.uid}`, owner.token)).status, 404)
    } finally {
      clients.close()
    }
  })

  it("watch: Server-Sent Events from the cursor on; a reconnect with the last id misses and repeats nothing", async () => {
    const start = await rest("GET", "/events/v2beta1/events?order_by=time%20desc&page_size=1", owner.token)
    const from = start.body.events[0].cursor
    const watchUrl = `${server.url}/events/v2beta1/events:watch?uidp.descendants_of=${owner.org}`
    const a = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "a" })
    await rest("PATCH", `/iam/v2beta1/groups/${a.body.uid}`, owner.token, { description: "changed" })
    const first = await watch(watchUrl, owner.token, 2, { "last-event-id": from })
    assert.strictEqual(first.contentType, "text/event-stream")
    assert.deepStrictEqual(first.messages.map((m) => [m.event, m.data.subject]), [
      [created, a.body.uid],
      [updated, a.body.uid]
    ])
    assert.deepStrictEqual(first.messages.map((m) => m.id), first.messages.map((m) => m.data.cursor))

    // Writes while nobody watches, then a reconnect from the last id received.
    const b = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "b" })
    await rest("POST", `/iam/v2beta1/groups/${stranger.org}`, stranger.token, { name: "not acme" })
    const pending = watch(`${watchUrl}&after=${first.messages[1]!.id}`, owner.token, 2)
    const c = await rest("POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, { name: "c" })
    const second = await pending
    assert.deepStrictEqual(second.messages.map((m) => m.data.subject), [b.body.uid, c.body.uid])

    // A caller who may see nothing is refused at once rather than kept waiting.
    const nobody = await server.runtime.runPromise(member("acme", "registry.pull"))
    const refused = await watch(`${server.url}/events/v2beta1/events:watch`, nobody.token, 1)
    assert.strictEqual(refused.status, 403)
  })
})
