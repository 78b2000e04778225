import { Arbor, Secrets, Sts, TokenIssuer } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import { Layer } from "effect"

// The engine with the token exchange, its signing keys kept in the same database: tokens still verify after a
// restart, and on every process that shares the database. Tokens name `issuer` as their issuer and `audience` as
// the API they are for.
export const engine = Sts.Sts.Default.pipe(
  Layer.provideMerge(Arbor.layer),
  Layer.provideMerge(TokenIssuer.TokenIssuer.Default),
  Layer.provide(TokenIssuer.SigningKeys.layerStore),
  Layer.provide(Layer.succeed(TokenIssuer.TokenSettings, {
    issuer: "https://auth.example.com",
    audience: "https://api.example.com"
  })),
  Layer.provideMerge(SqliteStore.layer({ filename: "arbor.db" })),
  Layer.provide(Secrets.layerFile("arbor.key"))
)
