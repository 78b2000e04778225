/** Migration 2: the signing keys of API tokens (`TokenIssuer.SigningKeys.layerStore`), a row per key. */
export const statements = [
  `CREATE TABLE signing_keys (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  private_jwk TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  retired_at INTEGER
) STRICT`
]
