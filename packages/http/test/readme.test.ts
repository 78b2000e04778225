/**
 * The README's walkthrough, run as it is written (bash, curl, node) against a real server started on SQLite in a
 * fresh directory, as `pnpm start` would start it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile, spawn } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { freePort, startServer } from "./signInSupport.js"
import { fetchJson, member, startedLikePnpmStart } from "./support.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")

/** The first ```sh block after a heading, or after a sentence. */
const block = (heading: string) => {
  const at = readme.indexOf(`## ${heading}`)
  const section = readme.slice(at === -1 ? readme.indexOf(heading) : at)
  return /```sh\n([\s\S]*?)```/.exec(section)![1]!
}

const launcher = fileURLToPath(new URL("../../launcher/launch.mjs", import.meta.url))

describe("README", () => {
  it("starts and tests with the commands a newcomer is given", () => {
    assert.strictEqual(block("Start the server").trim(), "npx -y pnpm@10 install && npx -y pnpm@10 start")
    assert.strictEqual(block("Run the tests").trim(), "npx -y pnpm@10 install && npx -y pnpm@10 test")
    const ci = readFileSync(new URL("../../../.ci/run", import.meta.url), "utf8")
    assert.include(ci, block("Run the tests").trim(), "CI runs the README's test command")
  })

  it.scopedLive("the walkthrough runs as written", () =>
    Effect.gen(function*() {
      const { cwd, url } = yield* startedLikePnpmStart
      const { stdout: output } = yield* Effect.promise(() =>
        promisify(execFile)("bash", ["-euo", "pipefail", "-c", block("Walkthrough")], {
          cwd,
          env: { ...process.env, ARBOR: url },
          encoding: "utf8",
          timeout: 60_000
        })
      )
      const pages = output.trim().split("\n").slice(-2).map((line) =>
        JSON.parse(line.replace(/^.*?(\{"groups")/, "$1"))
      )
      assert.deepStrictEqual(pages.map((p) => p.groups.map((g: { name: string }) => g.name)), [["build"], ["deploy"]])
      assert.deepStrictEqual(pages.map((p) => p.totalCount), ["3", "3"])
      assert.include(output, "\"role\":{\"uid\":\"cbface5d58f52d0ef8b668e8a94f5da62ed3a21b\",\"name\":\"viewer\"")
    }), { timeout: 120_000 })

  it.scopedLive("the recovery of an expired bootstrap token runs as written", () =>
    Effect.gen(function*() {
      const { cwd, url } = yield* startedLikePnpmStart
      const recovery = block("When the bootstrap token has expired")
      assert.include(recovery, "npx -y pnpm@10 --silent admin token --identity default/bootstrap-admin")
      // pnpm runs the script at the clone's root; here the launcher runs it where the server's data is.
      const script = `${recovery.replace("npx -y pnpm@10 --silent admin", `node ${launcher} admin`)}
curl -sf -H "Authorization: Bearer $TOKEN" "$ARBOR/iam/v2beta1/groups?uidp.in_root=true"`
      const { stdout } = yield* Effect.promise(() =>
        promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], {
          cwd,
          env: { ...process.env, ARBOR: url },
          encoding: "utf8",
          timeout: 120_000
        })
      )
      assert.deepStrictEqual(JSON.parse(stdout).groups.map((g: { name: string }) => g.name), ["default"])
    }), { timeout: 180_000 })

  it("the webhook receiver verifies and prints a delivery, as written", async () => {
    const code = /## Webhooks[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)![1]!
    // Beside the server's package, so that its `cloudevents` and `jose` resolve.
    mkdirSync(join(packageDir, "build"), { recursive: true })
    const file = join(packageDir, "build", `receiver-${process.pid}.mjs`)
    writeFileSync(file, code)
    const server = await startServer(await freePort(), {})
    const port = await freePort()
    const receiver = spawn(process.execPath, [file], {
      env: { PATH: process.env.PATH!, PORT: String(port), ARBOR_ISSUER: server.config.authUrl }
    })
    try {
      let out = ""
      receiver.stdout.on("data", (chunk) => (out += chunk))
      const owner = await server.runtime.runPromise(member("acme"))
      const subscribed = await fetchJson(
        server.url,
        "POST",
        `/events/v2beta1/subscriptions/${owner.org}`,
        owner.token,
        {
          sink: `http://localhost:${port}/`
        }
      )
      assert.strictEqual(subscribed.status, 200, JSON.stringify(subscribed.body))
      const folder = await fetchJson(server.url, "POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, {
        name: "watched"
      })
      for (let i = 0; i < 200 && !out.includes("\n"); i++) await new Promise((r) => setTimeout(r, 50))
      assert.strictEqual(out, `dev.chainguard.api.iam.group.created.v1 ${folder.body.uid} ${owner.identity}\n`)
    } finally {
      receiver.kill()
      await server.close()
      rmSync(file, { force: true })
    }
  }, 30_000)
})
