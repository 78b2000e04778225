/** Migration 3: secrets every process on the database shares (`Secrets.layerStore`), a row per secret. */
export const statements = [
  `CREATE TABLE secrets (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  value TEXT NOT NULL
) STRICT`
]
