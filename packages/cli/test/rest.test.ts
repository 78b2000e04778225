/**
 * An organization's own identity provider through `arbor`, and every other command's describe, update and delete.
 */
import { Advisories, Groups, Principal, Repos, Tags } from "@arbor/core"
import * as Effect from "effect/Effect"
import { assert, describe, it } from "vitest"
import { arbor, asOwnerOf, home, loginHeadless, provider, server, succeeding, useServers } from "./fixture.js"

useServers()

describe("an organization's own provider, through arbor", () => {
  it(
    "an owner adds it; a person signs in with --idp and gets its default role; associations list and delete",
    async () => {
      const { env } = await asOwnerOf("idp-org")
      const created = await arbor(
        { ...env, ARBOR_CLIENT_SECRET: provider.clientSecret },
        "iam",
        "identity-providers",
        "create",
        "corporate",
        "--parent",
        "idp-org",
        "--oidc-issuer",
        provider.issuer,
        "--client-id",
        provider.clientId,
        "--default-role",
        "viewer",
        "-o",
        "json"
      )
      assert.strictEqual(created.code, 0, created.stderr)
      assert.notInclude(created.stdout, provider.clientSecret)
      const associated = await arbor(
        env,
        "iam",
        "account-associations",
        "create",
        "prod",
        "--parent",
        "idp-org",
        "--amazon-account",
        "123456789012",
        "--azure-tenant-id",
        "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
        "--azure-client-id",
        "canary=6b0d5d1a-3c0e-4d2b-9a39-0d6c7e7b9a11",
        "-o",
        "json"
      )
      assert.strictEqual(associated.code, 0, associated.stderr)
      assert.deepStrictEqual(JSON.parse(associated.stdout)[0].azure.clientIds, {
        canary: "6b0d5d1a-3c0e-4d2b-9a39-0d6c7e7b9a11"
      })
      assert.match((await arbor(env, "iam", "account-associations", "list")).stdout, /prod +[0-9a-f]{40} +123456789012/)
      // A cloud the association names no account of is not ready, without a call to it.
      const checked = await arbor(env, "iam", "account-associations", "check", "idp-org", "--cloud", "google")
      assert.strictEqual(checked.stdout, "NOT_READY: not configured: the association names no Google Cloud project\n")
      assert.strictEqual((await arbor(env, "iam", "account-associations", "delete", "idp-org")).code, 0)

      const person = home()
      const signedIn = await loginHeadless(person, "corporate-person", "--idp", "idp-org")
      assert.strictEqual(signedIn.code, 0, signedIn.stderr)
      assert.strictEqual(
        (await arbor(person, "iam", "organizations", "list", "-o", "csv")).stdout.split("\n")[1]!.split(",")[0],
        "idp-org"
      )
    },
    30_000
  )
})

