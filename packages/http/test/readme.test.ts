/**
 * The README's walkthrough, run as it is written (bash, curl, node) against a real server started on SQLite in a
 * fresh directory, as `pnpm start` would start it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile, spawn } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { waitFor } from "./processes.js"
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
    assert.strictEqual(block("Start the server").trim(), "npx -y pnpm@10 install && npx -y pnpm@10 --silent start")
    assert.strictEqual(block("Run the tests").trim(), "npx -y pnpm@10 install && npx -y pnpm@10 test")
    const ci = readFileSync(new URL("../../../.ci/run", import.meta.url), "utf8")
    assert.include(ci, block("Run the tests").trim(), "CI runs the README's test command")
  })

  it(
    "Ctrl-C stops the server started as written, and pnpm reports no failure",
    async () => {
      const start = block("Start the server").trim().split(" && ")[1]!
      const dataDir = join(tmpdir(), `arbor-ctrl-c-${process.pid}`)
      const port = await freePort()
      // In a process group of its own, as a terminal runs a command: Ctrl-C signals the whole group.
      const child = spawn("bash", ["-c", start], {
        cwd: join(packageDir, "../.."),
        detached: true,
        env: {
          PATH: process.env.PATH!,
          HOME: process.env.HOME ?? tmpdir(),
          PORT: String(port),
          ARBOR_DATA_DIR: dataDir
        }
      })
      let output = ""
      child.stdout.on("data", (chunk) => (output += chunk))
      child.stderr.on("data", (chunk) => (output += chunk))
      const exited = new Promise<string>((resolve) =>
        child.on("exit", (code, signal) => resolve(signal ?? String(code)))
      )
      try {
        await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000)
        process.kill(-child.pid!, "SIGINT")
        const ended = await exited
        assert.include(output, "\"message\":\"stopped\"")
        assert.notMatch(output, /ELIFECYCLE|Command failed/)
        // Ended by the signal, or exiting as a command ended by Ctrl-C does: a terminal reports neither.
        assert.include(["0", "130", "SIGINT"], ended)
      } finally {
        if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL")
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
    90_000
  )

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

  it("the webhook receiver prints its own deliveries and refuses one replayed or relabelled, as written", async () => {
    const code = /## Webhooks[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)![1]!
    // Beside the server's package, so that its `cloudevents` and `jose` resolve.
    mkdirSync(join(packageDir, "build"), { recursive: true })
    const file = join(packageDir, "build", `receiver-${process.pid}.mjs`)
    writeFileSync(file, code)
    const server = await startServer(await freePort(), {})
    const port = await freePort()
    // Another tenant's sink, which keeps what it is sent.
    const captured: Array<{ headers: Record<string, string>; body: string }> = []
    const capturing = createServer((request, response) => {
      let body = ""
      request.setEncoding("utf8").on("data", (c) => (body += c)).on("end", () => {
        captured.push({ headers: request.headers as Record<string, string>, body })
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => capturing.listen(0, "127.0.0.1", resolve))
    const receivers: Array<ReturnType<typeof spawn>> = []
    /** The README's receiver on `port` for `subscription`, once it answers: what it printed and refused so far. */
    const startReceiver = async (port: number, subscription: string) => {
      const child = spawn(process.execPath, [file], {
        env: {
          PATH: process.env.PATH!,
          PORT: String(port),
          ARBOR_ISSUER: server.config.authUrl,
          ARBOR_SUBSCRIPTION: subscription
        }
      })
      receivers.push(child)
      const printed = { out: "", err: "" }
      child.stdout.on("data", (chunk) => (printed.out += chunk))
      child.stderr.on("data", (chunk) => (printed.err += chunk))
      await waitFor(async () => (await fetch(`http://localhost:${port}/`, { method: "POST" })).status === 401, 10_000)
      return printed
    }
    try {
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
      const ours = await startReceiver(port, subscribed.body.uid)

      const folder = await fetchJson(server.url, "POST", `/iam/v2beta1/groups/${owner.org}`, owner.token, {
        name: "watched"
      })
      for (let i = 0; i < 200 && !ours.out.includes("\n"); i++) await new Promise((r) => setTimeout(r, 50))
      assert.strictEqual(ours.out, `dev.chainguard.api.iam.group.created.v1 ${folder.body.uid} ${owner.identity}\n`)

      // The other tenant captures one of its own deliveries…
      const other = await server.runtime.runPromise(member("globex"))
      const address = capturing.address() as AddressInfo
      const theirs = await fetchJson(server.url, "POST", `/events/v2beta1/subscriptions/${other.org}`, other.token, {
        sink: `http://127.0.0.1:${address.port}/`
      })
      await fetchJson(server.url, "POST", `/iam/v2beta1/groups/${other.org}`, other.token, { name: "bait" })
      await waitFor(async () => captured.length > 0, 10_000)
      const [stolen] = captured
      // …and replays it to acme's receiver: as it is, and relabelled as a deletion of acme's folder.
      const replay = (headers: Record<string, string>) =>
        fetch(`http://localhost:${port}/`, { method: "POST", headers, body: stolen!.body }).then((r) => r.status)
      const { host: _host, "content-length": _length, connection: _connection, ...sent } = stolen!.headers
      assert.strictEqual(await replay(sent), 401)
      assert.strictEqual(
        await replay({
          ...sent,
          "ce-subject": folder.body.uid,
          "ce-group": owner.org,
          "ce-type": "dev.chainguard.api.iam.group.deleted.v1"
        }),
        401
      )
      assert.include(ours.err, "refused: the delivery is for another subscription")
      assert.strictEqual(ours.out.split("\n").length, 2, "nothing more was printed")

      // The same receiver for the other tenant's subscription takes the delivery as it was sent, never relabelled.
      const theirPort = await freePort()
      const their = await startReceiver(theirPort, theirs.body.uid)
      const toTheirs = (headers: Record<string, string>) =>
        fetch(`http://localhost:${theirPort}/`, { method: "POST", headers, body: stolen!.body }).then((r) => r.status)
      assert.strictEqual(await toTheirs(sent), 204)
      for (
        const [header, value] of [
          ["ce-type", "dev.chainguard.api.iam.group.deleted.v1"],
          ["ce-subject", folder.body.uid],
          ["ce-group", owner.org],
          ["ce-id", "00000000-0000-4000-8000-000000000000"],
          ["ce-time", "2020-01-01T00:00:00.000Z"]
        ] as const
      ) {
        assert.strictEqual(await toTheirs({ ...sent, [header]: value }), 401, header)
        assert.include(their.err, `refused: ${header} is not the one signed`)
      }
    } finally {
      receivers.forEach((child) => child.kill())
      capturing.close()
      await server.close()
      rmSync(file, { force: true })
    }
  }, 30_000)
})
