/** Migration 6: version rows (`Versions`), which writes to role bindings and roles replace. */
export const statements = [
  `CREATE TABLE versions (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  value TEXT NOT NULL
) STRICT`
]