/** `arbor` in `env` for commands that must succeed: their stdout, or it parsed from `-o json`. */
describe("the rest of arbor's commands, as an owner", () => {
  it("describe, update and delete what list and create made; registry and advisories read", async () => {
    const { env } = await asOwnerOf("rest")
    const { json, run } = succeeding(env)
    // Organizations: describe; create needs a platform admin.
    assert.strictEqual((await json("iam", "organizations", "describe", "rest")).name, "rest")
    const notAdmin = await arbor(env, "iam", "organizations", "create", "another")
    assert.strictEqual(notAdmin.code, 4)
    // Folders: update, then delete.
    await run("iam", "folders", "create", "old", "--parent", "rest")
    assert.strictEqual(
      (await json("iam", "folders", "update", "rest/old", "--description", "to go"))[0].description,
      "to go"
    )
    await run("iam", "folders", "delete", "rest/old")
    assert.strictEqual((await arbor(env, "iam", "folders", "describe", "rest/old")).code, 5)
    // Identities, roles, bindings, invites, providers: describe and delete.
    const [identity] = await json(
      "iam",
      "identities",
      "create",
      "kubernetes",
      "agent",
      "--parent",
      "rest",
      "--k8s-issuer",
      "https://oidc.example.com",
      "--k8s-service-account",
      "tools:agent"
    )
    assert.strictEqual(identity.claimMatch.subject, "system:serviceaccount:tools:agent")
    assert.strictEqual((await json("iam", "identities", "describe", identity.uid)).name, "agent")
    // Named by its group's path and its name, as a person types it.
    assert.strictEqual((await json("iam", "identities", "describe", "rest/agent")).uid, identity.uid)
    assert.match(await run("iam", "identities", "lookup", "https://login.example.com", "ada"), /^[0-9a-f]{40}\n?$/)
    const [role] = await json("iam", "roles", "create", "reader", "--parent", "rest", "-c", "groups.list")
    assert.deepStrictEqual((await json("iam", "roles", "describe", role.uid)).capabilities, ["CAP_IAM_GROUPS_LIST"])
    const [binding] = await json(
      "iam",
      "role-bindings",
      "create",
      "--parent",
      "rest",
      "--identity",
      "rest/agent",
      "--role",
      role.uid
    )
    assert.strictEqual(binding.identity.uid, identity.uid)
    assert.include((await run("iam", "role-bindings", "list", "--parent", "rest", "-o", "id")).split("\n"), binding.uid)
    // Which roles does this identity hold, and who holds this role (by uid or name)?
    const ids = async (...filters: Array<string>) =>
      (await run("iam", "role-bindings", "list", ...filters, "-o", "id")).split("\n").filter((line) => line !== "")
    assert.deepStrictEqual(await ids("--identity", identity.uid), [binding.uid])
    assert.deepStrictEqual(await ids("--role", role.uid, "--group", "rest"), [binding.uid])
    assert.notInclude(await ids("--identity", identity.uid, "--role", "viewer"), binding.uid)
    assert.deepStrictEqual(await ids("--identity", "rest/agent"), [binding.uid])
    // A name alone is a person's at the root: there is none, and the message says what was typed.
    const unknown = await arbor(env, "iam", "role-bindings", "list", "--identity", "agent")
    assert.strictEqual(unknown.code, 5)
    assert.include(unknown.stderr, "identity agent")
    // Several identities at once: one batch, all or none.
    const [helper] = await json(
      "iam",
      "identities",
      "create",
      "kubernetes",
      "helper",
      "--parent",
      "rest",
      "--k8s-issuer",
      "https://oidc.example.com",
      "--k8s-service-account",
      "tools:helper"
    )
    const batch = ["iam", "role-bindings", "create", "--parent", "rest", "--role", "viewer"] as const
    const both = await json(...batch, "--identity", "rest/agent", "--identity", helper.uid)
    assert.deepStrictEqual(both.map((b: { identity: { uid: string } }) => b.identity.uid), [identity.uid, helper.uid])
    const again = await arbor(env, ...batch, "--identity", helper.uid, "--identity", identity.uid)
    assert.notStrictEqual(again.code, 0)
    for (const made of both) await run("iam", "role-bindings", "delete", made.uid)
    await run("iam", "identities", "delete", helper.uid)
    await run("iam", "role-bindings", "delete", binding.uid)
    await run("iam", "roles", "delete", role.uid)
    await run("iam", "identities", "delete", identity.uid)
    assert.strictEqual((await arbor(env, "iam", "identities", "describe", identity.uid)).code, 5)
    const [invite] = await json("iam", "invites", "create", "--parent", "rest", "--role", "viewer", "--ttl-days", "1")
    assert.isString(invite.code)
    await run("iam", "invites", "delete", invite.uid)
    assert.deepStrictEqual(await json("iam", "invites", "list", "--parent", "rest"), [])
    const [idp] = await json(
      "iam",
      "identity-providers",
      "create",
      "dex",
      "--parent",
      "rest",
      "--oidc-issuer",
      "https://dex.example.com",
      "--client-id",
      "arbor",
      "--default-role",
      "viewer",
      "--groups-claim",
      "groups"
    )
    assert.strictEqual(idp.oidc.groupsClaim, "groups")
    assert.strictEqual((await run("iam", "identity-providers", "list", "--parent", "rest", "-o", "id")).trim(), idp.uid)
    // Its group mappings: created, listed by provider, deleted; the provider's deletion takes the rest.
    const mappings = ["iam", "external-group-role-mappings"] as const
    const [mapping] = await json(
      ...mappings,
      "create",
      "--provider",
      idp.uid,
      "--external-group",
      "eng",
      "--role",
      "editor"
    )
    assert.deepInclude(mapping, { externalGroupId: "eng", identityProviderUid: idp.uid })
    await json(
      ...mappings,
      "create",
      "--provider",
      idp.uid,
      "--external-group",
      "ops",
      "--role",
      "viewer",
      "--scope",
      "rest"
    )
    const listed = await run(...mappings, "list", "--provider", idp.uid)
    assert.match(listed, /^EXTERNAL GROUP +ROLE +SCOPE +UID\n/)
    assert.strictEqual(listed.trim().split("\n").length, 3)
    await run(...mappings, "delete", mapping.uid)
    assert.strictEqual((await json(...mappings, "list", "--provider", idp.uid)).length, 1)
    // Several at once: all of the provider's named, those gone skipped.
    const [qa] = await json(...mappings, "create", "--provider", idp.uid, "--external-group", "qa", "--role", "viewer")
    const together = await json(...mappings, "batch-delete", "--provider", idp.uid, qa.uid, mapping.uid)
    assert.deepStrictEqual(together.map((m: { uid: string }) => m.uid), [qa.uid])
    assert.strictEqual((await json(...mappings, "list", "--provider", idp.uid)).length, 1)
    await run("iam", "identity-providers", "delete", idp.uid)
    assert.deepStrictEqual(await json(...mappings, "list"), [])
    // Repos, tags and advisories, written in process, read through arbor.
    const repo = await server.runtime.runPromise(
      Effect.gen(function*() {
        const org = (yield* (yield* Groups.Groups).list(Principal.system, { inRoot: true, name: "rest" })).items[0]!
        const repo = yield* (yield* Repos.Repos).upsert(Principal.system, org.uid, { name: "nginx" })
        yield* (yield* Tags.Tags).upsert(Principal.system, repo.uid, { name: "1.27" })
        yield* (yield* Advisories.Advisories).importDocuments(Principal.system, org.uid, [{
          source: "nginx.advisories.yaml",
          text: "schema-version: 2.0.2\npackage:\n  name: nginx\nadvisories:\n  - id: CGA-2222-3333-4444\n" +
            "    aliases: [CVE-2024-0001]\n    events:\n      - timestamp: 2024-01-01T00:00:00Z\n" +
            "        type: fixed\n        data:\n          fixed-version: 1.27.1-r0\n"
        }])
        return repo.uid
      }).pipe(Effect.orDie)
    )
    assert.match(
      await run("images", "repos", "list", "--parent", "rest"),
      /^NAME +UID +TIER\nnginx +[0-9a-f]{40}\/[0-9a-f]{16} +UNSPECIFIED\n$/
    )
    assert.match(
      await run("images", "tags", "list", "--repo", repo),
      /^NAME +DIGEST +UPDATED\n1\.27 +sha256:[0-9a-f]{64} +/
    )
    const [advisory] = await json("advisories", "list", "--query", "cve-2024-0001")
    assert.strictEqual(advisory.advisoryId, "CGA-2222-3333-4444")
    assert.strictEqual((await json("advisories", "describe", advisory.uid)).latestEventType, "fixed")
  }, 120_000)

  it("reaches a folder twelve levels down by path and by uid: create, describe, update, revoke, delete", async () => {
    const { env } = await asOwnerOf("deep")
    const { json, run } = succeeding(env)
    const path = ["deep", ...Array.from({ length: 12 }, (_, i) => `l${i + 1}`)]
    for (let level = 1; level < path.length; level++) {
      await run("iam", "folders", "create", path[level]!, "--parent", path.slice(0, level).join("/"))
    }
    const folder = await json("iam", "folders", "describe", path.join("/"))
    assert.strictEqual(folder.uid.split("/").length, 13)
    assert.strictEqual((await json("iam", "folders", "describe", folder.uid)).name, "l12")
    const [identity] = await json(
      "iam",
      "identities",
      "create",
      "github",
      "ci",
      "--parent",
      folder.uid,
      "--github-repo",
      "acme/app"
    )
    const [binding] = await json(
      "iam",
      "role-bindings",
      "create",
      "--parent",
      path.join("/"),
      "--identity",
      identity.uid,
      "--role",
      "editor"
    )
    const bound = () => run("iam", "role-bindings", "list", "--parent", path.join("/"), "-o", "id")
    assert.strictEqual((await bound()).trim(), binding.uid)
    await run("iam", "role-bindings", "delete", binding.uid)
    assert.strictEqual((await bound()).trim(), "")
    assert.strictEqual(
      (await json("iam", "identities", "update", identity.uid, "--description", "deep"))[0].description,
      "deep"
    )
    await run("iam", "identities", "delete", identity.uid)
    await run("iam", "folders", "delete", folder.uid)
    assert.strictEqual((await arbor(env, "iam", "folders", "describe", path.join("/"))).code, 5)
  }, 60_000)
})
