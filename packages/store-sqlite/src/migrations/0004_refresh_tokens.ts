/** Migration 4: people's refresh tokens (`RefreshTokens`), hashed, a row per token. */
export const statements = [
  `CREATE TABLE refresh_tokens (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  hash TEXT NOT NULL,
  family TEXT NOT NULL,
  audience TEXT NOT NULL,
  expire_time INTEGER NOT NULL,
  rotated_time INTEGER,
  revoked INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX refresh_tokens__unique__hash ON refresh_tokens (hash)`,
  `CREATE INDEX refresh_tokens__parent ON refresh_tokens (parent, uid)`,
  `CREATE INDEX refresh_tokens__family ON refresh_tokens (family, uid)`
]
