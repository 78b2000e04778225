/**
 * `pnpm admin` beside a running standalone server, as an operator uses it: it mints tokens the server accepts
 * whatever port the server was started on, prints only its result on stdout, and creates organizations that
 * someone owns.
 */
import { assert, describe, it } from "@effect/vitest"
import * as jose from "jose"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { admin, freePort, startServer } from "./processes.js"

describe("admin commands", () => {
  it("token and create-org work against a server on another port, printing only their result", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "arbor-admin-"))
    const port = await freePort()
    const server = startServer(cwd, port)
    try {
      await server.ready
      const bootstrapAdmin = jose.decodeJwt(readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8")).sub!
      const get = (path: string, token: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } })

      // No PORT in the admin's environment: it mints for the address the server started with.
      const minted = await admin(cwd, ["token", "--identity", bootstrapAdmin])
      assert.match(minted.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/, "stdout holds the token and nothing else")
      const token = minted.stdout.trim()
      assert.strictEqual(jose.decodeJwt(token).aud, `http://localhost:${port}`)
      assert.strictEqual((await get("/iam/v2beta1/groups?uidp.in_root=true", token)).status, 200)

      // A new organization is owned by the bootstrap admin unless another owner is named.
      const created = await admin(cwd, ["create-org", "second"])
      assert.match(created.stdout, /^[0-9a-f]{40}\n$/)
      const org = created.stdout.trim()
      assert.strictEqual((await get(`/iam/v2beta1/groups/${org}`, token)).status, 200)
      const bindings = await (await get(`/iam/v2beta1/roleBindings?uidp.children_of=${org}`, token)).json() as {
        roleBindings: Array<{ identity: { uid: string }; role: { name: string } }>
      }
      assert.deepStrictEqual(
        bindings.roleBindings.map((b) => [b.identity.uid, b.role.name]),
        [[bootstrapAdmin, "owner"]]
      )
      const third = await admin(cwd, ["create-org", "third", "--owner", bootstrapAdmin])
      assert.strictEqual((await get(`/iam/v2beta1/groups/${third.stdout.trim()}`, token)).status, 200)
      const refused = await admin(cwd, ["create-org", "fourth", "--owner", `${org}/0123456789abcdef`]).catch((e) => e)
      assert.strictEqual(refused.code, 1)
      assert.strictEqual(refused.stdout, "")
      assert.match(refused.stderr, /Not found: identity/)

      // Usage: --help on every command, with an example; a wrong command line exits 2 and says why.
      for (
        const command of [["token"], ["create-org"], ["rotate-keys"], ["import", "advisories"], ["import", "repos"]]
      ) {
        const help = await admin(cwd, [...command, "--help"])
        assert.include(help.stdout, "Example: pnpm admin", command.join(" "))
      }
      const usage = await admin(cwd, ["token"]).catch((e) => e)
      assert.strictEqual(usage.code, 2)
      assert.include(usage.stderr, "--identity")
      const notUid = await admin(cwd, ["token", "--identity", "nope"]).catch((e) => e)
      assert.strictEqual(notUid.code, 2)
      assert.include(notUid.stderr, "--identity nope is not a uid")
    } finally {
      server.child.kill("SIGKILL")
    }
  }, 180_000)
})
