/**
 * `arbor` as a person or a workload runs it: the built executable as a child process, against a server started
 * here on loopback, checking stdout, stderr and exit codes. Workloads sign in with a token of `oauth2-mock-server`;
 * people with `oidc-provider`, the system browser replaced by an HTTP client that completes the flow.
 */
import { Advisories, Groups, Identities, Principal, Repos, Role, RoleBindings, Tags } from "@arbor/core"
import * as Effect from "effect/Effect"
import { execFile, execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { OAuth2Server } from "oauth2-mock-server"
import { afterAll, assert, beforeAll, describe, it, onTestFinished } from "vitest"
import { parse, stringify } from "yaml"
import {
  Browser,
  confirmDevice,
  freePort,
  loginWith,
  startProvider,
  startServer
} from "../../http/test/signInSupport.js"
import { executable } from "./globalSetup.js"

let server: Awaited<ReturnType<typeof startServer>>
let provider: Awaited<ReturnType<typeof startProvider>>
let workloads: OAuth2Server
let org: string
let deployer: string

beforeAll(async () => {
  const port = await freePort()
  provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
  server = await startServer(port, { login: loginWith(provider) })
  workloads = new OAuth2Server()
  await workloads.issuer.keys.generate("RS256")
  await workloads.start(0, "127.0.0.1")
  ;({ deployer, org } = await server.runtime.runPromise(
    Effect.gen(function*() {
      const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "acme" })
      const deployer = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
        name: "deployer",
        claimMatch: { issuer: workloads.issuer.url!, subject: "repo:acme/app:ref:refs/heads/main" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: deployer.uid,
        roleUid: Role.builtInByName("editor")!.uid
      })
      return { org: org.uid, deployer: deployer.uid }
    }).pipe(Effect.orDie)
  ))
}, 30_000)

afterAll(async () => {
  await server?.close()
  await provider?.close()
  await workloads?.stop()
})

