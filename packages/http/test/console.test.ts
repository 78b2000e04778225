/**
 * The console in a real browser (Debian's `chromium` through `playwright-core`, as the sign-in tests drive it): a
 * person invited to an organization signs in through a real OpenID provider (`oidc-provider`), creates a folder and
 * an identity (with the GitHub Actions builder), binds a role and sees the binding, sees an audit entry arrive live
 * and runs an access check that explains itself. Every page is scanned with `axe-core` (no serious or critical
 * violation), none breaks the Content-Security-Policy, and each is kept as a screenshot at 1280 and 390 px under
 * `packages/http/test-results/console/`. Without Chromium the tests are skipped, except in CI.
 */
import { Elevations, GroupInvites, Groups, Identities, Principal, Role, RoleBindings, TokenIssuer } from "@arbor/core"
import axe from "axe-core"
import * as Effect from "effect/Effect"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser as Chromium, Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { atProvider, executable, launch } from "./chromium.js"
import { freePort, loginWith, startProvider, startServer } from "./signInSupport.js"

const screenshots = join(import.meta.dirname, "..", "test-results", "console")

let provider: Awaited<ReturnType<typeof startProvider>>
let server: Awaited<ReturnType<typeof startServer>>
let browser: Chromium
let invite: { readonly code: string; readonly org: string }

beforeAll(async () => {
  if (executable === undefined) return
  mkdirSync(screenshots, { recursive: true })
  const port = await freePort()
  provider = await startProvider(`http://127.0.0.1:${port}/oauth/callback`)
  server = await startServer(port, { login: loginWith(provider) })
  invite = await server.runtime.runPromise(Effect.gen(function*() {
    const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "acme" })
    const created = yield* (yield* GroupInvites.GroupInvites).create(Principal.system, org.uid, {
      roleUid: Role.builtInByName("owner")!.uid
    })
    return { code: created.code!, org: org.uid }
  }))
  browser = await launch()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await provider?.close()
})

/** A page in a fresh context, at a desktop's or a phone's size, which keeps what the CSP refused. */
const open = async (width: 1280 | 390) => {
  // The copy buttons write to the clipboard, which the tests read back.
  const permissions = ["clipboard-read", "clipboard-write"]
  const context = await browser.newContext(
    width === 390
      ? { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, permissions }
      : { viewport: { width: 1280, height: 900 }, permissions }
  )
  const page = await context.newPage()
  const refused: Array<string> = []
  page.on("console", (m) => /Content Security Policy|Refused to/.test(m.text()) && refused.push(m.text()))
  page.on("dialog", (dialog) => void dialog.accept())
  return { page, refused }
}

