import { Arbor, Groups, Principal, Secrets } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import { Effect, Layer } from "effect"

// The database file comes from ARBOR_SQLITE_FILE (default arbor.db). The page-token key (32 bytes or more, hex or
// base64) from ARBOR_PAGE_TOKEN_KEY: keep it with your other secrets, since page tokens handed out earlier stop
// working when it changes. Identity providers' client secrets are sealed in the database under ARBOR_SECRETS_KEY
// (default: the page-token key). `Secrets.layer(bytes)` takes a key you hold some other way.
const engine = Arbor.layer.pipe(
  Layer.provideMerge(SqliteStore.layerConfig()),
  Layer.provide(Secrets.layerConfig)
)

export const organizations = Effect.runPromise(
  Effect.gen(function*() {
    const groups = yield* Groups.Groups
    yield* groups.createRoot(Principal.system, { name: "acme" })
    return (yield* groups.list(Principal.system, { inRoot: true })).items.map((group) => group.name)
  }).pipe(Effect.provide(engine))
)
