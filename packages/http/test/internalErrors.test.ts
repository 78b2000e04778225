/**
 * An internal error as an operator meets it (DECISIONS §20): the standalone server answers 500 saying nothing of
 * its cause, and logs the cause once, at level ERROR, beside the request's id.
 */
import { Group, Store } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { freePort, startServer, waitFor } from "./processes.js"
import { fetchJson } from "./support.js"

describe("an internal error", () => {
  it("answers 500 with nothing of its cause, and logs the cause once beside the request's id", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-internal-"))
    const port = await freePort()
    const server = startServer(cwd, port)
    try {
      await server.ready
      const url = `http://127.0.0.1:${port}`
      const token = readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8").trim()
      const orgs = await fetchJson(url, "GET", "/iam/v2beta1/groups?uidp.in_root=true", token)
      const folder = await fetchJson(url, "POST", `/iam/v2beta1/groups/${orgs.body.groups[0].uid}`, token, {
        name: "broken"
      })
      // The folder's row damaged at rest, as a bad restore or a hand edit would leave it.
      await Effect.runPromise(Effect.scoped(
        Effect.gen(function*() {
          const store = yield* Store.Store
          const row = Option.getOrThrow(yield* store.get(Group.table, folder.body.uid))
          yield* store.update(Group.table, { ...row, createTime: 9e18 })
        }).pipe(Effect.provide(SqliteStore.layer({ filename: join(cwd, ".arbor", "arbor.db") })))
      ))

      const response = await fetch(`${url}/iam/v2beta1/groups/${folder.body.uid}`, {
        headers: { authorization: `Bearer ${token}` }
      })
      const body = await response.text()
      assert.strictEqual(response.status, 500)
      assert.deepStrictEqual(JSON.parse(body).message, "Internal error")
      assert.notInclude(body, "9000000000000000000")
      const requestId = response.headers.get("x-request-id")!
      const logged = () =>
        server.logs().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line)).filter((
          line
        ) => line.requestId === requestId && line.logLevel === "ERROR")
      await waitFor(async () => logged().length > 0, 10_000)
      const [line, ...more] = logged()
      assert.deepStrictEqual(more, [])
      assert.include(line.message, "internal error (CORRUPT_ROW)")
      assert.include(JSON.stringify(line.cause), "createTime")
    } finally {
      server.child.kill()
      await server.exited
    }
  })
})
