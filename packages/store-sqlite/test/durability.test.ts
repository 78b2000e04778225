/**
 * Durability and concurrency on a real database file: a writer killed with SIGKILL at random points loses no
 * acknowledged write and leaves an intact database; concurrent writers keep every invariant.
 */
import { Arbor, Groups, Identities, Principal, Role, RoleBindings, Secrets } from "@arbor/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqliteStore } from "../src/index.js"

const packageDir = fileURLToPath(new URL("..", import.meta.url))

const engineOn = (filename: string) =>
  Arbor.layer.pipe(Layer.provideMerge(SqliteStore.layer({ filename })), Layer.provide(Secrets.layerEphemeral))

interface Round {
  readonly acknowledged: ReadonlyArray<ReadonlyArray<string>>
}

/** Runs the writer on `filename` until it has acknowledged `writes` writes (plus a little), then SIGKILLs it. */
const crashAfter = (filename: string, round: number, writes: number, extraMillis: number) =>
  Effect.async<Round, Error>((resume) => {
    const child = spawn(
      join(packageDir, "node_modules/.bin/vite-node"),
      [
        "--config",
        join(packageDir, "vitest.config.ts"),
        join(packageDir, "test/crash/writer.ts"),
        filename,
        String(round)
      ],
      { cwd: packageDir, stdio: ["ignore", "pipe", "pipe"] }
    )
    const acknowledged: Array<ReadonlyArray<string>> = []
    let buffer = ""
    let stderr = ""
    let killing = false
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.stdout.on("data", (chunk) => {
      buffer += chunk
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines) {
        if (line.startsWith("ACK ")) acknowledged.push(line.split(" ").slice(1))
      }
      if (!killing && acknowledged.length >= writes) {
        killing = true
        setTimeout(() => child.kill("SIGKILL"), extraMillis)
      }
    })
    child.on("exit", (_, signal) => {
      if (signal === "SIGKILL") resume(Effect.succeed({ acknowledged }))
      else resume(Effect.fail(new Error(`writer exited on its own: ${stderr}`)))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("durability", () => {
  it.live("a writer killed with SIGKILL at random points loses no acknowledged write", () =>
    Effect.gen(function*() {
      const filename = join(mkdtempSync(join(tmpdir(), "arbor-crash-")), "arbor.db")
      const created = new Map<string, string>()
      let total = 0
      for (let round = 0; round < 6; round++) {
        const { acknowledged } = yield* crashAfter(
          filename,
          round,
          5 + Math.floor(Math.random() * 150),
          Math.floor(Math.random() * 15)
        )
        total += acknowledged.length
        for (const [, uid, name] of acknowledged) created.set(uid!, name!)

        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const [check] = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
          assert.strictEqual(check?.integrity_check, "ok", `round ${round}`)
          const groups = yield* Groups.Groups
          for (const [uid, name] of created) {
            const group = yield* groups.get(Principal.system, uid)
            // The last acknowledged name, or the rename the writer may have committed but not yet acknowledged.
            const pending = /^(r\d+)-g(\d+)$/.exec(name)
            const later = pending !== null && Number(pending[2]) % 3 === 0
              ? [`${pending[1]}-renamed-${pending[2]}`]
              : []
            assert.include([name, ...later], group.name, `round ${round}: acknowledged write to ${uid} lost`)
          }
        }).pipe(Effect.provide(engineOn(filename)))
      }
      assert.isAbove(total, 30)
    }), { timeout: 180_000 })

  it.live(
    "8 concurrent writers over two connections: names stay unique, no binding outlives its identity, nothing acknowledged is lost",
    () =>
      Effect.gen(function*() {
        const filename = join(mkdtempSync(join(tmpdir(), "arbor-concurrent-")), "arbor.db")
        const viewer = Role.builtInByName("viewer")!.uid
        const setup = yield* Effect.gen(function*() {
          const org = yield* (yield* Groups.Groups).createRoot(Principal.system, { name: "org" })
          const parent = yield* (yield* Groups.Groups).create(Principal.system, org.uid, { name: "parent" })
          return parent.uid
        }).pipe(Effect.provide(engineOn(filename)))

        const expectedErrors = new Set(["AlreadyExists", "NotFound", "FailedPrecondition"])
        const unexpected: Array<string> = []
        const acked = {
          created: new Map<string, number>(),
          renamed: new Map<string, string>(),
          deletedGroups: new Set<string>(),
          bindings: new Set<string>(),
          deletedIdentities: new Set<string>()
        }

        /** One writer: random creates, renames and deletes of siblings, identities and bindings. */
        const writer = (w: number) =>
          Effect.gen(function*() {
            const groups = yield* Groups.Groups
            const identities = yield* Identities.Identities
            const bindings = yield* RoleBindings.RoleBindings
            const mine: Array<string> = []
            const people: Array<string> = []
            const attempt = <A>(effect: Effect.Effect<A, { readonly _tag: string }>) =>
              Effect.catchAll(Effect.asSome(effect), (e) => {
                if (!expectedErrors.has(e._tag)) {
                  unexpected.push(`${e._tag}: ${String((e as { message?: string }).message)}`)
                }
                return Effect.succeedNone
              })
            for (let i = 0; i < 60; i++) {
              const pick = Math.random()
              const name = `n${Math.floor(Math.random() * 12)}`
              if (pick < 0.35) {
                const g = yield* attempt(groups.create(Principal.system, setup, { name }))
                if (g._tag === "Some") {
                  mine.push(g.value.uid)
                  acked.created.set(g.value.uid, w)
                  acked.renamed.set(g.value.uid, g.value.name)
                }
              } else if (pick < 0.55 && mine.length > 0) {
                const uid = mine[Math.floor(Math.random() * mine.length)]!
                const g = yield* attempt(groups.update(Principal.system, uid, { name }))
                if (g._tag === "Some") acked.renamed.set(uid, g.value.name)
              } else if (pick < 0.7 && mine.length > 0) {
                const uid = mine.splice(Math.floor(Math.random() * mine.length), 1)[0]!
                const d = yield* attempt(groups.delete(Principal.system, uid))
                if (d._tag === "Some") acked.deletedGroups.add(uid)
              } else if (pick < 0.8) {
                const id = yield* attempt(
                  identities.create(Principal.system, setup, {
                    name: `w${w}-${i}`,
                    claimMatch: { issuer: "https://i.example", subject: `w${w}-${i}` }
                  })
                )
                if (id._tag === "Some") people.push(id.value.uid)
              } else if (pick < 0.92 && people.length > 0) {
                const identityUid = people[Math.floor(Math.random() * people.length)]!
                const b = yield* attempt(bindings.create(Principal.system, setup, { identityUid, roleUid: viewer }))
                if (b._tag === "Some") acked.bindings.add(`${b.value.uid} ${identityUid}`)
              } else if (people.length > 0) {
                const uid = people.splice(Math.floor(Math.random() * people.length), 1)[0]!
                const d = yield* attempt(identities.delete(Principal.system, uid))
                if (d._tag === "Some") acked.deletedIdentities.add(uid)
              }
            }
          })

        // Two engines, each with its own connection to the file, four writers on each.
        const half = (offset: number) =>
          Effect.forEach([0, 1, 2, 3], (w) => writer(offset + w), { concurrency: "unbounded", discard: true }).pipe(
            Effect.provide(engineOn(filename))
          )
        yield* Effect.all([half(0), half(4)], { concurrency: "unbounded", discard: true })
        assert.deepStrictEqual(unexpected, [])

        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const duplicates =
            yield* sql`SELECT parent, name, count(*) AS n FROM groups GROUP BY parent, name HAVING n > 1`
          assert.deepStrictEqual(duplicates, [])
          const dangling =
            yield* sql`SELECT b.uid FROM role_bindings b LEFT JOIN identities i ON i.uid = b.identity_uid WHERE i.uid IS NULL`
          assert.deepStrictEqual(dangling, [])
          const groups = yield* Groups.Groups
          for (const [uid, name] of acked.renamed) {
            const found = yield* Effect.either(groups.get(Principal.system, uid))
            if (acked.deletedGroups.has(uid)) assert.strictEqual(found._tag, "Left", `${uid} deleted`)
            else {assert.strictEqual(
                found._tag === "Right" && found.right.name,
                name,
                `${uid} keeps its last acknowledged name`
              )}
          }
          const bindings = yield* RoleBindings.RoleBindings
          for (const entry of acked.bindings) {
            const [uid, identityUid] = entry.split(" ") as [string, string]
            const found = yield* Effect.either(bindings.get(Principal.system, uid))
            assert.strictEqual(found._tag, acked.deletedIdentities.has(identityUid) ? "Left" : "Right", entry)
          }
          assert.isAbove(acked.created.size, 20)
        }).pipe(Effect.provide(engineOn(filename)))
      }),
    { timeout: 120_000 }
  )
})
