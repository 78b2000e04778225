import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Arbor, AuditTrail, Principal, RepoReadme, Repos } from "../src/index.js"
import * as Readme from "../src/registry/internal/readme.js"
import * as Refusal from "../src/testing/Refusal.js"
import { organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

describe("RepoReadme", () => {
  it("accepts Markdown and the HTML READMEs use for layout; refuses what a sanitizer would take out", () => {
    const fine = [
      readFileSync(join(import.meta.dirname, "..", "..", "..", "README.md"), "utf8"),
      readFileSync(join(import.meta.dirname, "..", "..", "..", "docs", "api.md"), "utf8"),
      "![logo](https://example.com/logo.png \"Logo\")\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n```js\nif (a < b && c) {}\n```",
      "<p align=\"center\"><img src=\"logo.png\" width=\"200\"></p>\n\nA & B \"quoted\" <br>\n---",
      "<details><summary>More</summary>\n\n**hidden**\n</details>\n\n[mail](mailto:a@example.com)",
      "[not a link](javascript:alert(1))",
      ""
    ]
    for (const content of fine) assert.isUndefined(Readme.problem(content), content.slice(0, 80))
    const refused = [
      ["# x\n\n<script>alert(1)</script>", "<script>"],
      ["<img src=x onerror=alert(1)>", "onerror"],
      ["<a href=\"javascript:alert(1)\">x</a>", "javascript:"],
      ["<style>body { display: none }</style>", "<style>"],
      ["<iframe src=\"https://example.com\"></iframe>", "<iframe"],
      ["<p style=\"position: fixed\">x</p>", "style"],
      ["<form action=\"https://example.com\"><input name=q></form>", "<form"]
    ] as const
    for (const [content, named] of refused) {
      const problem = Readme.problem(content)
      assert.isString(problem, content)
      assert.include(problem, named, content)
    }
    assert.include(Readme.problem("a".repeat(RepoReadme.maxLength + 1)), "at most")
  })

  it.effect("repo.list reads it, repo.update replaces it (by presence or mask); logged as the repo's update", () =>
    withArbor(Effect.gen(function*() {
      const repos = yield* Repos.Repos
      const org = yield* organization("acme")
      const repo = yield* repos.upsert(Principal.system, org.uid, { name: "nginx" })
      const viewer = yield* principalWith(org.uid, "viewer", "viewer")
      const editor = yield* principalWith(org.uid, "editor", "editor")
      assert.deepInclude(yield* repos.readme(viewer, repo.uid), { uid: repo.uid, content: "" })
      const set = yield* repos.updateReadme(editor, repo.uid, { content: "# nginx\n\nA web server." })
      assert.strictEqual(set.content, "# nginx\n\nA web server.")
      assert.strictEqual((yield* repos.readme(viewer, repo.uid)).content, "# nginx\n\nA web server.")
      // Nothing present and no mask: unchanged. A mask naming content without it in the body clears it.
      assert.strictEqual((yield* repos.updateReadme(editor, repo.uid, {})).content, "# nginx\n\nA web server.")
      assert.strictEqual((yield* repos.updateReadme(editor, repo.uid, {}, "content")).content, "")
      const denied = yield* Refusal.of(repos.updateReadme(viewer, repo.uid, { content: "x" }))
      assert.strictEqual(denied._tag, "PermissionDenied")
      const unsafe = yield* Refusal.of(repos.updateReadme(editor, repo.uid, { content: "<script>x</script>" }))
      assert.strictEqual(unsafe._tag, "InvalidArgument")
      if (unsafe._tag === "InvalidArgument") assert.strictEqual(unsafe.violations[0]?.field, "content")
      const missing = yield* Refusal.of(repos.readme(Principal.system, `${org.uid}/0123456789abcdef`))
      assert.strictEqual(missing._tag, "NotFound")
      const logged = yield* (yield* AuditTrail.AuditTrail).list(Principal.system, { subject: repo.uid })
      assert.deepStrictEqual(
        logged.items.filter((e) => e.kind === "repo_readme").map((e) => [e.type, e.body.content]),
        [
          ["dev.chainguard.api.platform.registry.repo.updated.v1", "# nginx\n\nA web server."],
          ["dev.chainguard.api.platform.registry.repo.updated.v1", ""]
        ]
      )
      // Deleting the repo deletes its README.
      yield* repos.updateReadme(editor, repo.uid, { content: "again" })
      yield* repos.delete(Principal.system, repo.uid)
      const again = yield* repos.upsert(Principal.system, org.uid, { name: "nginx" })
      assert.strictEqual((yield* repos.readme(viewer, again.uid)).content, "")
    })))
})
