/**
 * The command line itself: help, flags, usage errors, shell completion, and the config file.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { arbor, deployer, home, server, useServers, workloadToken } from "./fixture.js"

useServers()

describe("the command line", () => {
  it("help through a pipe has no escape sequences; a nested group lists its commands once, by their own names", async () => {
    const { code, stdout } = await arbor({ ...home(), NO_COLOR: "" }, "iam", "identities", "--help")
    assert.strictEqual(code, 0)
    assert.notInclude(stdout, "\u001b")
    assert.match(stdout, /^Usage: arbor iam identities <command> \[options\]\n/)
    assert.match(stdout, /\n {2}create +Create an identity/)
    assert.notInclude(stdout, "iam iam")
  })

  it("a global flag before the command's words is taken; a mistyped word is named at its level, with a suggestion", async () => {
    const before = await arbor(home(), "--api", "http://127.0.0.1:9", "auth", "status")
    assert.strictEqual(before.code, 3, before.stderr)
    assert.include(before.stderr, "not logged in to http://127.0.0.1:9")
    const typo = await arbor(home(), "iam", "folders", "creat", "x")
    assert.strictEqual(typo.code, 2)
    assert.strictEqual(
      typo.stderr,
      "arbor: 'creat' is not a command of 'arbor iam folders'; did you mean 'create'? (arbor iam folders --help lists them)\n"
    )
  })

  it("a flag the command does not take is named (not another one missing); a choice refused names its flag", async () => {
    const bogus = await arbor(home(), "iam", "folders", "create", "x", "--bogus")
    assert.deepStrictEqual(
      [bogus.code, bogus.stderr],
      [2, "arbor: '--bogus' is not an option of 'arbor iam folders create' (arbor iam folders create --help)\n"]
    )
    const typo = await arbor(home(), "iam", "folders", "create", "x", "--parnt", "acme")
    assert.include(typo.stderr, "'--parnt' is not an option of 'arbor iam folders create'; did you mean '--parent'?")
    const yaml = await arbor(home(), "iam", "folders", "list", "--parent", "acme", "-o", "yaml")
    assert.deepStrictEqual(
      [yaml.code, yaml.stderr],
      [2, "arbor: -o, --output must be one of table, wide, json, id, csv, tree (arbor iam folders list --help)\n"]
    )
    // A value that looks like a flag, given to a flag that takes one, is that flag's value.
    const value = await arbor(
      home(),
      "--api",
      "http://127.0.0.1:9",
      "iam",
      "folders",
      "create",
      "x",
      "--parent",
      "acme",
      "--description",
      "--not-a-flag"
    )
    assert.strictEqual(value.code, 3, value.stderr)
    // A capability mistyped is named as the argument it was given as, not as the API's field.
    const capability = await arbor(home(), "iam", "check", "acme/ci", "repo.creat", "acme")
    assert.deepStrictEqual(
      [capability.code, capability.stderr],
      [
        2,
        "arbor: <capability>: 'repo.creat' is not a capability (such as repo.create or CAP_IAM_GROUPS_LIST) (arbor iam check --help)\n"
      ]
    )
    // diff keeps 2 for changes: a command line it does not understand exits 1.
    assert.strictEqual((await arbor(home(), "diff", "-f", "x.yaml", "--bogus")).code, 1)
  })
})

describe("arbor config", () => {
  it("keeps the API's address in the config file; flags and ARBOR_API win over it", async () => {
    const env = home()
    const tokenFile = join(env.dir, "token")
    writeFileSync(tokenFile, await workloadToken())
    assert.strictEqual(
      (await arbor({ ...env, ARBOR_API: "" }, "config", "set", "api", "http://config.invalid:1")).code,
      0
    )
    assert.strictEqual((await arbor(env, "config", "view")).stdout, "api: http://config.invalid:1\n")
    const unreachable = await arbor(
      { ...env, ARBOR_API: "" },
      "auth",
      "login",
      "--identity",
      deployer,
      "--identity-token",
      tokenFile
    )
    assert.strictEqual(unreachable.code, 1)
    assert.match(unreachable.stderr, /^arbor: cannot reach the server: .*config\.invalid/)
    const viaFlag = await arbor(
      { ...env, ARBOR_API: "" },
      "auth",
      "login",
      "--api",
      server.url,
      "--identity",
      deployer,
      "--identity-token",
      tokenFile
    )
    assert.strictEqual(viaFlag.code, 0, viaFlag.stderr)
  })
})

describe("arbor's help", () => {
  const leaves = [
    "advisories describe",
    "advisories list",
    "auth login",
    "auth logout",
    "auth status",
    "auth token",
    "config set",
    "config view",
    "iam account-associations check",
    "iam check",
    "iam account-associations create",
    "iam account-associations delete",
    "iam account-associations list",
    "iam external-group-role-mappings batch-delete",
    "iam external-group-role-mappings create",
    "iam external-group-role-mappings delete",
    "iam external-group-role-mappings describe",
    "iam external-group-role-mappings list",
    "iam folders create",
    "iam folders delete",
    "iam folders describe",
    "iam folders list",
    "iam folders update",
    "iam identities create generic",
    "iam identities create github",
    "iam identities create gitlab",
    "iam identities create kubernetes",
    "iam identities delete",
    "iam identities describe",
    "iam identities list",
    "iam identities lookup",
    "iam identities update",
    "iam identities update-metadata",
    "iam identity-providers create",
    "iam identity-providers delete",
    "iam identity-providers list",
    "iam identity-providers scim disable",
    "iam identity-providers scim enable",
    "iam identity-providers scim status",
    "iam identity-providers scim token generate",
    "iam identity-providers scim token regenerate",
    "iam identity-providers scim token revoke",
    "iam invites create",
    "iam invites delete",
    "iam invites list",
    "iam invites redeem",
    "iam organizations create",
    "iam organizations delete",
    "iam organizations describe",
    "iam organizations eligibility",
    "iam organizations list",
    "iam organizations lookup",
    "iam organizations request-access",
    "iam organizations unverify",
    "iam organizations verify",
    "iam role-bindings create",
    "iam role-bindings delete",
    "iam role-bindings list",
    "iam roles capabilities",
    "iam roles create",
    "iam roles delete",
    "iam roles describe",
    "iam roles list",
    "iam terms accept",
    "iam terms list",
    "images repos list",
    "images repos readme",
    "images repos set-readme",
    "images tags list"
  ]

  it("every command has --help with an example of itself", async () => {
    const helps = await Promise.all(leaves.map((leaf) => arbor(home(), ...leaf.split(" "), "--help")))
    leaves.forEach((leaf, i) => {
      assert.strictEqual(helps[i]!.code, 0, leaf)
      assert.include(helps[i]!.stdout, `Usage: arbor ${leaf}`, leaf)
      assert.include(helps[i]!.stdout, `Example:\n  arbor ${leaf}`, leaf)
      // Every argument says what it is.
      assert.notMatch(helps[i]!.stdout, /^ {2}<[\w-]+> *$/m, leaf)
      // Options in their own words, without the library's notes.
      assert.notMatch(helps[i]!.stdout, /This (option|setting)/, leaf)
    })
  }, 60_000)

  it("prints shell completion scripts that know the commands", async () => {
    for (const shell of ["bash", "zsh", "fish"]) {
      const script = await arbor(home(), "--completions", shell)
      assert.strictEqual(script.code, 0, shell)
      assert.include(script.stdout, "role-bindings", shell)
    }
  })
})
