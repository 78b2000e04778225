/**
 * Migration 5: people. Identities gain their email; root identities' names are unique among themselves, as root
 * groups' are; `people` keeps a person unique per (issuer, subject); login transactions and device authorizations
 * hold sign-ins in progress.
 */
export const statements = [
  `ALTER TABLE identities ADD COLUMN email TEXT`,
  `ALTER TABLE identities ADD COLUMN email_unverified TEXT`,
  `DROP INDEX identities__unique__parent__name`,
  `CREATE UNIQUE INDEX identities__unique__parent__name ON identities (ifnull(parent, ''), name)`,
  `CREATE INDEX identities__parent__name ON identities (parent, name, uid)`,
  `CREATE TABLE people (
  uid TEXT PRIMARY KEY NOT NULL REFERENCES identities (uid),
  parent TEXT,
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  `CREATE UNIQUE INDEX people__unique__issuer__subject ON people (issuer, subject)`,
  `CREATE TABLE login_transactions (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  state TEXT NOT NULL,
  nonce TEXT NOT NULL,
  verifier TEXT NOT NULL,
  provider TEXT NOT NULL,
  callback TEXT,
  audience TEXT NOT NULL,
  invite TEXT,
  refresh INTEGER NOT NULL,
  device TEXT,
  expire_time INTEGER NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX login_transactions__expire_time ON login_transactions (expire_time, uid)`,
  `CREATE TABLE device_authorizations (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  device_code_hash TEXT NOT NULL,
  user_code TEXT NOT NULL,
  provider TEXT NOT NULL,
  audience TEXT NOT NULL,
  invite TEXT,
  refresh INTEGER NOT NULL,
  status TEXT NOT NULL,
  identity TEXT,
  interval INTEGER NOT NULL,
  last_poll_time INTEGER,
  expire_time INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX device_authorizations__unique__device_code_hash ON device_authorizations (device_code_hash)`,
  `CREATE UNIQUE INDEX device_authorizations__unique__user_code ON device_authorizations (user_code)`,
  `CREATE INDEX device_authorizations__expire_time ON device_authorizations (expire_time, uid)`
]
