/**
 * `arbor auth`: a workload's login, a person's in a browser (the loopback callback, a real Chromium) or headless,
 * tokens narrowed, logout.
 */
import { Groups, Principal } from "@arbor/core"
import * as Effect from "effect/Effect"
import { execFile, execFileSync } from "node:child_process"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { Browser, freePort, startServer } from "../../http/test/signInSupport.js"
import {
  arbor,
  arborWithInput,
  asDeployer,
  asOwnerOf,
  deployer,
  home,
  loginHeadless,
  loginWithBrowser,
  org,
  provider,
  type Run,
  server,
  useServers,
  workloadToken
} from "./fixture.js"
import { executable } from "./globalSetup.js"

useServers()

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
