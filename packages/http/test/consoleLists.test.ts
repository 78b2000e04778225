/**
 * The console in a real browser (Chromium, as `console.test.ts`): a long list a page at a time, an elevation asked
 * for and approved, deletes that say what goes, a tree eight levels deep at a phone's width, and a person given one
 * folder offered only what they may do; axe, the CSP and screenshots as there.
 */
import { Elevations, Groups, Identities, Principal, Role, RoleBindings, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import { assert, describe, it } from "vitest"
import { executable } from "./chromium.js"
import { browser, look, open, server, useConsole } from "./consoleSupport.js"

describe.skipIf(executable === undefined)(
  "the console in Chromium: lists, elevations, deletes, deep trees, a folder's member",
  {
    timeout: 120_000
  },
  () => {
    useConsole()

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
  }
)
