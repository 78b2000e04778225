/**
 * The crash test's writer: creates and renames groups in the database named on the command line until it is
 * killed, printing `ACK` lines only after each write has returned (committed).
 */
import { Arbor, Groups, Principal, Secrets } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqliteStore } from "../../src/index.js"

const [filename, round] = process.argv.slice(2) as [string, string]

const program = Effect.gen(function*() {
  const groups = yield* Groups.Groups
  const existing = yield* groups.list(Principal.system, { inRoot: true, name: "crash" })
  const org = existing.items[0] ?? (yield* groups.createRoot(Principal.system, { name: "crash" }))
  process.stdout.write(`READY ${org.uid}\n`)
  for (let i = 0;; i++) {
    const group = yield* groups.create(Principal.system, org.uid, { name: `r${round}-g${i}` })
    process.stdout.write(`ACK create ${group.uid} ${group.name}\n`)
    if (i % 3 === 0) {
      const renamed = yield* groups.update(Principal.system, group.uid, { name: `r${round}-renamed-${i}` })
      process.stdout.write(`ACK rename ${renamed.uid} ${renamed.name}\n`)
    }
  }
})

const engine = Arbor.layer.pipe(
  Layer.provideMerge(SqliteStore.layer({ filename })),
  Layer.provide(Secrets.layerEphemeral)
)
Effect.runPromise(program.pipe(Effect.provide(engine))).catch((e) => {
  process.stderr.write(`writer failed: ${e}\n`)
  process.exit(1)
})
