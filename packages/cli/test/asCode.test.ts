/**
 * IAM as code through `arbor` (export, diff, apply, the document's schema), custom roles and invites, as an owner.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { parse, stringify } from "yaml"
import { arbor, asOwnerOf, home, loginHeadless, useServers } from "./fixture.js"

useServers()

describe("arbor iam, as an owner: IAM as code, roles and invites", () => {
  it("IAM as code as CI runs it (a workload's login): export, diff exits 0 then 2 (1 on errors), apply --yes, diff exits 0; secrets read here", async () => {
    const { env } = await asOwnerOf("coded")
    const exported = await arbor(env, "export", "coded")
    assert.strictEqual(exported.code, 0, exported.stderr)
    const file = join(env.dir, "coded.yaml")
    writeFileSync(file, exported.stdout)
    const same = await arbor(env, "diff", "-f", file)
    assert.deepStrictEqual([same.code, same.stdout], [0, "No changes: the organization is as the document says.\n"])
    const document = parse(exported.stdout)
    document.organizations.coded.folders = { prod: { description: "production" } }
    document.organizations.coded.roles = { deployer: ["repo.create", "CAP_REPO_LIST"] }
    writeFileSync(file, stringify(document))
    const diff = await arbor(env, "diff", "-f", file)
    assert.deepStrictEqual([diff.code, diff.stdout], [2, "+ folder coded/prod\n+ role coded/deployer\n"], diff.stderr)
    // Without a terminal to ask in, apply wants --yes; nothing is applied meanwhile.
    const unasked = await arbor(env, "apply", "-f", file)
    assert.strictEqual(unasked.code, 2)
    assert.match(unasked.stderr, /^arbor: give --yes to apply without a terminal to ask in \(arbor apply --help\)/)
    const applied = await arbor(env, "apply", "-f", file, "--yes")
    assert.strictEqual(applied.code, 0, applied.stderr)
    assert.match(applied.stdout, /Applied 2 change\(s\)\.\n$/)
    assert.strictEqual((await arbor(env, "diff", "-f", file)).code, 0)
    // An identity provider's client secret, read from this machine's environment and sent with the request, from
    // the variable an export names for it.
    const variable = "ARBOR_IDP_CODED__OKTA_CLIENT_SECRET"
    document.organizations.coded.identityProviders = {
      okta: {
        defaultRole: "viewer",
        issuer: "https://coded.okta.example.com",
        clientId: "arbor",
        secretFrom: { env: variable },
        mappings: [{ externalGroup: "platform", role: "deployer", scope: "prod" }]
      }
    }
    writeFileSync(file, stringify(document))
    // A plan goes on without a secret it cannot read: unknown, not compared (the provider is still to make: exit 2);
    // an apply needs it.
    const unset = await arbor(env, "diff", "-f", file)
    assert.strictEqual(unset.code, 2, unset.stderr)
    assert.include(
      unset.stderr,
      `secretFrom env:${variable}: the environment variable ${variable} is not set: unknown, not compared`
    )
    assert.include(unset.stdout, "+ identityProvider coded/okta")
    const unsetApply = await arbor(env, "apply", "-f", file, "--yes")
    assert.strictEqual(unsetApply.code, 1)
    assert.include(unsetApply.stderr, `the environment variable ${variable} is not set`)
    const withSecret = { ...env, [variable]: "s3cret" }
    const providers = await arbor(withSecret, "apply", "-f", file, "--yes")
    assert.strictEqual(providers.code, 0, providers.stderr)
    assert.include(
      providers.stdout,
      `+ identityProvider coded/okta: clientSecret from env ${variable}\n` +
        "+ mapping coded/okta: platform → deployer at coded/prod\n"
    )
    assert.strictEqual((await arbor(withSecret, "diff", "-f", file)).code, 0)
    // Reviewed where the variable is not set, the untouched document has no changes.
    const reviewed = await arbor(env, "diff", "-f", file)
    assert.deepStrictEqual(
      [reviewed.code, reviewed.stdout],
      [0, "No changes: the organization is as the document says.\n"],
      reviewed.stderr
    )
    // Every error exits 1 (2 says there are changes): a file that does not parse, a flag not understood.
    const broken = join(env.dir, "broken.yaml")
    writeFileSync(broken, "organizations: [")
    assert.strictEqual((await arbor(env, "diff", "-f", broken)).code, 1)
    assert.strictEqual((await arbor(env, "diff", "-f", file, "--prun")).code, 1)
    assert.strictEqual(
      (await arbor({ ...env, [variable]: "rotated" }, "diff", "-f", file)).stdout,
      `~ identityProvider coded/okta: clientSecret from env ${variable}\n`
    )
    assert.deepStrictEqual(
      parse((await arbor(env, "export", "coded")).stdout).organizations.coded.identityProviders.okta.secretFrom,
      { env: variable }
    )
  })

  it("IAM as code reads no secret a document names unless it may: ARBOR_IDP_ variables, the document's folder, or named by a flag", async () => {
    const { env } = await asOwnerOf("guarded")
    const folder = join(env.dir, "iam")
    mkdirSync(folder)
    const file = join(folder, "guarded.yaml")
    const outside = join(env.dir, "id_ed25519")
    writeFileSync(outside, "PRIVATE KEY")
    writeFileSync(join(folder, "okta.secret"), "s3cret\n")
    symlinkSync(outside, join(folder, "linked.secret"))
    const withSecret = (secretFrom: object) =>
      writeFileSync(
        file,
        stringify({
          organizations: {
            guarded: {
              identityProviders: {
                okta: { defaultRole: "viewer", issuer: "https://guarded.example.com", clientId: "arbor", secretFrom }
              }
            }
          }
        })
      )
    const machine = { ...env, AWS_SECRET_ACCESS_KEY: "aws-secret" }
    // Each is refused naming it, exit 1, nothing planned or sent.
    for (
      const [secretFrom, says] of [
        [{ env: "AWS_SECRET_ACCESS_KEY" }, "arbor reads only variables named ARBOR_IDP_… or given with --secret-env"],
        [{ file: outside }, "arbor reads only files in the document's folder"],
        [{ file: "../id_ed25519" }, "arbor reads only files in the document's folder"],
        [{ file: "linked.secret" }, "arbor reads only files in the document's folder"]
      ] as const
    ) {
      withSecret(secretFrom)
      const refused = await arbor(machine, "diff", "-f", file)
      assert.strictEqual(refused.code, 1, JSON.stringify(secretFrom))
      assert.include(refused.stderr, says)
      assert.strictEqual(refused.stdout, "")
    }
    // A file beside the document (read from there whatever the working folder), or what a flag names, is read.
    withSecret({ file: "okta.secret" })
    const beside = await arbor(machine, "diff", "-f", file)
    assert.deepStrictEqual(
      [beside.code, beside.stdout],
      [2, "+ identityProvider guarded/okta: clientSecret from file okta.secret\n"],
      beside.stderr
    )
    withSecret({ env: "AWS_SECRET_ACCESS_KEY" })
    const named = await arbor(machine, "diff", "-f", file, "--secret-env", "AWS_SECRET_ACCESS_KEY")
    assert.strictEqual(named.code, 2, named.stderr)
    withSecret({ file: outside })
    assert.strictEqual((await arbor(machine, "diff", "-f", file, "--secret-file", outside)).code, 2)

    // Two providers never read one secret (issue 54: a folder's okta beside the organization's prod-okta shared a
    // variable, and an export → apply sent the organization's secret to the folder owner's issuer).
    const provider = (secretFrom: object) => ({
      defaultRole: "viewer",
      issuer: "https://guarded.example.com",
      clientId: "arbor",
      secretFrom
    })
    const both = (a: object, b: object) =>
      writeFileSync(
        file,
        stringify({
          organizations: {
            guarded: {
              folders: { prod: {} },
              identityProviders: { "prod-okta": provider(a), "prod/okta": provider(b) }
            }
          }
        })
      )
    both({ file: "okta.secret" }, { file: "./okta.secret" })
    const sameFile = await arbor(machine, "diff", "-f", file)
    assert.strictEqual(sameFile.code, 1)
    assert.include(sameFile.stderr, "prod-okta.secretFrom")
    symlinkSync(join(folder, "okta.secret"), join(folder, "again.secret"))
    both({ file: "okta.secret" }, { file: "again.secret" })
    const linked = await arbor(machine, "diff", "-f", file)
    assert.strictEqual(linked.code, 1)
    assert.include(linked.stderr, "each identity provider's secret is its own")
    // Made apart, each exports a variable of its own; applied back, each reads its own.
    const secrets = {
      ARBOR_IDP_GUARDED__PROD_OKTA_CLIENT_SECRET: "the organization's",
      ARBOR_IDP_GUARDED__PROD__OKTA_CLIENT_SECRET: "the folder's"
    }
    both({ env: "ARBOR_IDP_GUARDED__PROD_OKTA_CLIENT_SECRET" }, { env: "ARBOR_IDP_GUARDED__PROD__OKTA_CLIENT_SECRET" })
    const applied = await arbor({ ...env, ...secrets }, "apply", "-f", file, "--yes")
    assert.strictEqual(applied.code, 0, applied.stderr)
    const exported = parse((await arbor(env, "export", "guarded")).stdout).organizations.guarded.identityProviders
    assert.deepStrictEqual(
      [exported["prod-okta"].secretFrom, exported["prod/okta"].secretFrom],
      [{ env: "ARBOR_IDP_GUARDED__PROD_OKTA_CLIENT_SECRET" }, { env: "ARBOR_IDP_GUARDED__PROD__OKTA_CLIENT_SECRET" }]
    )
    assert.strictEqual((await arbor({ ...env, ...secrets }, "diff", "-f", file)).code, 0)
  })

  it("IAM as code: an organization not made yet, a file that is no document, the document's schema", async () => {
    const { env } = await asOwnerOf("uncoded")
    const file = join(env.dir, "uncoded.yaml")
    // An organization that does not exist yet is the collection's to create: for platform admins only.
    writeFileSync(file, stringify({ organizations: { "not-yet": { folders: { prod: {} } } } }))
    const notYet = await arbor(env, "diff", "-f", file)
    assert.strictEqual(notYet.code, 4, notYet.stderr)
    assert.match(notYet.stderr, /^arbor: Permission 'groups.create' d/)
    const bad = await arbor(env, "diff", "-f", join(env.dir, "token"))
    assert.strictEqual(bad.code, 1, bad.stderr)
    // The document's JSON Schema, for an editor.
    const schema = await arbor(env, "iac", "schema")
    assert.property(JSON.parse(schema.stdout).$defs, "Folder")
  })

  it("creates a custom role from capabilities in either spelling; lists every capability", async () => {
    const { env } = await asOwnerOf("roles-org")
    const capabilities = (await arbor(env, "iam", "roles", "capabilities")).stdout.trim().split("\n")
    assert.include(capabilities, "groups.list")
    assert.include(capabilities, "advisories.list")
    const unknown = await arbor(env, "iam", "roles", "create", "puller", "--parent", "roles-org", "-c", "repo.pull")
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, "not capabilities: repo.pull")
    const created = await arbor(
      env,
      "iam",
      "roles",
      "create",
      "puller",
      "--parent",
      "roles-org",
      "-c",
      "repo.list",
      "-c",
      "CAP_TAG_LIST",
      "-o",
      "json"
    )
    assert.strictEqual(created.code, 0, created.stderr)
    assert.deepStrictEqual(JSON.parse(created.stdout)[0].capabilities, ["CAP_REPO_LIST", "CAP_TAG_LIST"])
  })

  it("creates an invite and prints its code once; a person signs in with it and joins", async () => {
    const { env, org: invitedTo } = await asOwnerOf("invites-org")
    const created = await arbor(
      env,
      "iam",
      "invites",
      "create",
      "--parent",
      "invites-org",
      "--role",
      "viewer",
      "--single-use"
    )
    assert.strictEqual(created.code, 0, created.stderr)
    const code = created.stdout.trim()
    assert.match(code, /^[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/)
    assert.include(created.stderr, "shown this once")
    const listed = await arbor(env, "iam", "invites", "list", "--parent", "invites-org", "-o", "json")
    assert.notInclude(listed.stdout, code)
    // A person signs in headless with the code and sees the organization.
    const person = home()
    const joined = await loginHeadless(person, "invitee", "--invite-code", code)
    assert.strictEqual(joined.code, 0, joined.stderr)
    const orgs = await arbor(person, "iam", "organizations", "list", "-o", "id")
    assert.strictEqual(orgs.stdout.trim(), invitedTo)
    // Signed in already, the person redeems a second invite as themselves.
    const editor = await arbor(env, "iam", "invites", "create", "--parent", "invites-org", "--role", "editor")
    const redeemed = await arbor(person, "iam", "invites", "redeem", editor.stdout.trim(), "-o", "json")
    assert.strictEqual(redeemed.code, 0, redeemed.stderr)
    const [binding] = JSON.parse(redeemed.stdout)
    assert.deepStrictEqual([binding.group.uid, binding.role.name], [invitedTo, "editor"])
    const again = await arbor(person, "iam", "invites", "redeem", "0123456789abcdef.not-a-code")
    assert.notStrictEqual(again.code, 0)
  }, 30_000)
})
