/**
 * Run by the SQLite suite in a fresh process: opens the engine on the seeded database, serves a read workload from
 * it (page walks with totalCount, a subtree listing, gets of every group listed), and prints its resident memory.
 */
import { Arbor, Groups, Principal, Secrets } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const filename = process.env["ARBOR_PROBE_FILE"]!
const subtree = process.env["ARBOR_PROBE_SUBTREE"]!

const workload = Effect.gen(function*() {
  const groups = yield* Groups.Groups
  const system = Principal.system
  for (const descendantsOf of [undefined, subtree]) {
    let pageToken: string | undefined
    for (let page = 0; page < 200; page++) {
      const result = yield* groups.list(system, {
        pageSize: 50,
        ...(descendantsOf ? { descendantsOf } : {}),
        ...(pageToken ? { pageToken } : {})
      })
      for (const group of result.items) yield* groups.get(system, group.uid)
      pageToken = result.nextPageToken
      if (!pageToken) break
    }
  }
})

const engine = Arbor.layer.pipe(
  Layer.provideMerge(SqliteStore.layer({ filename })),
  Layer.provide(Secrets.layerEphemeral)
)

await Effect.runPromise(Effect.provide(workload, engine))
process.stdout.write(`${process.memoryUsage().rss}\n`)
