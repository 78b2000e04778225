/**
 * The console in a real browser (Debian's `chromium` through `playwright-core`, as the sign-in tests drive it): a
 * person invited to an organization signs in through a real OpenID provider (`oidc-provider`), creates a folder and
 * an identity (with the GitHub Actions builder), binds a role and sees the binding, sees an audit entry arrive live
 * and runs an access check that explains itself. Every page is scanned with `axe-core` (no serious or critical
 * violation), none breaks the Content-Security-Policy, and each is kept as a screenshot at 1280 and 390 px under
 * `packages/http/test-results/console/`. Without Chromium the tests are skipped, except in CI.
 *
 * Long lists, elevations, deletes, deep trees and a folder's member in `consoleLists.test.ts`.
 */
import { GroupInvites, Identities, Principal, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import { assert, describe, it } from "vitest"
import { atProvider, executable } from "./chromium.js"
import { invite, look, open, provider, server, tokenOf, until, useConsole } from "./consoleSupport.js"
import { freePort, startServer } from "./signInSupport.js"

describe.skipIf(executable === undefined)("the console in Chromium", { timeout: 120_000 }, () => {
  useConsole()

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
