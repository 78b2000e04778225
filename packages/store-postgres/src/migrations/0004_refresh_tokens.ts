/** Migration 4: people's refresh tokens (`RefreshTokens`), hashed, a row per token. */
export const statements = [
  `CREATE TABLE refresh_tokens (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  hash text COLLATE "C" NOT NULL,
  family text COLLATE "C" NOT NULL,
  audience text COLLATE "C" NOT NULL,
  expire_time bigint NOT NULL,
  rotated_time bigint,
  revoked boolean NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT refresh_tokens__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX refresh_tokens__unique__hash ON refresh_tokens (hash)`,
  `CREATE INDEX refresh_tokens__parent ON refresh_tokens (parent, uid)`,
  `CREATE INDEX refresh_tokens__family ON refresh_tokens (family, uid)`
]
