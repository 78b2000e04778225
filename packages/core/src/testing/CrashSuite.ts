/**
 * The crash test every durable store runs: a writer process (the adapter's own, printing `ACK <kind> <uid> <name>`
 * only after each write has returned) is killed with SIGKILL at a random point, and then every acknowledged write must
 * be there, every group must have its change-log entry, and every entry its group.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { spawn } from "node:child_process"
import * as Store from "../engine/Store.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Events from "../events/Events.js"
import * as Group from "../iam/Group.js"
import * as Groups from "../iam/Groups.js"
import * as Principal from "../iam/Principal.js"

/** Runs `command` until it has acknowledged `writes` writes (plus `extraMillis`), then SIGKILLs it: its ACK lines. */
export const crashAfter = (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  writes: number,
  extraMillis: number
) =>
  Effect.async<ReadonlyArray<ReadonlyArray<string>>, Error>((resume) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] })
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
      if (signal === "SIGKILL") resume(Effect.succeed(acknowledged))
      else resume(Effect.fail(new Error(`the writer exited on its own: ${stderr}`)))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * Waits until every entry in the change log is final: a database ends the transactions a killed writer had open
 * when it notices its connections gone, and until then the entries committed after them are not final yet.
 */
const logSettled = Effect.gen(function*() {
  const store = yield* Store.Store
  const [last] = yield* store.find(ChangeLog.table, { order: [{ column: "position", direction: "desc" }], limit: 1 })
  const settled = yield* store.settledPosition
  return last === undefined || settled === undefined || String(last.position) < settled
}).pipe(Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("50 millis") }))

/**
 * Checks the engine in context after a crash (once its log is settled): each group of `created` (uid → the last name acknowledged; a writer
 * renames `<prefix>-g<n>` to `<prefix>-renamed-<n>` when n is a multiple of 3) has that name, or the rename the writer
 * may have committed but not yet acknowledged; each group's last change-log entry shows it as it is; and each group
 * entry's group is there.
 */
export const checkWhole = (created: ReadonlyMap<string, string>, round: number) =>
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    for (const [uid, name] of created) {
      const group = yield* groups.get(Principal.system, uid)
      const pending = /^(.+)-g(\d+)$/.exec(name)
      const later = pending !== null && Number(pending[2]) % 3 === 0 ? [`${pending[1]}-renamed-${pending[2]}`] : []
      assert.include([name, ...later], group.name, `round ${round}: acknowledged write to ${uid} lost`)
    }
    yield* logSettled
    const log = yield* (yield* Events.Events).after(undefined, 1_000_000)
    const stored = yield* (yield* Store.Store).find(Group.table, { order: [{ column: "uid", direction: "asc" }] })
    const last = new Map(log.map((entry) => [entry.subject, entry] as const))
    for (const row of stored) {
      assert.strictEqual(last.get(row.uid as never)?.body.name, row.name, `round ${round}: ${row.uid}'s entry`)
    }
    const kept = new Set(stored.map((row) => row.uid))
    for (const entry of log.filter((e) => e.kind === "group")) {
      assert.isTrue(kept.has(entry.subject), `round ${round}: an entry without its write, ${entry.subject}`)
    }
  })
