/**
 * A person bound before their first sign-in, by the uid LookupIdentity gives, over REST and over gRPC (an
 * independent client on the reference protos), on every durable store: there is no identity yet, and the binding
 * waits for them.
 */
import { Role } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { freshDatabase } from "../../store-postgres/test/databases.js"
import { clientProtos, connect } from "./grpcSupport.js"
import { freePort } from "./processes.js"
import { startServer } from "./signInSupport.js"
import { fetchJson, member } from "./support.js"

const iam = "chainguard.platform.iam.v2beta1"
const viewer = Role.builtInByName("viewer")!.uid

describe.each(["sqlite", "postgres"] as const)("on %s", (store) => {
  let server: Awaited<ReturnType<typeof startServer>>
  let port: number
  beforeAll(async () => {
    port = await freePort()
    server = await startServer(
      port,
      store === "sqlite"
        ? { store, dataDir: mkdtempSync(join(tmpdir(), "arbor-people-")) }
        : { store, databaseUrl: Redacted.make(await Effect.runPromise(freshDatabase)), databasePool: 4 }
    )
  })
  afterAll(() => server?.close())

  it("a person is bound over REST before their first sign-in; the binding names them by uid alone", async () => {
    const { org, token } = await server.runtime.runPromise(member("acme"))
    const looked = await fetchJson(
      server.url,
      "GET",
      "/iam/v2beta1/identities:lookupIdentity?issuer=https%3A%2F%2Flogin.example.com&subject=ada",
      token
    )
    assert.strictEqual(looked.status, 200)
    const bound = await fetchJson(server.url, "POST", `/iam/v2beta1/roleBindings/${org}`, token, {
      identityUid: looked.body.uid,
      roleUid: viewer
    })
    assert.strictEqual(bound.status, 200, JSON.stringify(bound.body))
    assert.deepInclude(bound.body.identity, { uid: looked.body.uid, name: "" })
    const listed = await fetchJson(server.url, "GET", `/iam/v2beta1/roleBindings?identity=${looked.body.uid}`, token)
    assert.deepStrictEqual(listed.body.roleBindings.map((b: { uid: string }) => b.uid), [bound.body.uid])
  })

  it("and over gRPC", async () => {
    const { org, token } = await server.runtime.runPromise(member("globex"))
    const clients = connect(clientProtos, `127.0.0.1:${port}`)
    try {
      const identities = clients.service(`${iam}.IdentitiesService`)
      const bindings = clients.service(`${iam}.RoleBindingsService`)
      const looked = await identities.LookupIdentity({ issuer: "https://login.example.com", subject: "grace" }, token)
      const bound = await bindings.CreateRoleBinding(
        { parent: org, roleBinding: { identityUid: looked.uid, roleUid: viewer } },
        token
      )
      assert.strictEqual(bound.identityUid, looked.uid)
      const batch = await bindings.BatchCreateRoleBindings({
        parent: org,
        roleUid: Role.builtInByName("editor")!.uid,
        requests: [{ roleBinding: { identityUid: looked.uid } }]
      }, token)
      assert.strictEqual(batch.roleBindings.length, 1)
    } finally {
      clients.close()
    }
  })
})
