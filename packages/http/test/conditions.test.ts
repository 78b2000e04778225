/**
 * Role bindings with a condition (DECISIONS §21, docs/api.md §15): written, refused and shown over REST and gRPC
 * (Arbor's own field 1003), decided and explained by AuthZEN with the request's properties and context.
 */
import { Groups, Identities, Principal, Role, RoleBindings, Roles } from "@arbor/core"
import * as grpc from "@grpc/grpc-js"
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { connect, failure } from "./grpcSupport.js"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member, tokenFor } from "./support.js"

let server: Awaited<ReturnType<typeof startServer>>
let port: number
let owner: { org: string; identity: string; token: string }
let worker: { org: string; identity: string; token: string }

const editor = Role.builtInByName("editor")!.uid

beforeAll(async () => {
  port = await freePort()
  server = await startServer(port, {})
  owner = await server.runtime.runPromise(member("conditional"))
  worker = await server.runtime.runPromise(member("conditional", "viewer"))
}, 30_000)

afterAll(async () => {
  await server?.close()
})

const rest = (method: string, path: string, token: string, body?: unknown) =>
  fetchJson(server.url, method, path, token, body)

/** The worker's AuthZEN decision on creating a repo in the organization, with `context`. */
const decide = (context: Record<string, unknown>) =>
  rest("POST", "/access/v1/evaluation", worker.token, {
    subject: { type: "identity", id: worker.identity },
    action: { name: "repo.create" },
    resource: { type: "group", id: owner.org, properties: { env: "staging" } },
    context
  })