/** Serious or critical accessibility violations on the page as it stands, by rule and element. */
const violations = async (page: Page): Promise<ReadonlyArray<string>> => {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (it would refuse a script tag).
  await page.evaluate(axe.source)
  const results = await page.evaluate<axe.AxeResults>("axe.run(document, { resultTypes: ['violations'] })")
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(" ")}: ${n.failureSummary ?? ""}`))
}

/** Checks the page (accessibility, CSP, no page wider than the screen) and keeps its screenshot. */
const look = async (page: Page, refused: ReadonlyArray<string>, name: string, width: number) => {
  await page.screenshot({ path: join(screenshots, `${name}-${width}.png`), fullPage: true })
  assert.deepStrictEqual(await violations(page), [], name)
  assert.deepStrictEqual(refused, [], name)
  const overflow = await page.evaluate<number>(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
  )
  assert.isAtMost(overflow, 0, `${name} is wider than the screen`)
}

/**
 * Waits until `expression` is true in the page: evaluated through the DevTools protocol, as the policy refuses the
 * string evaluation of `waitForFunction`.
 */
const until = async (page: Page, expression: string) => {
  for (let i = 0; i < 200; i++) {
    if (await page.evaluate<boolean>(expression)) return
    await new Promise((resume) => setTimeout(resume, 50))
  }
  throw new Error(`never true: ${expression}`)
}

/** The token the console holds for the signed-in person. */
const tokenOf = (page: Page) => page.evaluate<string>("sessionStorage.getItem('arbor.console.token')")

describe.skipIf(executable === undefined)("the console in Chromium", { timeout: 120_000 }, () => {
  it("a browser at the server's address is sent to the console, served with a strict policy", async () => {
    const { page } = await open(1280)
    const response = await page.goto(server.url)
    assert.strictEqual(new URL(page.url()).pathname, "/console/")
    const policy = response!.headers()["content-security-policy"] ?? ""
    assert.include(policy, "default-src 'none'")
    assert.include(policy, "script-src 'self'")
    assert.notInclude(policy, "unsafe")
    await page.getByRole("heading", { name: "Sign in to Arbor" }).waitFor()
    await page.context().close()
  })

  it("the API reference renders every operation under its policy, with nothing refused", async () => {
    const reference = await (await fetch(`${server.url}/openapi.json`)).json() as {
      readonly paths: Record<string, Record<string, { readonly operationId: string }>>
    }
    const operations = Object.values(reference.paths).flatMap((path) => Object.values(path).map((op) => op.operationId))
    const { page, refused } = await open(1280)
    await page.goto(`${server.url}/docs`)
    await page.locator(".opblock").first().waitFor()
    // Past a hundred and fifty tags and operations, Swagger UI renders only what is in view: read it a screen at a time.
    const shown = new Set<string>()
    for (let screen = 0; screen < 200; screen++) {
      for (const id of await page.locator(".opblock").evaluateAll((blocks) => blocks.map((block) => block.id))) {
        shown.add(id.replaceAll("\\", "")) // Swagger UI escapes the dots of an id: operations-groups-groups\.list
      }
      const bottom = await page.evaluate<boolean>(
        "scrollBy(0, innerHeight / 2), scrollY + innerHeight >= document.documentElement.scrollHeight - 1"
      )
      if (bottom) break
      await page.waitForTimeout(50)
    }
    const missing = operations.filter((operationId) => ![...shown].some((id) => id.endsWith(`-${operationId}`)))
    assert.deepStrictEqual(missing, [], "operations the reference does not show")
    assert.deepStrictEqual(refused, [])
    await page.context().close()
  })

  it("a token in a link the tab did not sign in for is ignored: no one is signed in as someone else (login CSRF)", async () => {
    const planted = await server.runtime.runPromise(Effect.gen(function*() {
      const identity = yield* (yield* Identities.Identities).create(Principal.system, invite.org, {
        name: "attacker",
        claimMatch: { issuer: "https://attacker.invalid", subject: "attacker" }
      })
      const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(identity.uid, {
        iss: "https://attacker.invalid",
        sub: "attacker"
      })
      return minted.token
    }))
    const { page } = await open(1280)
    await page.goto(`${server.url}/console/#token=${planted}`)
    await page.getByRole("heading", { name: "Sign in to Arbor" }).waitFor()
    assert.include(await page.getByRole("alert").textContent(), "did not start was ignored")
    assert.isNull(await page.evaluate<string | null>("sessionStorage.getItem('arbor.console.token')"))
    assert.notInclude(page.url(), planted)
    // A tab that started a sign-in, then left the provider's page for the planted link, is not signed in either: the
    // link lacks the state of the sign-in it started.
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.waitForURL((url) => url.origin === new URL(provider.issuer).origin)
    await page.goto(`${server.url}/console/#token=${planted}`)
    await page.getByRole("heading", { name: "Sign in to Arbor" }).waitFor()
    assert.include(await page.getByRole("alert").textContent(), "did not start was ignored")
    assert.isNull(await page.evaluate<string | null>("sessionStorage.getItem('arbor.console.token')"))
    await page.context().close()
  })

  it("signs in with a pasted token, and shows a long list a page at a time", async () => {
    const { org, token } = await server.runtime.runPromise(Effect.gen(function*() {
      const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "paged" })
      const identities = yield* Identities.Identities
      for (let i = 0; i < 55; i++) {
        yield* identities.create(Principal.system, org.uid, {
          name: `workload-${String(i).padStart(2, "0")}`,
          claimMatch: { issuer: "https://issuer.invalid", subject: `workload-${i}` }
        })
      }
      const owner = yield* identities.create(Principal.system, org.uid, {
        name: "owner",
        claimMatch: { issuer: "https://issuer.invalid", subject: "owner" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: owner.uid,
        roleUid: Role.builtInByName("owner")!.uid
      })
      const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(owner.uid, {
        iss: "https://issuer.invalid",
        sub: "owner"
      })
      return { org: org.uid, token: minted.token }
    }))
    const { page, refused } = await open(1280)
    await page.goto(`${server.url}/console/`)
    await page.getByLabel("API token", { exact: true }).fill(token)
    await page.getByRole("button", { name: "Use this token" }).click()
    await page.getByRole("link", { name: "paged" }).waitFor()
    await page.goto(`${server.url}/console/#/groups/${encodeURIComponent(org)}/identities`)
    const table = page.getByRole("table", { name: "Identities in this group" })
    await table.getByRole("link", { name: "owner" }).waitFor()
    // The first page holds 50 of the 56, in name order; the rest come with "Show more", once.
    assert.strictEqual(await table.getByRole("row").count(), 1 + 50)
    await page.getByRole("button", { name: "Show more" }).click()
    await table.getByRole("link", { name: "workload-54" }).waitFor()
    assert.strictEqual(await table.getByRole("row").count(), 1 + 56)
    assert.strictEqual(await page.getByRole("button", { name: "Show more" }).count(), 0)
    assert.deepStrictEqual(refused, [])
    await page.context().close()
  })

  for (const width of [1280, 390] as const) {
    it(`a person requests access they are eligible for, and another approves it (${width} px)`, async () => {
      const { asker, approver } = await server.runtime.runPromise(Effect.gen(function*() {
        const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: `elevating-${width}` })
        const identities = yield* Identities.Identities
        const bindings = yield* RoleBindings.RoleBindings
        const person = (name: string, role: string) =>
          Effect.gen(function*() {
            const made = yield* identities.create(Principal.system, org.uid, {
              name,
              claimMatch: { issuer: "https://issuer.invalid", subject: `${name}-${width}` }
            })
            yield* bindings.create(Principal.system, org.uid, {
              identityUid: made.uid,
              roleUid: Role.builtInByName(role)!.uid
            })
            const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(made.uid, {
              iss: "https://issuer.invalid",
              sub: `${name}-${width}`
            })
            return minted.token
          })
        const asker = yield* person("ada", "viewer")
        const approver = yield* person("grace", "owner")
        yield* (yield* Elevations.Elevations).createEligibility(Principal.system, org.uid, {
          identityUid: (yield* identities.list(Principal.system, { name: "ada", childrenOf: org.uid })).items[0]!.uid,
          roleUid: Role.builtInByName("editor")!.uid,
          maxDuration: "7200s",
          approverRoleUid: Role.builtInByName("owner")!.uid
        })
        return { asker, approver }
      }))
      const signedIn = async (token: string) => {
        const opened = await open(width)
        await opened.page.goto(`${server.url}/console/`)
        await opened.page.getByLabel("API token", { exact: true }).fill(token)
        await opened.page.getByRole("button", { name: "Use this token" }).click()
        await opened.page.getByRole("heading", { name: "Hierarchy" }).waitFor()
        await opened.page.getByRole("link", { name: "Access requests" }).click()
        await opened.page.getByRole("heading", { name: "Access requests" }).waitFor()
        return opened
      }
      const { page, refused } = await signedIn(asker)
      const request = page.getByRole("form", { name: "Request access" })
      await request.getByText("once someone holding").waitFor()
      await look(page, refused, "access-request", width)
      await request.getByLabel("For").selectOption({ label: "1 hour" })
      await request.getByLabel("Reason").fill("release 1.2")
      await request.getByRole("button", { name: "Request access" }).click()
      await page.getByText("Your request: waiting for approval.").waitFor()
      await page.getByText("Yours: someone else approves it").waitFor()
      await page.context().close()

      const approving = await signedIn(approver)
      const waiting = approving.page.getByRole("table", { name: "Requests waiting for an approver" })
      await waiting.getByText("release 1.2").waitFor()
      await look(approving.page, approving.refused, "access-approve", width)
      await waiting.getByRole("button", { name: "Approve" }).click()
      await approving.page.getByText("Nothing waits for an approver that you can see.").waitFor()
      await approving.page.context().close()
    })
  }

  it("deleting says what goes and returns to its parent; a folder says what it holds; one's own owner binding warns", async () => {
    const { folders, org, token } = await server.runtime.runPromise(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      const org = yield* groups.createRoot(Principal.system, { name: "tidy" })
      const keep = yield* groups.create(Principal.system, org.uid, { name: "keep" })
      const gone = yield* groups.create(Principal.system, org.uid, { name: "gone" })
      const identities = yield* Identities.Identities
      yield* identities.create(Principal.system, keep.uid, {
        name: "held",
        claimMatch: { issuer: "https://issuer.invalid", subject: "held" }
      })
      const owner = yield* identities.create(Principal.system, org.uid, {
        name: "tidier",
        claimMatch: { issuer: "https://issuer.invalid", subject: "tidier" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org.uid, {
        identityUid: owner.uid,
        roleUid: Role.builtInByName("owner")!.uid
      })
      const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(owner.uid, {
        iss: "https://issuer.invalid",
        sub: "tidier"
      })
      return { folders: { keep: keep.uid, gone: gone.uid }, org: org.uid, token: minted.token }
    }))
    // Dialogs are answered here, one by one, after their message is read.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const asked: Array<string> = []
    let answer = true
    page.on("dialog", (dialog) => {
      asked.push(dialog.message())
      void (answer ? dialog.accept() : dialog.dismiss())
    })
    await page.goto(`${server.url}/console/`)
    await page.getByLabel("API token", { exact: true }).fill(token)
    await page.getByRole("button", { name: "Use this token" }).click()
    await page.getByRole("link", { name: "tidy" }).waitFor()

    await page.goto(`${server.url}/console/#/groups/${encodeURIComponent(folders.keep)}/folders`)
    await page.getByText("It holds 1 identity: delete or move them first.").waitFor()

    await page.goto(`${server.url}/console/#/groups/${encodeURIComponent(folders.gone)}/folders`)
    await page.getByRole("heading", { name: "gone" }).waitFor()
    await page.getByRole("button", { name: "Delete folder gone" }).click()
    await page.getByRole("heading", { name: "tidy" }).waitFor()
    assert.deepStrictEqual(asked, ["Delete folder gone?"])
    assert.include(decodeURIComponent(page.url()), `#/groups/${org}`)

    // A success says so, and goes once the person types again.
    const newFolder = page.getByRole("form", { name: "New folder" })
    await newFolder.getByLabel("Name", { exact: true }).fill("fresh")
    await newFolder.getByRole("button", { name: "Create folder" }).click()
    await newFolder.getByRole("status").getByText("Folder created.").waitFor()
    await newFolder.getByLabel("Name", { exact: true }).fill("x")
    assert.strictEqual(await newFolder.getByRole("status").textContent(), "")

    // A field the server refuses is named by the form's label, not the API's field.
    await page.goto(`${server.url}/console/#/groups/${encodeURIComponent(org)}/subscriptions`)
    const newSubscription = page.getByRole("form", { name: "New subscription" })
    await newSubscription.getByLabel("Sink", { exact: true }).fill("http://hooks.example.invalid/arbor")
    await newSubscription.getByRole("button", { name: "Subscribe" }).click()
    const refusal = await newSubscription.getByRole("alert").textContent()
    assert.match(refusal ?? "", /^Sink: /)
    assert.notInclude(refusal ?? "", "Invalid argument")

    // One's own owner binding: the question says what is lost; declined, nothing changes.
    await page.goto(`${server.url}/console/#/groups/${encodeURIComponent(org)}/bindings`)
    const bindings = page.getByRole("table", { name: "Role bindings" })
    await bindings.getByText("owner").waitFor()
    answer = false
    await bindings.getByRole("button", { name: "Delete the binding of tidier to owner" }).click()
    await page.waitForTimeout(200)
    assert.match(asked.at(-1) ?? "", /your own owner binding: you lose access to tidy and everything below it/)
    assert.strictEqual(await bindings.getByText("owner").count(), 1)
    await context.close()
  })

  it("a tree eight levels deep, long names and all, fits a phone's width", async () => {
    const { token } = await server.runtime.runPromise(Effect.gen(function*() {
      const groups = yield* Groups.Groups
      let at = yield* groups.createRoot(Principal.system, { name: "deep-organization" })
      const org = at.uid
      for (let level = 1; level < 8; level++) {
        at = yield* groups.create(Principal.system, at.uid, { name: `level-${level}-platform-services-and-tools` })
      }
      const owner = yield* (yield* Identities.Identities).create(Principal.system, org, {
        name: "reader",
        claimMatch: { issuer: "https://issuer.invalid", subject: "deep-reader" }
      })
      yield* (yield* RoleBindings.RoleBindings).create(Principal.system, org, {
        identityUid: owner.uid,
        roleUid: Role.builtInByName("viewer")!.uid
      })
      const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(owner.uid, {
        iss: "https://issuer.invalid",
        sub: "deep-reader"
      })
      return { token: minted.token }
    }))
    const { page, refused } = await open(390)
    await page.goto(`${server.url}/console/`)
    await page.getByLabel("API token", { exact: true }).fill(token)
    await page.getByRole("button", { name: "Use this token" }).click()
    await page.getByRole("button", { name: "Open deep-organization" }).click()
    for (let level = 1; level < 7; level++) {
      await page.getByRole("button", { name: `Open level-${level}-platform-services-and-tools` }).click()
    }
    await page.getByRole("link", { name: "level-7-platform-services-and-tools" }).waitFor()
    // Who is signed in, by name: a workload's token carries no email.
    await page.locator("header .who").getByText("deep-organization/reader").waitFor()
    await look(page, refused, "tree-8-levels", 390)
    await page.context().close()
  })

  for (const width of [1280, 390] as const) {
    it(`one given a folder of an organization finds it at home, is offered only what it may do, refused in words (${width} px)`, async () => {
      const { org, token } = await server.runtime.runPromise(Effect.gen(function*() {
        const groups = yield* Groups.Groups
        const org = yield* groups.createRoot(Principal.system, { name: `shared-${width}` })
        const platform = yield* groups.create(Principal.system, org.uid, { name: "platform" })
        yield* groups.create(Principal.system, platform.uid, { name: "web" })
        const bob = yield* (yield* Identities.Identities).create(Principal.system, org.uid, {
          name: "bob",
          claimMatch: { issuer: "https://issuer.invalid", subject: `bob-${width}` }
        })
        // A role that may list folders there, and nothing else of the folder's.
        yield* (yield* RoleBindings.RoleBindings).create(Principal.system, platform.uid, {
          identityUid: bob.uid,
          roleUid: Role.builtInByName("registry.pull")!.uid
        })
        const minted = yield* (yield* TokenIssuer.TokenIssuer).mint(bob.uid, {
          iss: "https://issuer.invalid",
          sub: `bob-${width}`
        })
        return { org: org.uid, token: minted.token }
      }))
      const { page, refused } = await open(width)
      await page.goto(`${server.url}/console/`)
      await page.getByLabel("API token", { exact: true }).fill(token)
      await page.getByRole("button", { name: "Use this token" }).click()
      // Home: the folder it was given, by the end of its path it may read; its own name in the header.
      const places = page.getByRole("table", { name: "Folders where you hold a role" })
      await places.getByRole("link", { name: "…/platform" }).waitFor()
      await places.getByText("registry.pull").waitFor()
      await page.getByText(/None you can see whole/).waitFor()
      await page.locator("header .who").getByText("bob", { exact: true }).waitFor()
      await look(page, refused, "home-invited", width)
      // The folder: its folders listed; no form it could only be refused.
      await places.getByRole("link", { name: "…/platform" }).click()
      await page.getByRole("heading", { name: "platform" }).waitFor()
      await page.getByRole("link", { name: "web" }).waitFor()
      assert.strictEqual(await page.getByRole("button", { name: "Create folder" }).count(), 0)
      assert.strictEqual(await page.getByRole("button", { name: "Save" }).count(), 0)
      assert.strictEqual(await page.getByText(/Delete this folder/).count(), 0)
      await look(page, refused, "folder-invited", width)
      // Only the sections it may list are offered.
      const tabs = page.getByRole("navigation", { name: "Sections" })
      await tabs.getByRole("link", { name: "Folders" }).waitFor()
      assert.strictEqual(await tabs.getByRole("link", { name: "Identities" }).count(), 0)
      // The organization above, reached by its address: refused in words, not a capability and a uid.
      await page.goto(`${server.url}/console/#/groups/${encodeURIComponent(org)}`)
      await page.getByText("You cannot list folders here.").first().waitFor()
      assert.strictEqual(await page.getByText(/Permission '/).count(), 0)
      await look(page, refused, "refused-invited", width)
      await page.context().close()
    })
  }

  it("a token the server does not accept sends the person back to sign in, saying why; without a provider of the server's own, the token comes first", async () => {
    // The server's own provider is offered first here.
    const { page, refused } = await open(1280)
    await page.goto(`${server.url}/console/`)
    const forms = page.locator("main form")
    assert.strictEqual(await forms.first().getAttribute("aria-label"), "Sign in with your identity provider")
    // A token whose claims read well but whose signature is not this server's: every call would be refused.
    const claims = Buffer.from(JSON.stringify({ sub: invite.org, exp: Math.floor(Date.now() / 1000) + 3600 }))
      .toString("base64url")
    await page.getByLabel("API token", { exact: true }).fill(`eyJhbGciOiJFUzI1NiJ9.${claims}.c2lnbmF0dXJl`)
    await page.getByRole("button", { name: "Use this token" }).click()
    await page.getByRole("heading", { name: "Sign in to Arbor" }).waitFor()
    await page.getByText(/This server no longer accepts your token \(.+\): sign in again\./).waitFor()
    assert.isNull(await page.evaluate<string | null>("sessionStorage.getItem('arbor.console.token')"))
    await page.context().close()

    const port = await freePort()
    const bare = await startServer(port, {})
    try {
      const { page: first, refused: refusedThere } = await open(390)
      await first.goto(`${bare.url}/console/`)
      await first.getByRole("heading", { name: "Sign in to Arbor" }).waitFor()
      const order = await first.locator("main form").evaluateAll((all) => all.map((f) => f.getAttribute("aria-label")))
      assert.deepStrictEqual(order, ["Sign in with an API token", "Sign in with your organization's provider"])
      await first.getByRole("heading", { name: "With your organization's identity provider" }).waitFor()
      await look(first, refusedThere, "sign-in-token-first", 390)
      await first.context().close()
    } finally {
      await bare.close()
    }
    assert.deepStrictEqual(refused, [])
  })

  for (const width of [1280, 390] as const) {
    it(`walks through signing in, a folder, an identity, a binding, the audit trail and a check (${width} px)`, async () => {
      const { page, refused } = await open(width)
      await page.goto(`${server.url}/console/`)
      await look(page, refused, "sign-in", width)

      // Signing in with the invite to acme: the person comes back signed in, an owner of acme.
      await page.getByLabel("Invite code").fill(invite.code)
      await page.getByRole("button", { name: "Sign in", exact: true }).click()
      await atProvider(page, provider.issuer, `ada${width}`)
      await page.waitForURL((url) => url.pathname === "/console/")
      await page.getByRole("heading", { name: "Hierarchy" }).waitFor()
      assert.notInclude(page.url(), "token=", "the token left the address bar")
      await page.getByRole("link", { name: "acme" }).waitFor()
      await look(page, refused, "hierarchy", width)

      // A folder, made on the organization's page, appears in its tree.
      await page.getByRole("link", { name: "acme" }).click()
      await page.getByRole("heading", { name: "acme" }).waitFor()
      const folder = `platform-${width}`
      const newFolder = page.getByRole("form", { name: "New folder" })
      await newFolder.getByLabel("Name").fill(folder)
      await newFolder.getByRole("button", { name: "Create folder" }).click()
      await page.getByRole("link", { name: folder }).waitFor()
      await look(page, refused, "group-folders", width)

      // An identity for a GitHub Actions workflow, in the folder.
      await page.getByRole("link", { name: folder }).click()
      await page.getByRole("heading", { name: folder }).waitFor()
      await page.getByRole("link", { name: "Identities" }).click()
      const newIdentity = page.getByRole("form", { name: "New identity" })
      await newIdentity.getByLabel("Name", { exact: true }).fill("deployer")
      // The repository must be given (an empty one made a pattern that matches no workflow); the branch may not be.
      assert.notStrictEqual(await newIdentity.getByLabel("Repository").getAttribute("required"), null)
      assert.strictEqual(await newIdentity.getByLabel("Branch").getAttribute("required"), null)
      await newIdentity.getByLabel("Repository").fill("acme/app")
      await newIdentity.getByLabel("Branch").fill("main")
      assert.include(
        await page.getByLabel("Claim match").textContent(),
        "repo:acme/app:ref:refs/heads/main"
      )
      await newIdentity.getByRole("button", { name: "Create identity" }).click()
      await page.getByRole("link", { name: "deployer" }).waitFor()
      await look(page, refused, "group-identities", width)

      // A bad name is said in the form's words as it is typed, and the form is not sent; so is a repository
      // without its owner, which no GitHub token could match.
      const identitiesBefore = await page.getByRole("table", { name: "Identities in this group" }).getByRole("row")
        .count()
      await newIdentity.getByLabel("Name", { exact: true }).fill("Not A Name!")
      await newIdentity.getByText("Name: lowercase letters, digits, spaces, dots, underscores and dashes").waitFor()
      await newIdentity.getByLabel("Repository").fill("payments")
      await newIdentity.getByText("Repository: the owner and the repository, as in acme/app").waitFor()
      assert.strictEqual(await newIdentity.getByLabel("Repository").getAttribute("aria-invalid"), "true")
      await look(page, refused, "identity-refused", width)
      await newIdentity.getByRole("button", { name: "Create identity" }).click()
      assert.strictEqual(await newIdentity.getByRole("alert").count(), 0)
      assert.strictEqual(
        await page.getByRole("table", { name: "Identities in this group" }).getByRole("row").count(),
        identitiesBefore
      )
      await newIdentity.getByLabel("Repository").fill("acme/payments")
      assert.strictEqual(await newIdentity.getByText(/^Repository: /).count(), 0)

      // The identity bound to viewer in the folder: the binding is listed.
      await page.getByRole("link", { name: "Role bindings" }).click()
      const bind = page.getByRole("form", { name: "Bind a role" })
      const bindings = page.getByRole("table", { name: "Role bindings" })
      // Nothing chosen is nothing granted: both pickers start on "Choose…", and Bind does not send the form; with a
      // role but no identity it says what is missing. (It once bound the first identity to the first role.)
      await bind.getByLabel("Role").locator("option", { hasText: "viewer" }).waitFor({ state: "attached" })
      assert.strictEqual(await bind.getByLabel("Identity in this group").inputValue(), "")
      assert.strictEqual(await bind.getByLabel("Role").inputValue(), "")
      await bind.getByRole("button", { name: "Bind" }).click()
      assert.strictEqual(await bind.locator("select:invalid").count(), 1)
      await bind.getByLabel("Role").selectOption({ label: "viewer" })
      // What the role grants is shown before it is granted.
      await bind.getByText(/^Grants .*groups\.list/).waitFor()
      await bind.getByRole("button", { name: "Bind" }).click()
      await bind.getByRole("alert").getByText("Choose an identity, or give its uid.").waitFor()
      assert.strictEqual(await bindings.getByRole("link", { name: "deployer" }).count(), 0)
      await bind.getByLabel("Identity in this group").selectOption({ label: "deployer" })
      // For 8 hours: the binding says when it ends.
      await bind.getByLabel("For").selectOption({ label: "8 hours" })
      await bind.getByRole("button", { name: "Bind" }).click()
      await bindings.getByRole("link", { name: "deployer" }).waitFor()
      assert.include(await bindings.textContent(), "viewer")
      assert.include(await bindings.textContent(), "expires in 8 h")
      await look(page, refused, "group-bindings", width)
      const folderUid = decodeURIComponent(new URL(page.url()).hash.split("/")[2]!)
      const deployerHref = await bindings.getByRole("link", { name: "deployer" }).getAttribute("href")
      const deployer = decodeURIComponent(deployerHref!.split("/")[2]!)

      // The other sections of the group, each scanned.
      for (const section of ["Roles", "Invites", "Identity providers", "Cloud accounts", "Subscriptions"]) {
        await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: section }).click()
        await page.getByRole("heading", { level: 2 }).first().waitFor()
        // Loaded: nothing says "Loading…", and every choice has its options (the roles).
        await until(
          page,
          "!document.body.textContent.includes('Loading…') && " +
            "!document.querySelector('select:not(:has(option:not([value=\\'\\'])))')"
        )
        await look(page, refused, `group-${section.toLowerCase().replace(/ /g, "-")}`, width)
        if (section === "Identity providers") {
          // An issuer that is not https:// is said in the form's words as it is typed.
          await page.getByLabel("Issuer").fill("http://idp.example.com")
          await page.getByText("Issuer: the provider's https:// address, as in https://accounts.google.com").waitFor()
          await page.getByLabel("Issuer").fill("")
        }
      }

      // A custom role, made with the capability picker, then changed.
      await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Roles" }).click()
      const newRole = page.getByRole("form", { name: "New role" })
      await newRole.getByLabel("Name", { exact: true }).fill("auditor")
      // None chosen: said in the form's words, nothing sent.
      await newRole.getByRole("button", { name: "Create role" }).click()
      await page.getByText("Choose at least one capability.").waitFor()
      await newRole.getByRole("group", { name: "subscriptions" }).getByLabel("list").check()
      await newRole.getByRole("button", { name: "Create role" }).click()
      const roles = page.getByRole("table", { name: "Roles made in this group" })
      await roles.getByText("subscriptions.list").waitFor()
      await roles.getByRole("button", { name: "Change auditor" }).click()
      const changeRole = page.getByRole("form", { name: "Change auditor" })
      assert.isTrue(await changeRole.getByRole("group", { name: "subscriptions" }).getByLabel("list").isChecked())
      await changeRole.getByRole("group", { name: "groups" }).getByLabel("list").check()
      await changeRole.getByRole("button", { name: "Save role" }).click()
      await roles.getByText("groups.list, subscriptions.list").waitFor()

      // An invite to the folder: its code is shown once, with a button that copies it.
      await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Invites" }).click()
      const newInvite = page.getByRole("form", { name: "New invite" })
      await newInvite.getByLabel("Role").selectOption({ label: "viewer" })
      // Valid for a while as a person says it: "2 days" is 172800 seconds to the API.
      await newInvite.getByLabel("Valid for").fill("2 days")
      await newInvite.getByRole("button", { name: "Create invite" }).click()
      const code = await page.getByLabel("Invite code").textContent()
      assert.isAbove(code?.length ?? 0, 20)
      const invites = await server.runtime.runPromise(
        Effect.flatMap(GroupInvites.GroupInvites, (all) => all.list(Principal.system, { pageSize: 100 }))
      )
      assert.isTrue(
        invites.items.some((i) => i.expirationTime.epochMillis - i.createTime.epochMillis === 2 * 86_400_000),
        "an invite valid for 2 days"
      )
      await page.getByRole("button", { name: "Copy the code" }).waitFor()
      await page.getByRole("table", { name: "Invites to this group" }).getByText("viewer").waitFor()
      assert.notInclude(await page.getByRole("table", { name: "Invites to this group" }).textContent(), code!)
      // Its delete says which invite it deletes (its confirmation asks the same words).
      await page.getByRole("button", { name: "Delete the invite as viewer for anyone" }).first().waitFor()

      // The identity's page lists its binding.
      await page.goto(`${server.url}/console/#/identities/${encodeURIComponent(deployer)}`)
      await page.getByRole("heading", { name: "deployer" }).waitFor()
      await page.getByRole("table", { name: "Role bindings" }).getByText("viewer").waitFor()
      await look(page, refused, "identity", width)

      // The audit trail, live: a change made elsewhere arrives without a reload.
      await page.getByRole("link", { name: "Audit trail", exact: true }).click()
      await page.getByRole("heading", { name: "Audit trail" }).waitFor()
      await page.getByText(/^Live:/).waitFor()
      const trail = page.getByRole("table", { name: "Audit trail, newest first" })
      await trail.getByText("role binding created").first().waitFor()
      const elsewhere = await fetch(`${server.url}/iam/v2beta1/groups/${folderUid}`, {
        method: "POST",
        headers: { authorization: `Bearer ${await tokenOf(page)}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "made-elsewhere" })
      })
      assert.strictEqual(elsewhere.status, 200)
      const made = ((await elsewhere.json()) as { uid: string }).uid
      await page.getByText("(1 so far)").waitFor()
      await trail.locator(`[title="${made}"]`).first().waitFor()
      // Where each change was, by the folder's path; a binding as who holds what.
      await trail.getByText(`acme/${folder}`).first().waitFor()
      await trail.getByText("deployer → viewer").first().waitFor()
      await look(page, refused, "audit", width)
      // Narrowed to what a person asks: role bindings only, by whoever.
      const filter = page.getByRole("form", { name: "Filter" })
      await filter.getByLabel("What").selectOption({ label: "role binding" })
      await filter.getByRole("button", { name: "Show" }).click()
      await until(page, "!document.querySelector('.table')?.textContent?.includes('folder created')")
      await trail.getByText("role binding created").first().waitFor()
      // Who, as a person names them: an identity that made nothing here shows nothing.
      await filter.getByLabel("Who").fill(`acme/${folder}/deployer`)
      await filter.getByRole("button", { name: "Show" }).click()
      await page.getByText("No entries match.").waitFor()
      await look(page, refused, "audit-filtered", width)

      // An access check: the deployer may list groups in the folder, because of its viewer binding there.
      await page.getByRole("link", { name: "Access check" }).click()
      const check = page.getByRole("form", { name: "May this identity do that here?" })
      // Both typed as a person names them; the explanation names the role and the folder, their uids to copy.
      await check.getByLabel("Identity", { exact: true }).fill(`acme/${folder}/deployer`)
      await check.getByLabel("Capability").selectOption("groups.list")
      await check.getByLabel("Resource", { exact: true }).fill(`acme/${folder}`)
      await check.getByRole("button", { name: "Check" }).click()
      await page.getByRole("heading", { name: "Allowed" }).waitFor()
      const decision = page.locator(".decision")
      await decision.getByRole("link", { name: `acme/${folder}` }).waitFor()
      await decision.getByText("viewer", { exact: true }).waitFor()
      assert.match(await decision.textContent() ?? "", /A role binding of role viewer\W* at/)
      await decision.getByRole("button", { name: `Copy the uid ${folderUid}` }).click()
      assert.strictEqual(await page.evaluate<string>("navigator.clipboard.readText()"), folderUid)
      await look(page, refused, "access-allowed", width)
      // By uid as well.
      await check.getByLabel("Identity", { exact: true }).fill(deployer)
      await check.getByLabel("Resource", { exact: true }).fill(folderUid)
      await check.getByRole("button", { name: "Check" }).click()
      await page.getByRole("heading", { name: "Allowed" }).waitFor()
      await check.getByLabel("Capability").selectOption("groups.delete")
      await check.getByRole("button", { name: "Check" }).click()
      await page.getByRole("heading", { name: "Denied" }).waitFor()
      await look(page, refused, "access", width)
      await page.context().close()
    })
  }
})
