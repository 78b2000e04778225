import { Arbor, Groups, Principal, Secrets } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import { Effect, Layer } from "effect"

// The database is arbor.db; the key that authenticates page tokens and seals identity providers' client secrets is
// in arbor.key, made on first start (readable only by you). Keep the key out of the database's backups: page tokens
// handed out earlier, and the sealed secrets, need it.
const engine = Arbor.layer.pipe(
  Layer.provideMerge(SqliteStore.layer({ filename: "arbor.db" })),
  Layer.provide(Secrets.layerFile("arbor.key"))
)

export const organizations = Effect.runPromise(
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    yield* groups.createRoot(Principal.system, { name: "acme" })
    return (yield* groups.list(Principal.system, { inRoot: true })).items.map((group) => group.name)
  }).pipe(Effect.provide(engine))
)