describe("role bindings with a condition", () => {
  it("over REST: refused with a pointer into the expression, shown as written, decided and explained", async () => {
    const refused = await rest("POST", `/iam/v2beta1/roleBindings/${owner.org}`, owner.token, {
      identityUid: worker.identity,
      roleUid: editor,
      condition: { expression: `context.ticket.startsWith("CHG-") && resource.propertes.env == "staging"` }
    })
    assert.strictEqual(refused.status, 400)
    const violation = refused.body.details.find((d: { fieldViolations?: unknown }) => d.fieldViolations)
      .fieldViolations[0]
    assert.strictEqual(violation.field, "condition.expression")
    assert.match(violation.description, /propertes.*at character 47/)
    const none = await rest("GET", `/iam/v2beta1/roleBindings?identity=${worker.identity}&role=${editor}`, owner.token)
    assert.deepStrictEqual(none.body.roleBindings, [], "nothing written")

    const condition = {
      expression: `context.ticket.startsWith("CHG-") && resource.properties.env == "staging"`,
      title: "changes to staging",
      description: "with a change ticket"
    }
    const made = await rest("POST", `/iam/v2beta1/roleBindings/${owner.org}`, owner.token, {
      identityUid: worker.identity,
      roleUid: editor,
      condition
    })
    assert.strictEqual(made.status, 200, JSON.stringify(made.body))
    assert.deepStrictEqual(made.body.condition, condition)
    const read = await rest("GET", `/iam/v2beta1/roleBindings/${made.body.uid}`, owner.token)
    assert.deepStrictEqual(read.body.condition, condition)

    assert.isTrue((await decide({ ticket: "CHG-7" })).body.decision)
    assert.isFalse((await decide({ ticket: "INC-7" })).body.decision)
    const undecided = await decide({ explain: true })
    assert.isFalse(undecided.body.decision, "a missing attribute denies")
    assert.deepInclude(undecided.body.context.unmetConditions[0], { binding: made.body.uid })
    assert.match(undecided.body.context.unmetConditions[0].condition.error, /ticket/)
    const explained = await decide({ ticket: "CHG-7", explain: true })
    assert.deepInclude(explained.body.context.grantedBy[0].condition, { title: "changes to staging", held: true })

    // Its change-log entry carries the condition, as the audit trail shows it.
    const logged = await rest("GET", `/events/v2beta1/events?subject=${made.body.uid}`, owner.token)
    assert.include(JSON.stringify(logged.body), "changes to staging")

    // Removed by an update: the binding grants everywhere in its group again.
    const cleared = await rest(
      "PATCH",
      `/iam/v2beta1/roleBindings/${made.body.uid}?updateMask=condition`,
      owner.token,
      {}
    )
    assert.strictEqual(cleared.status, 200, JSON.stringify(cleared.body))
    assert.notProperty(cleared.body, "condition")
    assert.isTrue((await decide({})).body.decision)
    await rest("DELETE", `/iam/v2beta1/roleBindings/${made.body.uid}`, owner.token)
  })

  it("over gRPC: Arbor's protos carry the condition (field 1003)", async () => {
    const own = connect(join(import.meta.dirname, "../../api/proto"), `127.0.0.1:${port}`)
    try {
      const bindings = own.service("chainguard.platform.iam.v2beta1.RoleBindingsService")
      const made = await bindings.CreateRoleBinding({
        parent: owner.org,
        roleBinding: {
          identityUid: worker.identity,
          roleUid: editor,
          condition: { expression: `request.time.getFullYear() < 2100`, title: "this century" }
        }
      }, owner.token)
      assert.deepInclude(made.condition, { expression: `request.time.getFullYear() < 2100`, title: "this century" })
      const rested = await rest("GET", `/iam/v2beta1/roleBindings/${made.uid}`, owner.token)
      assert.strictEqual(rested.body.condition.title, "this century")
      await bindings.DeleteRoleBinding({ uid: made.uid }, owner.token)
    } finally {
      own.close()
    }
  })

  it("one answer on every surface: a condition on the name decides REST, gRPC, lists and AuthZEN alike", async () => {
    // A viewer at folder `team` while the group decided at is named `alpha`: it may read alpha, not its sibling.
    const { alpha, beta, team, token, reader } = await server.runtime.runPromise(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const team = yield* groups.create(Principal.system, owner.org, { name: "team" })
      const alpha = yield* groups.create(Principal.system, team.uid, { name: "alpha" })
      const beta = yield* groups.create(Principal.system, team.uid, { name: "beta" })
      const reader = yield* (yield* Identities.Identities).create(Principal.system, owner.org, {
        name: "reader",
        claimMatch: { issuer: "https://issuer.example.com", subject: "conditional-reader" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, team.uid, {
        identityUid: reader.uid,
        roleUid: Role.builtInByName("viewer")!.uid,
        condition: { expression: `resource.name == "alpha"`, title: "alpha only" }
      })
      return { alpha, beta, team, reader: reader.uid, token: yield* tokenFor(reader.uid) }
    }))
    assert.strictEqual((await rest("GET", `/iam/v2beta1/groups/${alpha.uid}`, token)).status, 200)
    assert.strictEqual((await rest("GET", `/iam/v2beta1/groups/${beta.uid}`, token)).status, 403)
    assert.strictEqual((await rest("GET", `/iam/v2beta1/groups/${team.uid}`, token)).status, 403)
    const listed = await rest("GET", `/iam/v2beta1/groups?uidp.children_of=${team.uid}`, token)
    assert.deepStrictEqual(listed.body.groups.map((g: { uid: string }) => g.uid), [alpha.uid])
    assert.strictEqual(listed.body.totalCount, "1")
    const v1 = await rest("GET", `/iam/v1/groups?id=${beta.uid}`, token)
    assert.deepStrictEqual(v1.body.items, [], "v1 lists what v2 lists")

    const protos = process.env.ARBOR_TEST_PROTOS ?? join(import.meta.dirname, "../../api/proto")
    const client = connect(protos, `127.0.0.1:${port}`)
    try {
      const groups = client.service("chainguard.platform.iam.v2beta1.GroupsService")
      assert.strictEqual((await groups.GetGroup({ uid: alpha.uid }, token)).name, "alpha")
      assert.strictEqual((await failure(groups.GetGroup({ uid: beta.uid }, token))).code, grpc.status.PERMISSION_DENIED)
      const page = await groups.ListGroups({ uidp: { childrenOf: team.uid } }, token)
      assert.deepStrictEqual(page.groups.map((g: { uid: string }) => g.uid), [alpha.uid])
    } finally {
      client.close()
    }

    for (const [group, expected] of [[alpha, true], [beta, false]] as const) {
      const decided = await rest("POST", "/access/v1/evaluation", token, {
        subject: { type: "identity", id: reader },
        action: { name: "groups.list" },
        resource: { type: "group", id: group.uid }
      })
      assert.strictEqual(decided.body.decision, expected, group.name)
    }
    const found = await rest("POST", "/access/v1/search/resource", token, {
      subject: { type: "identity", id: reader },
      action: { name: "groups.list" },
      resource: { type: "group" }
    })
    assert.deepStrictEqual(found.body.results, [{ type: "group", id: alpha.uid }], "a search honours it too")

    // Renaming beta (to alpha, say) could show it to the reader: refused to one who does not hold what viewer gives
    // there.
    const renamer = await server.runtime.runPromise(Effect.gen(function*() {
      const role = yield* (yield* Roles.Roles).create(Principal.system, owner.org, {
        name: "renamer",
        capabilities: ["groups.update", "groups.list"]
      })
      const identity = yield* (yield* Identities.Identities).create(Principal.system, owner.org, {
        name: "renamer",
        claimMatch: { issuer: "https://issuer.example.com", subject: "conditional-renamer" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, team.uid, {
        identityUid: identity.uid,
        roleUid: role.uid
      })
      return yield* tokenFor(identity.uid)
    }))
    const described = await rest("PATCH", `/iam/v2beta1/groups/${beta.uid}?updateMask=description`, renamer, {
      description: "no condition reads it"
    })
    assert.strictEqual(described.status, 200, JSON.stringify(described.body))
    const taken = await rest("PATCH", `/iam/v2beta1/groups/${beta.uid}?updateMask=name`, renamer, { name: "alpha" })
    assert.strictEqual(taken.status, 403, JSON.stringify(taken.body))
    assert.strictEqual((await rest("GET", `/iam/v2beta1/groups/${beta.uid}`, token)).status, 403)
  })
})
