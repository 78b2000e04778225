/**
 * Migration 9: the legal documents each group has accepted, identities' own metadata, repos' READMEs, requests for
 * access to verified organizations and identity providers' group mappings, which a device sign-in keeps until its
 * poll (docs/api.md §13).
 */
export const statements = [
  `CREATE TABLE terms_acceptances (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  doc_id TEXT NOT NULL,
  accepted_by TEXT NOT NULL,
  org_uid TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX terms_acceptances__unique__parent__doc_id ON terms_acceptances (parent, doc_id)`,
  `CREATE INDEX terms_acceptances__parent ON terms_acceptances (parent, uid)`,
  `CREATE INDEX terms_acceptances__create_time ON terms_acceptances (create_time, uid)`,
  `CREATE TABLE identity_metadata (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  fields TEXT NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE TABLE repo_readmes (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  content TEXT NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE TABLE group_access_requests (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  requester TEXT NOT NULL,
  email TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX group_access_requests__parent ON group_access_requests (parent, uid)`,
  `CREATE INDEX group_access_requests__requester ON group_access_requests (requester, uid)`,
  `CREATE INDEX group_access_requests__create_time ON group_access_requests (create_time, uid)`,
  `CREATE TABLE external_group_role_mappings (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_provider_uid TEXT NOT NULL,
  external_group_id TEXT NOT NULL,
  role_uid TEXT NOT NULL,
  scope TEXT NOT NULL,
  granted_by TEXT,
  key TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX external_group_role_mappings__unique__parent__key ON external_group_role_mappings (parent, key)`,
  `CREATE INDEX external_group_role_mappings__parent ON external_group_role_mappings (parent, uid)`,
  `CREATE INDEX external_group_role_mappings__create_time ON external_group_role_mappings (create_time, uid)`,
  `ALTER TABLE device_authorizations ADD COLUMN mappings TEXT`
]
