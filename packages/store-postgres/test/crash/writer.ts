/**
 * The crash test's writer on PostgreSQL: four writers at once create and rename groups in the database named on the
 * command line until the process is killed, each printing `ACK` lines only after its write has returned (committed).
 */
import { Arbor, Groups, Principal, Secrets } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { PostgresStore } from "../../src/index.js"

const [url, round] = process.argv.slice(2) as [string, string]

const program = Effect.gen(function*() {
  const groups = yield* Groups.Groups
  const existing = yield* groups.list(Principal.system, { inRoot: true, name: "crash" })
  const org = existing.items[0] ?? (yield* groups.createRoot(Principal.system, { name: "crash" }))
  process.stdout.write(`READY ${org.uid}\n`)
  yield* Effect.forEach([0, 1, 2, 3], (writer) =>
    Effect.gen(function*() {
      for (let i = 0;; i++) {
        const group = yield* groups.create(Principal.system, org.uid, { name: `r${round}-w${writer}-g${i}` })
        process.stdout.write(`ACK create ${group.uid} ${group.name}\n`)
        if (i % 3 === 0) {
          const renamed = yield* groups.update(Principal.system, group.uid, {
            name: `r${round}-w${writer}-renamed-${i}`
          })
          process.stdout.write(`ACK rename ${renamed.uid} ${renamed.name}\n`)
        }
      }
    }), { concurrency: "unbounded", discard: true })
})

const engine = Arbor.layer.pipe(
  Layer.provideMerge(PostgresStore.layer({ url: Redacted.make(url), maxConnections: 4 })),
  Layer.provide(Secrets.layerEphemeral)
)
Effect.runPromise(program.pipe(Effect.provide(engine))).catch((e) => {
  process.stderr.write(`writer failed: ${e}\n`)
  process.exit(1)
})
