/**
 * `arbor` in a real terminal (tmux): what a person sees of tables, help, confirmations and a headless sign-in.
 */
import { Groups, Identities, Principal, Role, RoleBindings } from "@arbor/core"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { assert, describe, it } from "vitest"
import { Browser, confirmDevice } from "../../http/test/signInSupport.js"
import { arbor, asDeployer, asOwnerOf, home, org, provider, server, useServers } from "./fixture.js"
import { executable } from "./globalSetup.js"

useServers()

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
