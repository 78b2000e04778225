/**
 * `arbor iam` as the deployer workload: folders by path of names, the audit trail's list and watch, exit codes.
 */
import { Groups, Identities, Principal, Role, RoleBindings } from "@arbor/core"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { assert, describe, it, onTestFinished } from "vitest"
import { arbor, asDeployer, asOwnerOf, org, server, useServers } from "./fixture.js"
import { executable } from "./globalSetup.js"

useServers()

describe("arbor iam", () => {
  it("creates folders by path of names and lists them as a table, json, ids, csv and a tree", async () => {
    const env = await asDeployer()
    // The deployer is an editor: it may list but not create groups.
    const denied = await arbor(env, "iam", "folders", "create", "platform", "--parent", "acme")
    assert.strictEqual(denied.code, 4)
    // On the group the person typed, as they typed it, the uid beside it.
    assert.strictEqual(
      denied.stderr,
      `arbor: Permission 'groups.create' denied on resource 'acme' (${org}) (or it might not exist)\n`
    )
    await server.runtime.runPromise(
      Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const platform = yield* groups.create(Principal.system, org, { name: "platform" })
        yield* groups.create(Principal.system, platform.uid, { name: "build", description: "CI, and builders" })
        yield* groups.create(Principal.system, platform.uid, { name: "deploy" })
      }).pipe(Effect.orDie)
    )
    const table = await arbor(env, "iam", "folders", "list", "--parent", "acme")
    assert.strictEqual(table.code, 0, table.stderr)
    const lines = table.stdout.trimEnd().split("\n")
    assert.match(lines[0]!, /^NAME +IN +UID +DESCRIPTION$/)
    // Each by name, and where it lies by its path: names alone repeat across folders.
    assert.deepStrictEqual(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2)), [
      ["build", "acme/platform"],
      ["deploy", "acme/platform"],
      ["platform", "acme"]
    ])
    // Columns line up: every uid starts under its heading.
    for (const line of lines.slice(1)) assert.strictEqual(line.search(/[0-9a-f]{40}/), lines[0]!.indexOf("UID"))
    const tree = await arbor(env, "iam", "folders", "list", "-o", "tree")
    assert.strictEqual(tree.stdout, "acme\n└── platform\n    ├── build\n    └── deploy\n")
    const json = JSON.parse(
      (await arbor(env, "iam", "folders", "list", "--parent", "acme/platform", "-o", "json")).stdout
    )
    assert.deepStrictEqual(json.map((g: { name: string }) => g.name), ["build", "deploy"])
    assert.isString(json[0].createTime)
    const ids = (await arbor(env, "iam", "folders", "list", "--parent", "acme", "-o", "id", "--limit", "1")).stdout
    assert.match(ids, /^[0-9a-f]{40}\/[0-9a-f]{16}\/[0-9a-f]{16}\n$/)
    const csv = (await arbor(env, "iam", "folders", "list", "--parent", "acme/platform", "-o", "csv")).stdout
    assert.strictEqual(csv.split("\n")[1], `build,${json[0].uid},"CI, and builders",${json[0].createTime}`)
  })

  it("events list shows who changed what; events watch prints each change as it happens", async () => {
    const env = await asDeployer()
    const folder = await server.runtime.runPromise(
      Effect.flatMap(Groups.Groups, (groups) => groups.create(Principal.system, org, { name: "audited" })).pipe(
        Effect.orDie
      )
    )
    const table = await arbor(env, "events", "list", "--group", "acme", "--subject", folder.uid)
    assert.strictEqual(table.code, 0, table.stderr)
    const [heading, row] = table.stdout.trimEnd().split("\n")
    // Names for a person: the folder's, the group's path; the uids in -o wide.
    assert.match(heading!, /^TIME +EVENT +SUBJECT +ACTOR +GROUP +CHANGED$/)
    assert.match(row!, /^\S+Z +folder created +audited +system +acme\/audited$/)
    // An update says what it changed, before → after.
    await server.runtime.runPromise(
      Effect.flatMap(
        Groups.Groups,
        (groups) => groups.update(Principal.system, folder.uid, { description: "kept for audits" }, "description")
      ).pipe(
        Effect.orDie
      )
    )
    const updated = await arbor(env, "events", "list", "--group", "acme", "--subject", folder.uid, "--newest-first")
    assert.match(updated.stdout.split("\n")[1]!, /folder updated .*description: "" → kept for audits$/)
    // By kind of resource: the folder's entries are a group's, none a role binding's; a kind that is none is named.
    const groupsOnly = await arbor(env, "events", "list", "--group", "acme", "--subject", folder.uid, "--kind", "group")
    assert.lengthOf(groupsOnly.stdout.trimEnd().split("\n"), 3)
    const bindingsOnly = await arbor(env, "events", "list", "--subject", folder.uid, "--kind", "role_binding")
    assert.notInclude(bindingsOnly.stdout, "folder")
    const unknownKind = await arbor(env, "events", "list", "--kind", "folders")
    assert.strictEqual(unknownKind.code, 1)
    assert.include(unknownKind.stderr, "'folders' is no kind of resource")
    const wide = await arbor(env, "events", "list", "--group", "acme", "--subject", folder.uid, "-o", "wide")
    assert.include(wide.stdout.split("\n")[1], folder.uid)
    assert.include(wide.stdout.split("\n")[1], "iam.group.created")
    const [newest] = JSON.parse(
      (await arbor(env, "events", "list", "--newest-first", "--limit", "1", "-o", "json")).stdout
    )
    assert.strictEqual(newest.subject, folder.uid)

    // Follows from the newest entry: what happens next is printed as it happens, one JSON object a line.
    const child = spawn(process.execPath, [
      executable,
      "events",
      "watch",
      "--group",
      "acme",
      "--after",
      newest.cursor,
      "-o",
      "json"
    ], {
      env: { PATH: process.env.PATH!, ARBOR_API: server.url, NO_COLOR: "1", ...env }
    })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    onTestFinished(() => {
      child.kill("SIGINT")
    })
    await server.runtime.runPromise(
      Effect.flatMap(
        Groups.Groups,
        (groups) => groups.update(Principal.system, folder.uid, { description: "watched" })
      ).pipe(Effect.orDie)
    )
    for (let i = 0; i < 100 && !out.includes("\n"); i++) await new Promise((r) => setTimeout(r, 100))
    child.kill("SIGINT")
    const [watched] = out.trimEnd().split("\n").map((l) => JSON.parse(l))
    assert.strictEqual(watched.type, "dev.chainguard.api.iam.group.updated.v1")
    assert.strictEqual(watched.body.description, "watched")

    const refused = await arbor(env, "events", "watch", "--after", "nonsense")
    assert.strictEqual(refused.code, 1)
    assert.match(refused.stderr, /after: is not a cursor of this change log/)
  })

  it("events watch ends, exit 4 with the reason, once the caller's binding is revoked", async () => {
    const { env, identity, org: orgUid } = await asOwnerOf("revoking")
    const child = spawn(process.execPath, [executable, "events", "watch", "--group", "revoking", "-o", "json"], {
      env: { PATH: process.env.PATH!, ARBOR_API: server.url, NO_COLOR: "1", ...env }
    })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.stderr.on("data", (chunk) => (err += chunk))
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    onTestFinished(() => {
      child.kill("SIGINT")
    })
    const create = (name: string) =>
      server.runtime.runPromise(
        Effect.flatMap(Groups.Groups, (groups) => groups.create(Principal.system, orgUid, { name })).pipe(Effect.orDie)
      )
    // Until the watch is open, a folder made now may come before it: make folders until one is printed.
    for (let i = 0; i < 50 && !out.includes("\n"); i++) {
      await create(`seen ${i}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    assert.include(out, "iam.group.created")
    await server.runtime.runPromise(
      Effect.gen(function*() {
        const bindings = yield* RoleBindings.RoleBindings
        const [binding] = (yield* bindings.list(Principal.system, { identity })).items
        // Another owner first: an organization never loses its last.
        const keeper = yield* (yield* Identities.Identities).create(Principal.system, orgUid, {
          name: "keeper",
          claimMatch: { issuer: "https://issuer.example.com", subject: "revoking-keeper" }
        })
        yield* bindings.create(Principal.system, orgUid, {
          identityUid: keeper.uid,
          roleUid: Role.builtInByName("owner")!.uid
        })
        yield* bindings.delete(Principal.system, binding!.uid)
      }).pipe(Effect.orDie)
    )
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r("still running"), 10_000))])
    assert.strictEqual(code, 4)
    assert.match(err, /^arbor: Permission 'subscriptions.list' denied/m)
  })

  it("exits 5 for what does not exist, 2 for a bad command line", async () => {
    const env = await asDeployer()
    const missing = await arbor(env, "iam", "folders", "describe", "acme/nowhere")
    assert.strictEqual(missing.code, 5)
    assert.strictEqual(missing.stderr, "arbor: Not found: group acme/nowhere\n")
    const notFound = await arbor(env, "iam", "folders", "describe", `${org}/0123456789abcdef`)
    assert.strictEqual(notFound.code, 5)
    assert.match(notFound.stderr, /^arbor: Not found: group /)
    const usage = await arbor(env, "iam", "folders", "list", "-o", "yaml")
    assert.strictEqual(usage.code, 2)
    assert.notMatch(usage.stderr + usage.stdout, /at .*\.js:\d+/)
  })
})
