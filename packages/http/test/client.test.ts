/**
 * The typed client: `HttpApiClient.make(Api)` from the contract alone, against a live server. Results decode into
 * the engine's resource classes (v2 and v1 alike), and failures into the engine's typed errors.
 */
import { Api } from "@arbor/api/Api"
import * as ApiClient from "@arbor/api/Client"
import * as Names from "@arbor/api/Names"
import { Errors, Group, Role } from "@arbor/core"
import { Refusal } from "@arbor/core/testing"
import { HttpApiClient, HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { createAndList } from "./examples/client.js"
import { member, testServer } from "./support.js"

/** A client of the API with `token` as its bearer, or none. */
const client = (token?: string) =>
  HttpApiClient.make(Api, {
    transformClient: token === undefined ? undefined : HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
  })

describe("the typed client", () => {
  it.scopedLive("creates, reads and lists through the contract, into the engine's classes", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const api = yield* client(token)
      const team = yield* api.groups.create({ path: { uid: org }, payload: { name: "team", description: "d" } })
      assert.instanceOf(team, Group.Group)
      assert.isTrue(team.uid.startsWith(`${org}/`))
      assert.isTrue(DateTime.isDateTime(team.createTime))

      const sub = yield* api.groups.create({ path: { uid: team.uid }, payload: { name: "sub" } })
      const got = yield* api.groups.get({ path: { uid: sub.uid } })
      assert.deepStrictEqual(got, sub)

      const renamed = yield* api.groups.update({
        path: { uid: sub.uid },
        urlParams: { updateMask: "name" },
        payload: { name: "sub2" }
      })
      assert.strictEqual(renamed.name, "sub2")

      const page = yield* api.groups.list({ urlParams: { descendantsOf: org, pageSize: 1 } })
      assert.strictEqual(page.groups.length, 1)
      assert.strictEqual(page.totalCount, 2)
      assert.isString(page.nextPageToken)

      const viewer = (yield* api.roles.list({ urlParams: { name: "viewer" } })).roles[0]!
      assert.instanceOf(viewer, Role.Role)
      assert.include(viewer.capabilities, "groups.list")
      const viewerV1 = (yield* api.rolesV1.list({ urlParams: {} })).items.find((r) => r.name === "viewer")
      assert.deepStrictEqual(viewerV1, viewer)

      const v1 = (yield* api.groupsV1.list({ urlParams: { ids: [sub.uid] } })).items
      assert.deepStrictEqual(v1, [renamed])

      yield* api.groups.delete({ path: { uid: sub.uid } })
      assert.deepStrictEqual(yield* api.health.live(), { status: "ok" })
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("fails with the engine's typed errors", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("acme")
      const other = yield* member("globex")
      const api = yield* client(token)

      const invalid = yield* Refusal.of(api.groups.create({ path: { uid: org }, payload: { name: "BAD" } }))
      assert.instanceOf(invalid, Errors.InvalidArgument)
      assert.strictEqual(invalid._tag === "InvalidArgument" && invalid.violations[0].field, "name")

      yield* api.groups.create({ path: { uid: org }, payload: { name: "team" } })
      const exists = yield* Refusal.of(api.groups.create({ path: { uid: org }, payload: { name: "team" } }))
      assert.instanceOf(exists, Errors.AlreadyExists)
      assert.strictEqual(exists._tag === "AlreadyExists" && exists.resourceType, "group")

      const missing = yield* Refusal.of(api.groups.get({ path: { uid: `${org}/0123456789abcdef` } }))
      assert.deepStrictEqual(missing, new Errors.NotFound({ resourceType: "group", uid: `${org}/0123456789abcdef` }))

      const denied = yield* api.groups.get({ path: { uid: other.org } }).pipe(
        Effect.as("allowed"),
        Effect.catchTag("PermissionDenied", (e) => Effect.succeed(`${e.capability} on ${e.resource}`))
      )
      assert.strictEqual(denied, `groups.list on ${other.org}`)

      const notEmpty = yield* Refusal.of(api.groups.delete({ path: { uid: org } }))
      assert.instanceOf(notEmpty, Errors.FailedPrecondition)
      assert.strictEqual(notEmpty._tag === "FailedPrecondition" && notEmpty.violations[0].type, "RESOURCE_NOT_EMPTY")

      const anonymous = yield* client()
      const unauthenticated = yield* Refusal.of(anonymous.groups.list({ urlParams: {} }))
      assert.instanceOf(unauthenticated, Errors.Unauthenticated)
      assert.strictEqual(
        unauthenticated._tag === "Unauthenticated" && unauthenticated.reason,
        "MISSING_TOKEN"
      )
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("the README's client example runs against a live server", () =>
    Effect.gen(function*() {
      const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
      const example = readFileSync(new URL("examples/client.ts", import.meta.url), "utf8")
      assert.include(readme, "```ts\n" + example + "```")
      const address = (yield* HttpServer.HttpServer).address
      const baseUrl = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : ""
      const { org, token } = yield* member("acme")
      const outsider = yield* member("globex")
      const { created, names } = yield* Effect.promise(() => createAndList(baseUrl, token, org, "team"))
      assert.deepStrictEqual(names, ["team"])
      assert.isTrue(DateTime.isDateTime(created))
      const refused = yield* Effect.promise(() => createAndList(baseUrl, outsider.token, org, "x").catch(String))
      assert.include(refused, `you need groups.create on ${org}`)
    }).pipe(Effect.provide(testServer())))

  it.scopedLive("names: what a person types to uids, and uids back to names as far as the caller may read them", () =>
    Effect.gen(function*() {
      const { org, token } = yield* member("names")
      const api = yield* ApiClient.make({ token })
      const platform = yield* api.groups.create({ path: { uid: org }, payload: { name: "platform" } })
      const ci = yield* api.identities.create({
        path: { uid: platform.uid },
        payload: { name: "ci", claimMatch: { issuer: "https://issuer.example.com", subject: "ci" } }
      })
      const role = yield* api.roles.create({
        path: { uid: platform.uid },
        payload: { name: "viewer", capabilities: ["groups.list"] }
      })
      // Typed: a uid as it is, a group's path, an identity's group path and name, a role by name or group path.
      assert.strictEqual(yield* Names.group(api, "names/platform"), platform.uid)
      assert.strictEqual(yield* Names.group(api, platform.uid), platform.uid)
      assert.strictEqual(yield* Names.identity(api, "names/platform/ci"), ci.uid)
      assert.strictEqual(yield* Names.role(api, "editor"), Role.builtInByName("editor")!.uid)
      assert.strictEqual(yield* Names.role(api, "names/platform/viewer"), role.uid)
      // Two roles the caller sees are named viewer: the name alone is refused, saying how to name one.
      const ambiguous = yield* Refusal.of(Names.role(api, "viewer"))
      assert.strictEqual(ambiguous._tag, "InvalidArgument")
      assert.include(ambiguous.message, "several roles are named viewer")
      const missing = yield* Refusal.of(Names.identity(api, "names/platform/nobody"))
      assert.deepInclude(missing, { _tag: "NotFound", resourceType: "identity", uid: "names/platform/nobody" })
      // Read: paths of names, each looked up once; a uid the caller may not read stays a uid.
      const names = yield* Names.reader(api)
      assert.strictEqual(yield* names.group(platform.uid), "names/platform")
      assert.strictEqual(yield* names.identity(ci.uid), "names/platform/ci")
      assert.strictEqual(yield* names.role(role.uid), "viewer")
      const stranger = yield* member("elsewhere")
      const theirs = yield* ApiClient.make({ token: stranger.token })
      assert.strictEqual(yield* (yield* Names.reader(theirs)).group(platform.uid), platform.uid)
      // One given a folder of an organization it cannot read: the end of the path it may read, and its own name.
      const invited = yield* member("names", "editor", () => platform.uid)
      const invitedNames = yield* Names.reader(yield* ApiClient.make({ token: invited.token }))
      assert.strictEqual(yield* invitedNames.group(platform.uid), "…/platform")
      assert.strictEqual(yield* invitedNames.identity(ci.uid), "…/platform/ci")
      assert.match(yield* invitedNames.identity(invited.identity), /^editor /)
      // A folder deleted since keeps the path it had, as the audit trail recorded it (history is not rewritten); to a
      // reader who could not read it there, its uid.
      const gone = yield* api.groups.create({ path: { uid: platform.uid }, payload: { name: "gone" } })
      yield* api.groups.delete({ path: { uid: gone.uid } })
      assert.strictEqual(yield* (yield* Names.reader(api)).group(gone.uid), "names/platform/gone")
      assert.strictEqual(yield* (yield* Names.reader(theirs)).group(gone.uid), gone.uid)
    }).pipe(Effect.provide(testServer())))
})
