/**
 * `pnpm admin` beside a running standalone server, as an operator uses it: it mints tokens the server accepts
 * whatever port the server was started on, prints only its result on stdout, and creates organizations that
 * someone owns.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as jose from "jose"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freshDatabase } from "../../store-postgres/test/databases.js"
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
      // The identity by its group's path and its name, as the README's recovery names the bootstrap admin.
      const byPath = await admin(cwd, ["token", "--identity", "default/bootstrap-admin"])
      assert.strictEqual(jose.decodeJwt(byPath.stdout.trim()).sub, bootstrapAdmin)

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
      // Refused, it left no organization without an owner behind: the name is free.
      const fourth = await admin(cwd, ["create-org", "fourth"])
      assert.match(fourth.stdout, /^[0-9a-f]{40}\n$/)

      // An organization's ownership given back from the machine (its owners lost, or never bound): grant-owner binds
      // a named identity owner there, once however often it is run; the new owner acts at once.
      const keeper = await fetch(`http://127.0.0.1:${port}/iam/v2beta1/identities/${org}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "keeper", claimMatch: { issuer: "https://issuer.example.com", subject: "k" } })
      }).then((r) => r.json() as Promise<{ uid: string }>)
      const granted = await admin(cwd, ["grant-owner", "second", "--identity", "second/keeper"])
      assert.match(granted.stdout, /^[0-9a-f]{40}\/[0-9a-f]{16}\n$/)
      assert.strictEqual((await admin(cwd, ["grant-owner", org, "--identity", keeper.uid])).stdout, granted.stdout)
      const keeperToken = (await admin(cwd, ["token", "--identity", keeper.uid])).stdout.trim()
      const owned = await (await get(`/iam/v2beta1/roleBindings?uidp.children_of=${org}`, keeperToken)).json() as {
        roleBindings: Array<{ identity: { uid: string }; role: { name: string } }>
      }
      assert.sameDeepMembers(owned.roleBindings.map((b) => [b.identity.uid, b.role.name]), [
        [bootstrapAdmin, "owner"],
        [keeper.uid, "owner"]
      ])
      const folder = await admin(cwd, ["grant-owner", "default/nowhere", "--identity", keeper.uid]).catch((e) => e)
      assert.strictEqual(folder.code, 2)

      // Usage: --help on every command, with an example; a wrong command line exits 2 and says why.
      for (
        const command of [
          ["token"],
          ["create-org"],
          ["grant-owner"],
          ["rotate-keys"],
          ["copy-to-postgres"],
          ["import", "advisories"],
          ["import", "repos"]
        ]
      ) {
        const help = await admin(cwd, [...command, "--help"])
        assert.match(help.stdout, /\nExample:\n {2}pnpm (--silent )?admin/, command.join(" "))
        assert.include(help.stdout, `Usage: pnpm admin ${command.join(" ")}`, command.join(" "))
        // The options' own words: no library placeholders, type notes or built-in options.
        for (const noise of ["redacted", "A user-defined piece of text", "--wizard", "--log-level", " text"]) {
          assert.notInclude(help.stdout, noise, command.join(" "))
        }
      }
      const usage = await admin(cwd, ["token"]).catch((e) => e)
      assert.strictEqual(usage.code, 2)
      assert.include(usage.stderr, "--identity")
      for (const ref of ["nope", "default/nobody", "elsewhere/bootstrap-admin"]) {
        const unknown = await admin(cwd, ["token", "--identity", ref]).catch((e) => e)
        assert.strictEqual(unknown.code, 2)
        assert.strictEqual(
          unknown.stderr,
          `--identity ${ref}: no such identity (give a uid, or its group's path and its name)\n`
        )
      }
    } finally {
      server.child.kill("SIGKILL")
    }
  }, 180_000)

  it(
    "copy-to-postgres moves a SQLite deployment, keys included: its tokens and page tokens work on PostgreSQL",
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), "arbor-move-"))
      const get = async (port: number, path: string, token: string, init: RequestInit = {}) => {
        const response = await fetch(`http://127.0.0.1:${port}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }
        })
        return { status: response.status, body: await response.json() as any }
      }
      const before = await freePort()
      // The deployment keeps its public address across the move: its tokens name it as their audience.
      const address = { ARBOR_BASE_URL: "http://localhost:8080" }
      const sqlite = startServer(cwd, before, address)
      let token: string
      let pageToken: string
      let org: string
      let provider: string
      try {
        await sqlite.ready
        token = readFileSync(join(cwd, ".arbor", "bootstrap-token"), "utf8").trim()
        org = (await get(before, "/iam/v2beta1/groups?uidp.in_root=true", token)).body.groups[0].uid
        for (const name of ["a", "b"]) {
          await get(before, `/iam/v2beta1/groups/${org}`, token, { method: "POST", body: JSON.stringify({ name }) })
        }
        const viewer = (await get(before, "/iam/v2beta1/roles?name=viewer", token)).body.roles[0].uid
        provider = (await get(before, `/iam/v2beta1/identityProviders/${org}`, token, {
          method: "POST",
          body: JSON.stringify({
            name: "sso",
            defaultRole: viewer,
            oidc: { issuer: "https://login.example.com", clientId: "arbor", clientSecret: "the-client-secret-xyzzy" }
          })
        })).body.uid
        pageToken = (await get(before, `/iam/v2beta1/groups?uidp.children_of=${org}&page_size=1&order_by=name`, token))
          .body.nextPageToken
      } finally {
        sqlite.child.kill("SIGTERM")
        await sqlite.exited
      }

      // The client secret is sealed: the database holds no trace of it.
      for (const file of ["arbor.db", "arbor.db-wal"]) {
        const path = join(cwd, ".arbor", file)
        if (existsSync(path)) assert.notInclude(readFileSync(path).toString("latin1"), "the-client-secret-xyzzy", file)
      }

      const url = await Effect.runPromise(freshDatabase)
      const keyless = await admin(cwd, ["copy-to-postgres"], { ARBOR_DATABASE_URL: url }).catch((e) => e)
      assert.notStrictEqual(keyless.code, 0)
      assert.include(keyless.stderr, "ARBOR_SECRETS_KEY")
      // The PostgreSQL servers' sealing key; the SQLite deployment sealed with its key file, so the copy re-seals.
      const secretsKey = { ARBOR_SECRETS_KEY: "ab".repeat(32) }
      const copied = await admin(cwd, ["copy-to-postgres"], { ARBOR_DATABASE_URL: url, ...secretsKey })
      assert.include(copied.stdout, "groups 3\n")
      assert.include(copied.stdout, "role_bindings 1\n")
      const again = await admin(cwd, ["copy-to-postgres", "--database-url", url], secretsKey).catch((e) => e)
      assert.strictEqual(again.code, 1)
      assert.include(again.stderr, "copy into an empty database")

      const after = await freePort()
      const postgres = startServer(cwd, after, {
        ...address,
        ...secretsKey,
        ARBOR_STORE: "postgres",
        ARBOR_DATABASE_URL: url
      })
      try {
        await postgres.ready
        assert.strictEqual((await get(after, "/iam/v2beta1/groups?uidp.in_root=true", token)).body.groups.length, 1)
        const next = await get(
          after,
          `/iam/v2beta1/groups?uidp.children_of=${org}&page_size=1&order_by=name&page_token=${pageToken}`,
          token
        )
        assert.strictEqual(next.status, 200)
        assert.strictEqual(next.body.groups[0].name, "b")
        // An update that keeps the client secret opens it: it was sealed again under the PostgreSQL servers' key.
        const kept = await get(after, `/iam/v2beta1/identityProviders/${provider}`, token, {
          method: "PATCH",
          body: JSON.stringify({ description: "moved", oidc: { issuer: "https://login.example.com", clientId: "b" } })
        })
        assert.strictEqual(kept.status, 200, JSON.stringify(kept.body))
      } finally {
        postgres.child.kill("SIGTERM")
        await postgres.exited
      }
    },
    180_000
  )
})
