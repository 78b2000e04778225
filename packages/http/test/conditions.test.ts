/**
 * Role bindings with a condition (DECISIONS §21, docs/api.md §15): written, refused and shown over REST and gRPC
 * (Arbor's own field 1003), decided and explained by AuthZEN with the request's properties and context.
 */
import { Role } from "@arbor/core"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { connect } from "./grpcSupport.js"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

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
})
