/**
 * `arbor iam` as an owner: subscriptions, conditions, elevations, identities, terms, metadata, READMEs, decision
 * vocabularies, SCIM.
 */
import { Groups, Identities, Principal, Repos, Role, RoleBindings } from "@arbor/core"
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { arbor, asOwnerOf, loggedInAs, server, succeeding, useServers, workloads } from "./fixture.js"

useServers()

/** `arbor iam identities create` of a workload identity `name` in organization `org`, by the test issuer's `subject`. */
const workloadIdentity = (env: Record<string, string>, org: string, name: string, subject: string) =>
  arbor(
    env,
    "iam",
    "identities",
    "create",
    "generic",
    name,
    "--parent",
    org,
    "--identity-issuer",
    workloads.issuer.url!,
    "--subject",
    subject,
    "-o",
    "id"
  )

describe("arbor iam, as an owner", () => {
  it("events subscriptions: create by group path, list, describe, delete; a bad sink is named", async () => {
    const { env } = await asOwnerOf("hooked")
    const refused = await arbor(
      env,
      "events",
      "subscriptions",
      "create",
      "http://hooks.example.invalid/x",
      "--parent",
      "hooked"
    )
    assert.strictEqual(refused.code, 1)
    assert.match(refused.stderr, /^arbor: Invalid argument: sink: must be an https:\/\/ URL/)
    const created = await arbor(
      env,
      "events",
      "subscriptions",
      "create",
      "http://127.0.0.1:9/hook",
      "--parent",
      "hooked",
      "-o",
      "json"
    )
    assert.strictEqual(created.code, 0, created.stderr)
    const [subscription] = JSON.parse(created.stdout)
    assert.strictEqual(subscription.sink, "http://127.0.0.1:9/hook")
    const table = await arbor(env, "events", "subscriptions", "list", "--parent", "hooked")
    assert.match(
      table.stdout,
      new RegExp(`^UID +SINK +STATE\\n${subscription.uid} +http://127\\.0\\.0\\.1:9/hook +ACTIVE\\n$`)
    )
    const described = await arbor(env, "events", "subscriptions", "describe", subscription.uid)
    assert.match(described.stdout, /CREATED/)
    assert.match(described.stdout, /PENDING/)
    assert.strictEqual((await arbor(env, "events", "subscriptions", "delete", subscription.uid)).code, 0)
    assert.strictEqual((await arbor(env, "events", "subscriptions", "list", "-o", "id")).stdout, "")
  })

  it("binds with a condition (a refusal pointing into it), lists it, and check --explain says whether it held", async () => {
    const { env } = await asOwnerOf("conditioned")
    assert.strictEqual((await arbor(env, "iam", "folders", "create", "dev", "--parent", "conditioned")).code, 0)
    const made = await arbor(
      env,
      "iam",
      "identities",
      "create",
      "generic",
      "contractor",
      "--parent",
      "conditioned",
      "--identity-issuer",
      "https://issuer.example.com",
      "--subject",
      "contractor"
    )
    assert.strictEqual(made.code, 0, made.stderr)
    const bind = (condition: string) =>
      arbor(
        env,
        "iam",
        "role-bindings",
        "create",
        "--parent",
        "conditioned",
        "--identity",
        "conditioned/contractor",
        "--role",
        "editor",
        "--condition",
        condition,
        "--condition-title",
        "development only"
      )
    const refused = await bind(`resource.pth.startsWith("conditioned/dev")`)
    assert.strictEqual(refused.code, 1, refused.stderr)
    assert.match(refused.stderr, /condition\.expression: No such key: pth \(at character 10\)/)
    const bound = await bind(`resource.path.startsWith("conditioned/dev")`)
    assert.strictEqual(bound.code, 0, bound.stderr)
    assert.match(
      bound.stdout,
      /^IDENTITY +ROLE +GROUP +CONDITION +UID\ncontractor +editor +conditioned +development only +/
    )
    const inDev = await arbor(
      env,
      "iam",
      "check",
      "conditioned/contractor",
      "repo.create",
      "conditioned/dev",
      "--explain"
    )
    assert.strictEqual(inDev.code, 0, inDev.stderr)
    assert.match(inDev.stdout, /editor at conditioned \(binding [0-9a-f/]+, if development only: held\)/)
    const above = await arbor(env, "iam", "check", "conditioned/contractor", "repo.create", "conditioned", "--explain")
    assert.strictEqual(above.code, 1)
    assert.match(
      above.stderr,
      /denied: .*\n {2}editor at conditioned \(binding [0-9a-f/]+, if development only: false\)/
    )
  })

  it("a person whose binding has a condition sees through the CLI exactly what a condition lets them get", async () => {
    const { env, org: owned } = await asOwnerOf("conditional-cli")
    const { alpha, beta, team } = await server.runtime.runPromise(
      Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const team = yield* groups.create(Principal.system, owned, { name: "team" })
        const alpha = yield* groups.create(Principal.system, team.uid, { name: "alpha" })
        const beta = yield* groups.create(Principal.system, team.uid, { name: "beta" })
        return { alpha: alpha.uid, beta: beta.uid, team: team.uid }
      }).pipe(Effect.orDie)
    )
    const made = await workloadIdentity(env, "conditional-cli", "reader", "reader-of-conditional-cli")
    assert.strictEqual(made.code, 0, made.stderr)
    const bound = await arbor(
      env,
      "iam",
      "role-bindings",
      "create",
      "--parent",
      "conditional-cli/team",
      "--identity",
      "conditional-cli/reader",
      "--role",
      "viewer",
      "--condition",
      `resource.name == "alpha"`,
      "--condition-title",
      "alpha only"
    )
    assert.strictEqual(bound.code, 0, bound.stderr)
    const reader = await loggedInAs(made.stdout.trim(), "reader-of-conditional-cli")
    const listed = await arbor(reader, "iam", "folders", "list", "--parent", team, "-o", "id")
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.strictEqual(listed.stdout, `${alpha}\n`)
    assert.strictEqual((await arbor(reader, "iam", "folders", "describe", alpha)).code, 0)
    const refused = await arbor(reader, "iam", "folders", "describe", beta)
    assert.notStrictEqual(refused.code, 0)
  })

  it("an eligibility, an elevation asked with a reason, refused to its asker as approver, approved by the owner", async () => {
    const { env } = await asOwnerOf("elevate-cli")
    const made = await workloadIdentity(env, "elevate-cli", "worker", "worker-of-elevate-cli")
    assert.strictEqual(made.code, 0, made.stderr)
    // It reads the organization for good (so names resolve for it), and may edit it on request.
    const viewing = await arbor(
      env,
      "iam",
      "role-bindings",
      "create",
      "--parent",
      "elevate-cli",
      "--identity",
      "elevate-cli/worker",
      "--role",
      "viewer"
    )
    assert.strictEqual(viewing.code, 0, viewing.stderr)
    const eligible = await arbor(
      env,
      "iam",
      "eligibilities",
      "create",
      "--parent",
      "elevate-cli",
      "--identity",
      "elevate-cli/worker",
      "--role",
      "editor",
      "--max",
      "2h",
      "--approver-role",
      "owner"
    )
    assert.strictEqual(eligible.code, 0, eligible.stderr)
    assert.match(
      eligible.stdout,
      /^IDENTITY +ROLE +AT MOST +APPROVED BY +UID\nelevate-cli\/worker +editor +2 h +owner +/
    )
    assert.strictEqual(eligible.stderr, "", "editor binds nothing: no warning")
    // A role that binds: made, with a warning that what the elevated identity binds outlasts the elevation.
    const binder = await arbor(
      env,
      "iam",
      "eligibilities",
      "create",
      "--parent",
      "elevate-cli",
      "--identity",
      "elevate-cli/worker",
      "--role",
      "registry.pull_token_creator",
      "--max",
      "1h"
    )
    assert.strictEqual(binder.code, 0, binder.stderr)
    assert.strictEqual(
      binder.stderr,
      "Warning: registry.pull_token_creator holds role_bindings.create: an elevated identity may make bindings of " +
        "its own there that outlast the elevation\n"
    )
    const badMax = await arbor(
      env,
      "iam",
      "eligibilities",
      "create",
      "--parent",
      "elevate-cli",
      "--identity",
      "elevate-cli/worker",
      "--role",
      "viewer",
      "--max",
      "two hours"
    )
    assert.deepStrictEqual([badMax.code, badMax.stderr], [
      2,
      "arbor: --max two hours: give a duration such as 90m, 8h or 1d (arbor iam eligibilities create --help)\n"
    ])
    // The worker signs in and asks.
    const worker = await loggedInAs(made.stdout.trim(), "worker-of-elevate-cli")
    const asked = await arbor(
      worker,
      "iam",
      "elevate",
      "--role",
      "editor",
      "--at",
      "elevate-cli",
      "--for",
      "30m",
      "--reason",
      "release 1.2",
      "-o",
      "json"
    )
    assert.strictEqual(asked.code, 0, asked.stderr)
    const [elevation] = JSON.parse(asked.stdout)
    assert.deepInclude(elevation, { state: "PENDING", reason: "release 1.2", duration: "1800s" })
    const self = await arbor(worker, "iam", "approvals", "approve", elevation.uid)
    assert.strictEqual(self.code, 4, self.stderr)
    const waiting = await arbor(env, "iam", "approvals", "list")
    assert.match(waiting.stdout, /\nelevate-cli\/worker +editor +30 min +release 1\.2 +waiting for approval +/)
    const approved = await arbor(env, "iam", "approvals", "approve", elevation.uid)
    assert.strictEqual(approved.code, 0, approved.stderr)
    assert.match(approved.stdout, /granted until \d{4}-/)
    const denied = await arbor(env, "iam", "approvals", "deny", elevation.uid)
    assert.strictEqual(denied.code, 1, "decided already")
    const listed = await arbor(env, "iam", "eligibilities", "list", "-o", "id")
    for (const uid of listed.stdout.trim().split("\n")) {
      const deleted = await arbor(env, "iam", "eligibilities", "delete", uid)
      assert.strictEqual(deleted.code, 0, deleted.stderr)
    }
  })

  it("creates a GitHub Actions identity from flags, binds it by role name, and it can sign in", async () => {
    const { env } = await asOwnerOf("octo")
    const bad = await arbor(
      env,
      "iam",
      "identities",
      "create",
      "github",
      "ci",
      "--parent",
      "octo",
      "--github-repo",
      "not a repo"
    )
    assert.strictEqual(bad.code, 2)
    assert.strictEqual(
      bad.stderr,
      "arbor: --github-repo not a repo is not OWNER/REPO (arbor iam identities create github --help)\n"
    )
    const created = await arbor(
      env,
      "iam",
      "identities",
      "create",
      "github",
      "deployer",
      "--parent",
      "octo",
      "--github-repo",
      "octo-org/octo-repo",
      "--github-environment",
      "prod",
      "-o",
      "json"
    )
    assert.strictEqual(created.code, 0, created.stderr)
    const [identity] = JSON.parse(created.stdout)
    assert.deepStrictEqual(identity.claimMatch, {
      issuer: "https://token.actions.githubusercontent.com",
      subject: "repo:octo-org/octo-repo:environment:prod"
    })
    const bound = await arbor(
      env,
      "iam",
      "role-bindings",
      "create",
      "--parent",
      "octo",
      "--identity",
      identity.uid,
      "--role",
      "viewer"
    )
    assert.strictEqual(bound.code, 0, bound.stderr)
    assert.match(bound.stdout, /^IDENTITY +ROLE +GROUP +UID\ndeployer +viewer +octo +[0-9a-f]{40}\/[0-9a-f]{16}\n$/)
    const listed = await arbor(env, "iam", "identities", "list", "--parent", "octo", "-o", "id")
    assert.strictEqual(listed.stdout.trim().split("\n").length, 2)
    // Both are assumed through claims; neither holds static keys.
    const claimMatched = await arbor(env, "iam", "identities", "list", "--parent", "octo", "--kind", "claim-match")
    assert.strictEqual(claimMatched.stdout.trim().split("\n").length, 3, claimMatched.stderr)
    const withKeys = await arbor(env, "iam", "identities", "list", "--parent", "octo", "--kind", "static", "-o", "id")
    assert.strictEqual(withKeys.stdout, "", withKeys.stderr)
  })

  it("accepts terms for a group, once; a folder lists what its organization accepted", async () => {
    const { env, identity } = await asOwnerOf("terms-org")
    const accepted = await arbor(
      env,
      "iam",
      "terms",
      "accept",
      "tos.v1",
      "dpa.v2",
      "--group",
      "terms-org",
      "-o",
      "json"
    )
    assert.strictEqual(accepted.code, 0, accepted.stderr)
    const rows = JSON.parse(accepted.stdout)
    assert.sameMembers(rows.map((r: any) => r.docId), ["tos.v1", "dpa.v2"])
    assert.isTrue(rows.every((r: any) => r.acceptedBy === identity))
    // Accepted again: as it was.
    const again = await arbor(env, "iam", "terms", "accept", "tos.v1", "--group", "terms-org", "-o", "json")
    assert.deepStrictEqual(JSON.parse(again.stdout), rows.filter((r: any) => r.docId === "tos.v1"))
    assert.strictEqual((await arbor(env, "iam", "folders", "create", "legal", "--parent", "terms-org")).code, 0)
    const listed = await arbor(env, "iam", "terms", "list", "--group", "terms-org/legal")
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, /^DOCUMENT +ACCEPTED BY +GROUP +ACCEPTED\n/)
    assert.strictEqual(listed.stdout.trim().split("\n").length, 3)
    const bad = await arbor(env, "iam", "terms", "accept", "not ok", "--group", "terms-org")
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, "documentIds[0]")
  })

  it("sets the caller's own metadata; a flag given empty clears its field", async () => {
    const { env, identity } = await asOwnerOf("metadata-org")
    const none = await arbor(env, "iam", "identities", "update-metadata")
    assert.strictEqual(none.code, 2)
    const set = await arbor(
      env,
      "iam",
      "identities",
      "update-metadata",
      "--company",
      "Acme",
      "--job-title",
      "builder",
      "--updates",
      "yes",
      "-o",
      "json"
    )
    assert.strictEqual(set.code, 0, set.stderr)
    assert.deepInclude(JSON.parse(set.stdout)[0], {
      uid: identity,
      company: "Acme",
      jobTitle: "builder",
      updatesOptIn: true
    })
    const cleared = await arbor(env, "iam", "identities", "update-metadata", "--company", "", "--updates", "no")
    assert.strictEqual(cleared.code, 0, cleared.stderr)
    assert.match(cleared.stdout, /^NAME +COMPANY +JOB TITLE +PRODUCT +UPDATES\nowner +builder +no\n$/)
  })

  it("prints a repo's README and replaces it from a file; unsafe HTML is refused with the reason", async () => {
    const { env, org } = await asOwnerOf("readme-org")
    const repo = await server.runtime.runPromise(
      Effect.flatMap(Repos.Repos, (r) => r.upsert(Principal.system, org, { name: "demo" })).pipe(Effect.orDie)
    )
    const file = join(env.dir, "README.md")
    writeFileSync(file, "# demo\n\nAn image.\n")
    const set = await arbor(env, "images", "repos", "set-readme", repo.uid, "--file", file)
    assert.strictEqual(set.code, 0, set.stderr)
    const printed = await arbor(env, "images", "repos", "readme", repo.uid)
    assert.strictEqual(printed.stdout, "# demo\n\nAn image.\n")
    writeFileSync(file, "<img src=x onerror=alert(1)>")
    const unsafe = await arbor(env, "images", "repos", "set-readme", repo.uid, "--file", file)
    assert.strictEqual(unsafe.code, 1)
    assert.include(unsafe.stderr, "onerror")
    assert.strictEqual((await arbor(env, "images", "repos", "readme", repo.uid)).stdout, "# demo\n\nAn image.\n")
  })

  it("sets an organization's decision vocabulary from a YAML file and prints it back; a wrong word is named", async () => {
    const { env } = await asOwnerOf("worded-org")
    const file = join(env.dir, "vocabulary.yaml")
    const vocabulary = [
      "subjects:",
      "  user:",
      "    by: subject",
      "    issuer: https://todo-idp.invalid",
      "actions:",
      "  can_read_todos: repo.list",
      "resources:",
      "  todo:",
      "    folder: todos"
    ].join("\n")
    writeFileSync(file, `${vocabulary}\n`)
    const set = await arbor(env, "iam", "decision-vocabulary", "set", "worded-org", "-f", file)
    assert.strictEqual(set.code, 0, set.stderr)
    assert.include(set.stderr, "version 1")
    const printed = await arbor(env, "iam", "decision-vocabulary", "get", "worded-org")
    assert.strictEqual(printed.stdout, `${vocabulary}\n`)
    writeFileSync(file, "actions:\n  can_fly: wings.flap\n")
    const wrong = await arbor(env, "iam", "decision-vocabulary", "set", "worded-org", "-f", file)
    assert.strictEqual(wrong.code, 1)
    assert.include(wrong.stderr, "actions.can_fly")
  })

  it("runs an identity provider's SCIM provisioning: a token shown once, enabled with two owners, rotated, revoked", async () => {
    const { env, org } = await asOwnerOf("provisioned")
    const { json, run } = succeeding(env)
    const [idp] = await json(
      "iam",
      "identity-providers",
      "create",
      "okta",
      "--parent",
      "provisioned",
      "--oidc-issuer",
      "https://provisioned.okta.invalid",
      "--client-id",
      "arbor",
      "--client-secret",
      "s",
      "--default-role",
      "viewer"
    )
    const scim = ["iam", "identity-providers", "scim"] as const
    assert.match(
      await run(...scim, "status", idp.uid),
      new RegExp(`^IDENTITY PROVIDER +ENABLED +TOKEN +EXPIRES\n${idp.uid} +false +NOT_ISSUED *\n$`)
    )
    const generated = await arbor(env, ...scim, "token", "generate", idp.uid)
    assert.strictEqual(generated.code, 0, generated.stderr)
    assert.match(generated.stdout, /^cgscim_[0-9a-f]{64}\n$/)
    assert.include(generated.stderr, `${server.url}/scim/v2/${idp.uid}`)
    const users = `${server.url}/scim/v2/${idp.uid}/Users`
    const scimGet = (token: string) => fetch(users, { headers: { authorization: `Bearer ${token.trim()}` } })
    // One owner is too few to enable provisioning; with a second it is on.
    const tooFew = await arbor(env, ...scim, "enable", idp.uid)
    assert.strictEqual(tooFew.code, 1)
    assert.match(tooFew.stderr, /at least 2 owners/)
    await server.runtime.runPromise(
      Effect.gen(function*() {
        const second = yield* (yield* Identities.Identities).create(Principal.system, org, {
          name: "second owner",
          claimMatch: { issuer: "https://second.invalid", subject: "second" }
        })
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org, {
          identityUid: second.uid,
          roleUid: Role.builtInByName("owner")!.uid
        })
      }).pipe(Effect.orDie)
    )
    assert.match(await run(...scim, "enable", idp.uid), / true +LIVE /)
    assert.strictEqual((await scimGet(generated.stdout)).status, 200)
    // Rotated with no overlap: only the new token works.
    const [rotated] = [JSON.parse(await run(...scim, "token", "regenerate", idp.uid, "--overlap", "0", "-o", "json"))]
    assert.strictEqual((await scimGet(generated.stdout)).status, 401)
    assert.strictEqual((await scimGet(rotated.token)).status, 200)
    assert.match(await run(...scim, "token", "revoke", idp.uid), / true +REVOKED /)
    assert.strictEqual((await scimGet(rotated.token)).status, 401)
    assert.match(await run(...scim, "disable", idp.uid), / false +REVOKED /)
  })
})
