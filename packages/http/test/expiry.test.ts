/**
 * Role bindings that end (DECISIONS §21, docs/api.md §10): `expireTime` and `startTime` over REST and over gRPC
 * (Arbor's own fields 1000 and up, which a client on the reference protos skips), and the decision at the end.
 */
import { Role } from "@arbor/core"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { connect, referenceProtos } from "./grpcSupport.js"
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
  owner = await server.runtime.runPromise(member("ending"))
  worker = await server.runtime.runPromise(member("ending", "viewer"))
}, 30_000)

afterAll(async () => {
  await server?.close()
})

const rest = (method: string, path: string, token: string, body?: unknown) =>
  fetchJson(server.url, method, path, token, body)

/** Whether the worker may create repos in the organization, as AuthZEN decides it. */
const mayCreateRepos = async () =>
  (await rest("POST", "/access/v1/evaluation", worker.token, {
    subject: { type: "identity", id: worker.identity },
    action: { name: "repo.create" },
    resource: { type: "group", id: owner.org }
  })).body.decision as boolean

describe("role bindings that end", () => {
  it("over REST: an expiry given, shown, extended; at its end the decision flips and the binding is listed as ended", async () => {
    const past = await rest("POST", `/iam/v2beta1/roleBindings/${owner.org}`, owner.token, {
      identityUid: worker.identity,
      roleUid: editor,
      expireTime: "2020-01-01T00:00:00Z"
    })
    assert.strictEqual(past.status, 400)
    assert.include(JSON.stringify(past.body), "expireTime: must be in the future")
    const ends = new Date(Date.now() + 2_000).toISOString()
    const made = await rest("POST", `/iam/v2beta1/roleBindings/${owner.org}`, owner.token, {
      identityUid: worker.identity,
      roleUid: editor,
      expireTime: ends
    })
    assert.strictEqual(made.status, 200, JSON.stringify(made.body))
    assert.strictEqual(made.body.expireTime, ends)
    assert.notProperty(made.body, "state")
    assert.isTrue(await mayCreateRepos())
    // Explained, the grant says when it ends.
    const explained = await rest("POST", "/access/v1/evaluation", worker.token, {
      subject: { type: "identity", id: worker.identity },
      action: { name: "repo.create" },
      resource: { type: "group", id: owner.org },
      context: { explain: true }
    })
    assert.deepStrictEqual(
      explained.body.context.grantedBy.map((g: { binding?: string; expireTime?: string }) => [g.binding, g.expireTime]),
      [[made.body.uid, ends]]
    )
    await new Promise((resolve) => setTimeout(resolve, Date.parse(ends) - Date.now() + 10))
    assert.isFalse(await mayCreateRepos(), "denied from its end, with no write")
    const listed = await rest(
      "GET",
      `/iam/v2beta1/roleBindings?identity=${worker.identity}&role=${editor}`,
      owner.token
    )
    assert.deepInclude(listed.body.roleBindings[0], { uid: made.body.uid, expireTime: ends, state: "ENDED" })
    // Extended: it grants again.
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const extended = await rest(
      "PATCH",
      `/iam/v2beta1/roleBindings/${made.body.uid}?updateMask=expireTime`,
      owner.token,
      { expireTime: later }
    )
    assert.strictEqual(extended.status, 200, JSON.stringify(extended.body))
    assert.isTrue(await mayCreateRepos())
    await rest("DELETE", `/iam/v2beta1/roleBindings/${made.body.uid}`, owner.token)
  })

  it.runIf(referenceProtos !== undefined)(
    "over gRPC: Arbor's protos carry the window; a client on the reference protos reads the binding without it",
    async () => {
      const own = connect(join(import.meta.dirname, "../../api/proto"), `127.0.0.1:${port}`)
      const reference = connect(referenceProtos!, `127.0.0.1:${port}`)
      try {
        const bindings = own.service("chainguard.platform.iam.v2beta1.RoleBindingsService")
        const seconds = Math.floor(Date.now() / 1000) + 3_600
        const made = await bindings.CreateRoleBinding({
          parent: owner.org,
          roleBinding: { identityUid: worker.identity, roleUid: editor, expireTime: { seconds: String(seconds) } }
        }, owner.token)
        assert.strictEqual(made.expireTime.seconds, String(seconds))
        const read = await reference.service("chainguard.platform.iam.v2beta1.RoleBindingsService")
          .GetRoleBinding({ uid: made.uid }, owner.token)
        assert.strictEqual(read.uid, made.uid)
        assert.notProperty(read, "expireTime")
        const rested = await rest("GET", `/iam/v2beta1/roleBindings/${made.uid}`, owner.token)
        assert.strictEqual(Date.parse(rested.body.expireTime) / 1000, seconds)
        await bindings.DeleteRoleBinding({ uid: made.uid }, owner.token)
      } finally {
        own.close()
        reference.close()
      }
    }
  )

  it("a time outside any calendar is refused, naming its field; nothing is made, and every list still answers", async () => {
    for (const field of ["expireTime", "startTime"]) {
      for (const time of ["+275760-09-13T00:00:00Z", "-000001-01-01T00:00:00Z", "2027-02-28", "2027-02-30T00:00:00Z"]) {
        const refused = await rest("POST", `/iam/v2beta1/roleBindings/${owner.org}`, owner.token, {
          identityUid: worker.identity,
          roleUid: editor,
          [field]: time
        })
        assert.strictEqual(refused.status, 400, `${field} ${time}: ${JSON.stringify(refused.body)}`)
        assert.deepStrictEqual(
          refused.body.details[1].fieldViolations.map((v: { field: string }) => v.field),
          [field],
          time
        )
      }
    }
    const own = connect(join(import.meta.dirname, "../../api/proto"), `127.0.0.1:${port}`)
    try {
      const listed = await own.service("chainguard.platform.iam.v2beta1.RoleBindingsService")
        .ListRoleBindings({ parent: owner.org }, owner.token)
      assert.isAtLeast(listed.roleBindings.length, 1)
    } finally {
      own.close()
    }
  })
})