/** A fresh home for the client: its config and cache folders. */
const home = () => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-cli-"))
  return { XDG_CONFIG_HOME: join(dir, "config"), XDG_CACHE_HOME: join(dir, "cache"), dir }
}

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `arbor` with `args` in `env` (a home, the API's address). */
const arbor = (env: Record<string, string>, ...args: ReadonlyArray<string>) =>
  new Promise<Run>((resolve) => {
    execFile(process.execPath, [executable, ...args], {
      env: { PATH: process.env.PATH!, ARBOR_API: server.url, NO_COLOR: "1", ...env },
      timeout: 60_000
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
  })

const workloadToken = () =>
  workloads.issuer.buildToken({
    scopesOrTransform: (_header, payload) => {
      payload.sub = "repo:acme/app:ref:refs/heads/main"
      payload.aud = server.url
    }
  })

/** A home signed in as the deployer workload, its token in a file. */
const asDeployer = async () => {
  const env = home()
  const file = join(env.dir, "token")
  writeFileSync(file, await workloadToken())
  const login = await arbor(env, "auth", "login", "--identity", deployer, "--identity-token", file)
  assert.strictEqual(login.code, 0, login.stderr)
  return env
}

/** A home signed in as a workload that owns a fresh organization. */
const asOwnerOf = async (orgName: string) => {
  const owner = await server.runtime.runPromise(
    Effect.gen(function*() {
      const created = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: orgName })
      const identity = yield* (yield* Identities.Identities).create(Principal.system, created.uid, {
        name: "owner",
        claimMatch: { issuer: workloads.issuer.url!, subject: `owner-of-${orgName}` }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, created.uid, {
        identityUid: identity.uid,
        roleUid: Role.builtInByName("owner")!.uid
      })
      return { org: created.uid, identity: identity.uid }
    }).pipe(Effect.orDie)
  )
  const env = home()
  const token = await workloads.issuer.buildToken({
    scopesOrTransform: (_header, payload) => {
      payload.sub = `owner-of-${orgName}`
      payload.aud = server.url
    }
  })
  const file = join(env.dir, "token")
  writeFileSync(file, token)
  const login = await arbor(env, "auth", "login", "--identity", owner.identity, "--identity-token", file)
  assert.strictEqual(login.code, 0, login.stderr)
  return { env, ...owner }
}

/**
 * `arbor auth login` (the browser flow) with `env`, its "system browser" a script that hands the address it is given
 * to the test: that address, and the command's exit and stderr once it ends.
 */
const loginWithBrowser = async (env: Record<string, string> & { readonly dir: string }) => {
  const opened = join(env.dir, "opened")
  const browserScript = join(env.dir, "browser.sh")
  writeFileSync(browserScript, `#!/bin/sh\necho "$1" > ${opened}\n`, { mode: 0o755 })
  const child = spawn(process.execPath, [executable, "auth", "login"], {
    env: { PATH: process.env.PATH!, ARBOR_API: server.url, BROWSER: browserScript, ...env }
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
  let address = ""
  while (address === "") {
    await new Promise((resolve) => setTimeout(resolve, 50))
    try {
      address = readFileSync(opened, "utf8").trim()
    } catch {
      // not yet
    }
  }
  return { address, done: exited.then((code) => ({ code, stderr })) }
}

/**
 * `arbor auth login --headless` with `args` in `env`, while a person opens the address it prints and signs in at
 * the provider as `login`: its exit code and stderr.
 */
const loginHeadless = async (env: Record<string, string>, login: string, ...args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [executable, "auth", "login", "--headless", ...args], {
    env: { PATH: process.env.PATH!, ARBOR_API: server.url, ...env }
  })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
  while (!/\(or open (\S+)\)/.test(stderr)) await new Promise((resolve) => setTimeout(resolve, 50))
  const browser = new Browser()
  const address = /\(or open (\S+)\)/.exec(stderr)![1]!
  await browser.visit(await confirmDevice(browser, address), { login, provider: provider.issuer })
  return { code: await exited, stderr }
}

/** Runs `arbor` with `args` in `env`, `input` on its standard input. */
const arborWithInput = (env: Record<string, string>, input: string, ...args: ReadonlyArray<string>) =>
  new Promise<Run>((resolve) => {
    const child = execFile(process.execPath, [executable, ...args], {
      env: { PATH: process.env.PATH!, ARBOR_API: server.url, NO_COLOR: "1", ...env },
      timeout: 60_000
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
    child.stdin!.end(input)
  })

describe("arbor auth", () => {
  it("a sign-in refused for its provider names the flag a person gives (--idp), not the API's parameter", async () => {
    const port = await freePort()
    const bare = await startServer(port, {})
    try {
      const child = await new Promise<Run>((resolve) =>
        execFile(process.execPath, [executable, "auth", "login", "--headless"], {
          env: { PATH: process.env.PATH!, ARBOR_API: bare.url, NO_COLOR: "1", ...home() },
          timeout: 30_000
        }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
      )
      assert.strictEqual(child.code, 1, child.stderr)
      assert.include(child.stderr, "(--idp)")
      assert.notInclude(child.stderr, "idp_id")
    } finally {
      await bare.close()
    }
  })

  it("a workload's token comes from a file or standard input, never from the command line", async () => {
    const token = await workloadToken()
    const onCommandLine = await arbor(home(), "auth", "login", "--identity", deployer, "--identity-token", token)
    assert.strictEqual(onCommandLine.code, 2)
    assert.include(onCommandLine.stderr, "standard input")
    const env = home()
    const fromStdin = await arborWithInput(
      env,
      `${token}\n`,
      "auth",
      "login",
      "--identity",
      deployer,
      "--identity-token",
      "-"
    )
    assert.strictEqual(fromStdin.code, 0, fromStdin.stderr)
    const printed = await arbor(env, "auth", "token")
    assert.strictEqual(JSON.parse(Buffer.from(printed.stdout.split(".")[1]!, "base64url").toString()).sub, deployer)
    const help = await arbor(home(), "auth", "login", "--help")
    assert.include(help.stdout.replace(/\s+/g, " "), "- to read it from standard input")
  })

  it("a workload logs in with its token file; the cache is private; auth token prints a valid token", async () => {
    const env = await asDeployer()
    const cache = join(env.XDG_CACHE_HOME, "arbor", encodeURIComponent(server.url))
    assert.strictEqual(statSync(cache).mode & 0o777, 0o700)
    assert.strictEqual(statSync(join(cache, "token")).mode & 0o777, 0o600)
    const token = await arbor(env, "auth", "token")
    assert.strictEqual(token.code, 0)
    const claims = JSON.parse(Buffer.from(token.stdout.trim().split(".")[1]!, "base64url").toString())
    assert.strictEqual(claims.sub, deployer)
    const status = await arbor(env, "auth", "status", "-o", "json")
    const described = JSON.parse(status.stdout)
    assert.deepInclude(described, { identity: deployer, organizations: ["acme"] })
    // An editor's capabilities, as the server decides them.
    assert.includeMembers(described.capabilities.acme, ["groups.list", "repo.create", "tag.update"])
    assert.notInclude(described.capabilities.acme, "role_bindings.create")
    assert.match((await arbor(env, "auth", "status")).stdout, /\ncapabilities:\n {2}acme: groups\.list /)
    // The same decisions, one at a time: allowed (and by what), or exit 1.
    // The identity by its path of names or its uid; what granted it by name, the binding's uid beside.
    const allowed = await arbor(env, "iam", "check", "acme/deployer", "repo.create", "acme", "--explain")
    assert.strictEqual(allowed.code, 0, allowed.stderr)
    assert.match(allowed.stdout, /^allowed\n {2}editor at acme \(binding [0-9a-f/]+\)\n$/)
    assert.strictEqual((await arbor(env, "iam", "check", deployer, "repo.create", "acme")).stdout, "allowed\n")
    const nobody = await arbor(env, "iam", "check", "acme/nobody", "repo.create", "acme")
    assert.deepStrictEqual([nobody.code, nobody.stdout], [5, ""])
    assert.include(nobody.stderr, "acme/nobody")
    const denied = await arbor(env, "iam", "check", deployer, "CAP_IAM_ROLE_BINDINGS_CREATE", "acme")
    assert.deepStrictEqual([denied.code, denied.stdout], [1, ""])
    assert.match(denied.stderr, /denied: .* does not hold CAP_IAM_ROLE_BINDINGS_CREATE in acme/)
    // An expired API token is exchanged again from the token file.
    writeFileSync(join(cache, "token"), "e30.eyJleHAiOjF9.x\n")
    const again = await arbor(env, "auth", "token")
    assert.strictEqual(again.code, 0, again.stderr)
    assert.notStrictEqual(again.stdout.trim(), "e30.eyJleHAiOjF9.x")
  })

  it("auth token --capabilities/--scope prints a narrowed token and keeps the cached one whole", async () => {
    const env = await asDeployer()
    const whole = (await arbor(env, "auth", "token")).stdout.trim()
    const narrowed = await arbor(env, "auth", "token", "--capabilities", "groups.list,repo.list", "--scope", org)
    assert.strictEqual(narrowed.code, 0, narrowed.stderr)
    const claims = JSON.parse(Buffer.from(narrowed.stdout.trim().split(".")[1]!, "base64url").toString())
    assert.strictEqual(claims.sub, deployer)
    assert.sameMembers(claims.cap, ["groups.list", "repo.list"])
    assert.deepStrictEqual(claims.scopes, [org])
    // The narrowed token reads and cannot write, though the deployer is an editor.
    const withNarrowed = { ...env, ARBOR_TOKEN: narrowed.stdout.trim() }
    assert.strictEqual((await arbor(withNarrowed, "iam", "folders", "list")).code, 0)
    const create = await arbor(withNarrowed, "iam", "folders", "create", "blocked", "--parent", org)
    assert.notStrictEqual(create.code, 0)
    assert.include(create.stderr, "groups.create")
    // Commands without the flags go on with the whole token.
    assert.strictEqual((await arbor(env, "auth", "token")).stdout.trim(), whole)
    const unknown = await arbor(env, "auth", "token", "--capabilities", "groups.fly")
    assert.notStrictEqual(unknown.code, 0)
    assert.include(unknown.stderr, "groups.fly")
    // A token from ARBOR_TOKEN cannot be narrowed.
    const given = await arbor({ ...home(), ARBOR_TOKEN: whole }, "auth", "token", "--scope", org)
    assert.strictEqual(given.code, 3)
    assert.include(given.stderr, "cannot be narrowed")
  })

  it("without a login, commands exit 3 and say how to log in; logout forgets the tokens", async () => {
    const env = home()
    const none = await arbor(env, "iam", "folders", "list")
    assert.strictEqual(none.code, 3)
    assert.match(none.stderr, /not logged in to .*; run arbor auth login/)
    assert.strictEqual(none.stdout, "")
    const signedIn = await asDeployer()
    const out = await arbor(signedIn, "auth", "logout")
    assert.strictEqual(out.code, 0)
    assert.match(out.stderr, /^Logged out of http:\/\/127\.0\.0\.1:\d+: its tokens are forgotten/)
    assert.strictEqual(out.stdout, "")
    assert.strictEqual((await arbor(signedIn, "auth", "token")).code, 3)
    const again = await arbor(signedIn, "auth", "logout")
    assert.strictEqual(again.code, 0)
    assert.match(again.stderr, /^You were not logged in to /)
  })

  it(
    "a person logs in headless: the code and address on stderr, the tokens once they signed in elsewhere",
    async () => {
      const env = home()
      const { code, stderr } = await loginHeadless(env, "ada")
      assert.strictEqual(code, 0, stderr)
      assert.match(stderr, /open http:\/\/127\.0\.0\.1:\d+\/oauth\/device and enter the code [A-Z]{4}-[A-Z]{4}/)
      assert.include(stderr, "Logged in to")
      assert.include(stderr, "as ada@example.com")
      const status = JSON.parse((await arbor(env, "auth", "status", "-o", "json")).stdout)
      assert.strictEqual(status.email, "ada@example.com")
      // A person renames their own identity.
      const renamed = await arbor(
        env,
        "iam",
        "identities",
        "update",
        status.identity,
        "--name",
        "ada lovelace",
        "-o",
        "json"
      )
      assert.strictEqual(JSON.parse(renamed.stdout)[0].name, "ada lovelace", renamed.stderr)
      // An API token about to expire is replaced through the refresh token, which rotates.
      const cache = join(env.XDG_CACHE_HOME, "arbor", encodeURIComponent(server.url))
      const firstRefresh = readFileSync(join(cache, "refresh-token"), "utf8").trim()
      writeFileSync(join(cache, "token"), "e30.eyJleHAiOjF9.x\n")
      const refreshed = await arbor(env, "auth", "token")
      assert.strictEqual(refreshed.code, 0, refreshed.stderr)
      assert.strictEqual(
        JSON.parse(Buffer.from(refreshed.stdout.split(".")[1]!, "base64url").toString()).sub,
        status.identity
      )
      assert.notStrictEqual(readFileSync(join(cache, "refresh-token"), "utf8").trim(), firstRefresh)
      // A narrowed token comes through the refresh token too, which rotates again.
      const narrowed = await arbor(env, "auth", "token", "--capabilities", "groups.list")
      assert.strictEqual(narrowed.code, 0, narrowed.stderr)
      assert.deepStrictEqual(JSON.parse(Buffer.from(narrowed.stdout.split(".")[1]!, "base64url").toString()).cap, [
        "groups.list"
      ])
      const secondRefresh = readFileSync(join(cache, "refresh-token"), "utf8").trim()
      assert.notStrictEqual(secondRefresh, firstRefresh)
      // Logging out revokes the refresh token.
      assert.strictEqual((await arbor(env, "auth", "logout")).code, 0)
      const afterLogout = await fetch(`${server.url}/sts/exchange_refresh_token`, {
        method: "POST",
        headers: { authorization: `Bearer ${secondRefresh}` }
      })
      assert.strictEqual(afterLogout.status, 401)
    },
    30_000
  )

  it("a person finds the verified organization of their email's domain and asks its owners for access", async () => {
    const org = await server.runtime.runPromise(
      Effect.flatMap(Groups.Groups, (g) => g.createRoot(Principal.system, { name: "example.com" })).pipe(Effect.orDie)
    )
    // Only platform admins verify: an owner is refused.
    const { env: ownerEnv } = await asOwnerOf("notadmin.dev")
    const refused = await arbor(ownerEnv, "iam", "organizations", "verify", "notadmin.dev")
    assert.strictEqual(refused.code, 4, refused.stderr)
    await server.runtime.runPromise(
      Effect.flatMap(Groups.Groups, (g) => g.update(Principal.system, org.uid, { verified: true })).pipe(Effect.orDie)
    )
    const env = home()
    assert.strictEqual((await loginHeadless(env, "hopper")).code, 0)
    assert.match((await arbor(env, "iam", "organizations", "eligibility")).stdout, /^eligible/)
    const found = await arbor(env, "iam", "organizations", "lookup", "-o", "json")
    assert.strictEqual(found.code, 0, found.stderr)
    assert.deepInclude(JSON.parse(found.stdout)[0], { uid: org.uid, name: "example.com", verified: true })
    const asked = await arbor(env, "iam", "organizations", "request-access", org.uid)
    assert.strictEqual(asked.code, 0, asked.stderr)
    assert.include(asked.stderr, "sent to the organization's owners")
    const again = await arbor(env, "iam", "organizations", "request-access", org.uid)
    assert.strictEqual(again.code, 1)
    assert.include(again.stderr, "within the last day")
    // A workload has no email: not eligible, and finds nothing.
    const workload = await asDeployer()
    assert.match((await arbor(workload, "iam", "organizations", "eligibility")).stdout, /^not eligible/)
    assert.strictEqual((await arbor(workload, "iam", "organizations", "lookup")).code, 5)
  }, 30_000)

  it("a person logs in with a browser: the loopback callback receives the tokens", async () => {
    const env = home()
    const { address, done } = await loginWithBrowser(env)
    // Another process on this machine finds the listener first: without this sign-in's state it is turned away.
    const callback = new URL(new URL(address).searchParams.get("redirect")!)
    assert.isString(callback.searchParams.get("state"))
    const planted = await fetch(`${callback.origin}${callback.pathname}?token=planted`)
    assert.strictEqual(planted.status, 400)
    const landed = await new Browser().visit(address, { login: "grace", provider: provider.issuer })
    assert.include(landed.text, "Signed in")
    const { code, stderr } = await done
    assert.strictEqual(code, 0, stderr)
    const token = await arbor(env, "auth", "token")
    assert.strictEqual(
      JSON.parse(Buffer.from(token.stdout.split(".")[1]!, "base64url").toString()).email,
      "grace@example.com"
    )
  }, 30_000)
})

const chromiumPath = (() => {
  if (process.env.ARBOR_CHROMIUM) return process.env.ARBOR_CHROMIUM
  try {
    return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim()
  } catch {
    if (process.env.CI) throw new Error("Chromium is required in CI; .ci/run installs it")
    return undefined
  }
})()

describe.skipIf(chromiumPath === undefined)("arbor auth login in a real browser", () => {
  it("headless Chromium as the system browser signs a person in through the loopback callback", async () => {
    const { chromium } = await import("playwright-core")
    const browser = await chromium.launch({
      executablePath: chromiumPath!,
      args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
    })
    try {
      const env = home()
      const { address, done } = await loginWithBrowser(env)
      const page = await browser.newPage()
      await page.goto(address)
      await page.fill("input[name=login]", "sub-chromium")
      await page.fill("input[name=password]", "any")
      await page.click("button[type=submit]")
      // The consent page follows the login page; its button says Continue.
      await page.click("button[type=submit]:has-text('Continue')")
      await page.waitForURL((url) => url.pathname === "/callback")
      assert.include(await page.textContent("body"), "Signed in. You can close this window.")
      const { code, stderr } = await done
      assert.strictEqual(code, 0, stderr)
      const status = await arbor(env, "auth", "status", "-o", "json")
      assert.strictEqual(JSON.parse(status.stdout).email, "chromium@example.com")
    } finally {
      await browser.close()
    }
  }, 60_000)
})

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

  it("an eligibility, an elevation asked with a reason, refused to its asker as approver, approved by the owner", async () => {
    const { env } = await asOwnerOf("elevate-cli")
    const made = await arbor(
      env,
      "iam",
      "identities",
      "create",
      "generic",
      "worker",
      "--parent",
      "elevate-cli",
      "--identity-issuer",
      workloads.issuer.url!,
      "--subject",
      "worker-of-elevate-cli",
      "-o",
      "id"
    )
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
    const worker = home()
    const file = join(worker.dir, "token")
    writeFileSync(
      file,
      await workloads.issuer.buildToken({
        scopesOrTransform: (_header, payload) => {
          payload.sub = "worker-of-elevate-cli"
          payload.aud = server.url
        }
      })
    )
    const login = await arbor(worker, "auth", "login", "--identity", made.stdout.trim(), "--identity-token", file)
    assert.strictEqual(login.code, 0, login.stderr)
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
    const deleted = await arbor(env, "iam", "eligibilities", "delete", listed.stdout.trim())
    assert.strictEqual(deleted.code, 0, deleted.stderr)
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
const succeeding = (env: Record<string, string>) => {
  const run = async (...args: ReadonlyArray<string>) => {
    const result = await arbor(env, ...args)
    assert.strictEqual(result.code, 0, `${args.join(" ")}: ${result.stderr}`)
    return result.stdout
  }
  const json = async (...args: ReadonlyArray<string>) => JSON.parse(await run(...args, "-o", "json"))
  return { json, run }
}

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

const tmux = (() => {
  try {
    execFileSync("tmux", ["-V"])
    return true
  } catch {
    if (process.env.CI) throw new Error("tmux is required in CI; .ci/run installs it")
    return false
  }
})()

describe.skipIf(!tmux)("arbor in a terminal (tmux)", () => {
  /**
   * Runs a shell command in a new tmux session, 200 columns by default (uids are long); the session's screen as a
   * person sees it (`escapes`: with its colours and weights, as escape sequences).
   */
  const terminal = (env: Record<string, string>, command: string, columns = 200) => {
    const name = `arbor-${Math.random().toString(36).slice(2, 8)}`
    const exports = Object.entries({ ARBOR_API: server.url, ...env }).map(([k, v]) => `export ${k}='${v}';`).join(" ")
    execFileSync("tmux", ["new-session", "-d", "-s", name, "-x", String(columns), "-y", "60", "sh"])
    execFileSync("tmux", ["send-keys", "-t", name, `${exports} clear; ${command}; echo "exit=$?"`, "Enter"])
    return {
      screen: () => execFileSync("tmux", ["capture-pane", "-p", "-t", name], { encoding: "utf8" }),
      escapes: () => execFileSync("tmux", ["capture-pane", "-p", "-e", "-t", name], { encoding: "utf8" }),
      until: async (pattern: RegExp) => {
        for (let i = 0; i < 200; i++) {
          const screen = execFileSync("tmux", ["capture-pane", "-p", "-t", name], { encoding: "utf8" })
          if (pattern.test(screen)) return screen
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        throw new Error(
          `the terminal never showed ${pattern}:\n${
            execFileSync("tmux", ["capture-pane", "-p", "-t", name], { encoding: "utf8" })
          }`
        )
      },
      type: (keys: string) => execFileSync("tmux", ["send-keys", "-t", name, keys, "Enter"]),
      close: () => execFileSync("tmux", ["kill-session", "-t", name])
    }
  }

  it("asks before a person deletes their own owner binding; the organization's last owner's is refused outright", async () => {
    const { env, identity, org } = await asOwnerOf("careful")
    const own = (await arbor(env, "iam", "role-bindings", "list", "--identity", identity, "-o", "id")).stdout.trim()
    // The only owner: refused, even when they say yes (exit 1, the rule named), and kept.
    const last = await arbor(env, "iam", "role-bindings", "delete", own, "--yes")
    assert.strictEqual(last.code, 1)
    assert.include(last.stderr, "an organization keeps at least one active owner")
    await server.runtime.runPromise(
      Effect.gen(function*() {
        const second = yield* (yield* Identities.Identities).create(Principal.system, org, {
          name: "second",
          claimMatch: { issuer: "https://issuer.example.com", subject: "careful-second" }
        })
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org, {
          identityUid: second.uid,
          roleUid: Role.builtInByName("owner")!.uid
        })
      }).pipe(Effect.orDie)
    )
    // With another owner: without a terminal to ask in, --yes is needed; in one, the question, and "n" keeps it.
    const piped = await arbor(env, "iam", "role-bindings", "delete", own)
    assert.strictEqual(piped.code, 2)
    assert.include(piped.stderr, "give --yes to delete it without a terminal to ask in")
    const session = terminal(env, `node ${executable} iam role-bindings delete ${own}`)
    try {
      await session.until(
        /This is your own owner binding at careful: you may not be able to get it back\. Delete it\? \[y\/N\]/
      )
      session.type("n")
      assert.include(await session.until(/exit=\d/), "nothing done")
    } finally {
      session.close()
    }
    const owned = async () =>
      (await arbor(env, "iam", "role-bindings", "list", "--identity", identity, "-o", "id")).stdout.trim()
    assert.strictEqual(await owned(), own)
    const deleted = await arbor(env, "iam", "role-bindings", "delete", own, "--yes")
    assert.strictEqual(deleted.code, 0, deleted.stderr)
    assert.strictEqual(await owned(), "")
  })

  it("a delete on a terminal asks first and says what it deleted; without one it goes ahead and says so", async () => {
    const { env, org } = await asOwnerOf("tidy")
    const made = await arbor(env, "iam", "folders", "create", "old", "--parent", org)
    assert.strictEqual(made.code, 0, made.stderr)
    const session = terminal(env, `node ${executable} iam folders delete tidy/old`)
    try {
      await session.until(/Delete tidy\/old\? \[y\/N\]/)
      session.type("n")
      assert.include(await session.until(/exit=\d/), "nothing done")
    } finally {
      session.close()
    }
    const piped = await arbor(env, "iam", "folders", "delete", "tidy/old")
    assert.strictEqual(piped.code, 0, piped.stderr)
    assert.match(piped.stdout, /^Deleted tidy\/old \([0-9a-f/]+\)\n$/)
  })

  it("--help reads well at 80 and 150 columns: the command's path, placeholders, descriptions beside their flags", async () => {
    for (const columns of [80, 150]) {
      const session = terminal(home(), `node ${executable} iam folders create --help`, columns)
      try {
        const screen = await session.until(/exit=0/)
        const lines = screen.split("\n")
        assert.include(lines, "Usage: arbor iam folders create <name> --parent <group> [options]", screen)
        assert.include(lines, "  <name>  the folder's name", screen)
        assert.include(lines, "Example:", screen)
        // Each description starts in one column beside its flag, and wraps below itself.
        const parent = lines.findIndex((line) => line.startsWith("  --parent <group>"))
        assert.strictEqual(lines[parent]!.indexOf("the group: a uid"), 32, screen)
        const api = lines.find((line) => line.startsWith("  --api <url>"))!
        if (columns === 80) assert.match(lines[lines.indexOf(api) + 1]!, /^ {32}\S/, screen)
        else assert.include(api, "or http://localhost:8080)", screen)
        for (const line of lines) assert.isAtMost(line.length, columns, screen)
        assert.notInclude(screen, "A user-defined piece of text", screen)
        assert.notInclude(screen, "--wizard", screen)
        // Headings are bold on a terminal.
        assert.include(session.escapes(), "\u001b[1mUsage:", screen)
      } finally {
        session.close()
      }
    }
    // NO_COLOR: no bold on a terminal either.
    const plain = terminal({ ...home(), NO_COLOR: "1" }, `node ${executable} --help`, 80)
    try {
      await plain.until(/exit=0/)
      assert.notInclude(plain.escapes(), "\u001b[1m")
      assert.include(plain.screen(), "  iam         Organizations, folders, identities")
    } finally {
      plain.close()
    }
  })

  it("a person sees an aligned table of folders", async () => {
    await server.runtime.runPromise(
      Effect.flatMap(Groups.Groups, (groups) => groups.create(Principal.system, org, { name: "seen in a terminal" }))
        .pipe(Effect.orDie)
    )
    const env = await asDeployer()
    const session = terminal(env, `node ${executable} iam folders list --parent acme`)
    try {
      const screen = await session.until(/exit=0/)
      const lines = screen.split("\n").filter((l) => l.trim() !== "")
      const heading = lines.findIndex((l) => l.startsWith("NAME"))
      assert.isAtLeast(heading, 0, screen)
      const rows = lines.slice(heading + 1, lines.findIndex((l) => l.startsWith("exit=")))
      assert.isAtLeast(rows.length, 1, screen)
      for (const row of rows) assert.strictEqual(row.search(/[0-9a-f]{40}/), lines[heading]!.indexOf("UID"), screen)
    } finally {
      session.close()
    }
  })

  it("at 80 columns: a wide table fits, cut short where it must; a usage error says what and where to look", async () => {
    const env = await asDeployer()
    const wide = terminal(env, `node ${executable} iam folders list --parent acme -o wide`, 80)
    try {
      const screen = await wide.until(/exit=0/)
      const lines = screen.split("\n").filter((l) => l.trim() !== "")
      for (const line of lines) assert.isAtMost(line.length, 80, screen)
      assert.match(lines[0]!, /^NAME +IN +UID +DESCRIPTION +CREATED$/, screen)
      assert.include(screen, "…", screen)
    } finally {
      wide.close()
    }
    // Into a pipe, every cell whole and no padding after the last.
    const piped = await arbor(env, "iam", "folders", "list", "--parent", "acme", "-o", "wide")
    assert.notInclude(piped.stdout, "…")
    assert.match(piped.stdout.split("\n")[1]!, /[0-9a-f]{40}/)
    for (const line of piped.stdout.split("\n")) assert.strictEqual(line, line.trimEnd())
    // A usage error: one line, what is missing, the command's help to read; a long example breaks between words.
    const usage = terminal(env, `node ${executable} iam invites create --parent acme`, 80)
    try {
      const screen = await usage.until(/exit=2/)
      assert.include(screen, "arbor: missing --role (arbor iam invites create --help)\nexit=2", screen)
    } finally {
      usage.close()
    }
    const help = terminal(env, `node ${executable} iam external-group-role-mappings create --help`, 80)
    try {
      const screen = await help.until(/exit=0/)
      assert.include(
        screen,
        "  arbor iam external-group-role-mappings create --provider <uid> \\\n      --external-group engineers",
        screen
      )
    } finally {
      help.close()
    }
  })

  it("a person signing in headless sees the address and the code, then that they are logged in", async () => {
    const session = terminal(home(), `node ${executable} auth login --headless`)
    try {
      const screen = await session.until(/enter the code [A-Z]{4}-[A-Z]{4}/)
      assert.match(
        screen,
        /To sign in, open http:\/\/127\.0\.0\.1:\d+\/oauth\/device and enter the code [A-Z]{4}-[A-Z]{4}/
      )
      const code = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(screen)![1]!
      const browser = new Browser()
      const link = await confirmDevice(browser, `${server.url}/oauth/device?user_code=${code}`)
      await browser.visit(link, { login: "tmux", provider: provider.issuer })
      assert.match(
        await session.until(/exit=\d/),
        /Logged in to http:\/\/127\.0\.0\.1:\d+ as tmux@example\.com\s+exit=0/
      )
    } finally {
      session.close()
    }
  }, 30_000)
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
