/**
 * Migration 10: SCIM provisioning (docs/api.md §13): each identity provider's credential and switch, the users its
 * client provisions, and the provider a refresh token's sign-in came through.
 */
export const statements = [
  `CREATE TABLE scim_credentials (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  enabled INTEGER NOT NULL,
  token_digest TEXT,
  token_expire_time INTEGER,
  previous_token_digest TEXT,
  previous_token_expire_time INTEGER,
  revoke_time INTEGER,
  version INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX scim_credentials__parent ON scim_credentials (parent, uid)`,
  `CREATE TABLE scim_users (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_uid TEXT NOT NULL,
  external_id TEXT NOT NULL,
  user_name TEXT NOT NULL,
  user_name_key TEXT NOT NULL,
  active INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  attributes TEXT NOT NULL,
  version INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__external_id ON scim_users (parent, external_id)`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__user_name_key ON scim_users (parent, user_name_key)`,
  `CREATE INDEX scim_users__parent ON scim_users (parent, uid)`,
  `CREATE INDEX scim_users__identity_uid ON scim_users (identity_uid, uid)`,
  `ALTER TABLE refresh_tokens ADD COLUMN provider TEXT`
]
