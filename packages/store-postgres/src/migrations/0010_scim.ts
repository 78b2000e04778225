/**
 * Migration 10: SCIM provisioning (docs/api.md §13): each identity provider's credential and switch, the users its
 * client provisions, and the provider a refresh token's sign-in came through.
 */
export const statements = [
  `CREATE TABLE scim_credentials (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  enabled boolean NOT NULL,
  token_digest text COLLATE "C",
  token_expire_time bigint,
  previous_token_digest text COLLATE "C",
  previous_token_expire_time bigint,
  revoke_time bigint,
  version bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT scim_credentials__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX scim_credentials__parent ON scim_credentials (parent, uid)`,
  `CREATE TABLE scim_users (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  identity_uid text COLLATE "C" NOT NULL,
  external_id text COLLATE "C" NOT NULL,
  user_name text COLLATE "C" NOT NULL,
  user_name_key text COLLATE "C" NOT NULL,
  active boolean NOT NULL,
  deleted boolean NOT NULL,
  attributes jsonb NOT NULL,
  version bigint NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT scim_users__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__external_id ON scim_users (parent, external_id) NULLS NOT DISTINCT`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__user_name_key ON scim_users (parent, user_name_key) NULLS NOT DISTINCT`,
  `CREATE INDEX scim_users__parent ON scim_users (parent, uid)`,
  `CREATE INDEX scim_users__identity_uid ON scim_users (identity_uid, uid)`,
  `ALTER TABLE refresh_tokens ADD COLUMN provider text COLLATE "C"`
]
