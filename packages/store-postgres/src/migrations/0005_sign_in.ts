/**
 * Migration 5: people. Identities gain their email; `people` keeps a person unique per (issuer, subject); login
 * transactions and device authorizations hold sign-ins in progress.
 */
export const statements = [
  `ALTER TABLE identities ADD COLUMN email text COLLATE "C"`,
  `ALTER TABLE identities ADD COLUMN email_unverified text COLLATE "C"`,
  `CREATE TABLE people (
  uid text COLLATE "C" NOT NULL REFERENCES identities (uid),
  parent text COLLATE "C",
  issuer text COLLATE "C" NOT NULL,
  subject text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT people__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX people__unique__issuer__subject ON people (issuer, subject)`,
  `CREATE TABLE login_transactions (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  state text COLLATE "C" NOT NULL,
  nonce text COLLATE "C" NOT NULL,
  verifier text COLLATE "C" NOT NULL,
  provider text COLLATE "C" NOT NULL,
  callback text COLLATE "C",
  audience text COLLATE "C" NOT NULL,
  invite text COLLATE "C",
  refresh boolean NOT NULL,
  device text COLLATE "C",
  expire_time bigint NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT login_transactions__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX login_transactions__expire_time ON login_transactions (expire_time, uid)`,
  `CREATE TABLE device_authorizations (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  device_code_hash text COLLATE "C" NOT NULL,
  user_code text COLLATE "C" NOT NULL,
  provider text COLLATE "C" NOT NULL,
  audience text COLLATE "C" NOT NULL,
  invite text COLLATE "C",
  refresh boolean NOT NULL,
  status text COLLATE "C" NOT NULL,
  identity text COLLATE "C",
  interval bigint NOT NULL,
  last_poll_time bigint,
  expire_time bigint NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT device_authorizations__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX device_authorizations__unique__device_code_hash ON device_authorizations (device_code_hash)`,
  `CREATE UNIQUE INDEX device_authorizations__unique__user_code ON device_authorizations (user_code)`,
  `CREATE INDEX device_authorizations__expire_time ON device_authorizations (expire_time, uid)`
]
