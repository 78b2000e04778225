/**
 * Migration 9: the legal documents each group has accepted, identities' own metadata, repos' READMEs, requests for
 * access to verified organizations and identity providers' group mappings, which a device sign-in keeps until its
 * poll (docs/api.md §13).
 */
export const statements = [
  `CREATE TABLE terms_acceptances (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  doc_id text COLLATE "C" NOT NULL,
  accepted_by text COLLATE "C" NOT NULL,
  org_uid text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT terms_acceptances__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX terms_acceptances__unique__parent__doc_id ON terms_acceptances (parent, doc_id) NULLS NOT DISTINCT`,
  `CREATE INDEX terms_acceptances__parent ON terms_acceptances (parent, uid)`,
  `CREATE INDEX terms_acceptances__create_time ON terms_acceptances (create_time, uid)`,
  `CREATE TABLE identity_metadata (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  fields jsonb NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT identity_metadata__pkey PRIMARY KEY (uid)
)`,
  `CREATE TABLE repo_readmes (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  content text COLLATE "C" NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT repo_readmes__pkey PRIMARY KEY (uid)
)`,
  `CREATE TABLE group_access_requests (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  requester text COLLATE "C" NOT NULL,
  email text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT group_access_requests__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX group_access_requests__parent ON group_access_requests (parent, uid)`,
  `CREATE INDEX group_access_requests__requester ON group_access_requests (requester, uid)`,
  `CREATE INDEX group_access_requests__create_time ON group_access_requests (create_time, uid)`,
  `CREATE TABLE external_group_role_mappings (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  identity_provider_uid text COLLATE "C" NOT NULL,
  external_group_id text COLLATE "C" NOT NULL,
  role_uid text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  granted_by text COLLATE "C",
  key text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT external_group_role_mappings__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX external_group_role_mappings__unique__parent__key ON external_group_role_mappings (parent, key) NULLS NOT DISTINCT`,
  `CREATE INDEX external_group_role_mappings__parent ON external_group_role_mappings (parent, uid)`,
  `CREATE INDEX external_group_role_mappings__create_time ON external_group_role_mappings (create_time, uid)`,
  `ALTER TABLE device_authorizations ADD COLUMN mappings jsonb`
]
