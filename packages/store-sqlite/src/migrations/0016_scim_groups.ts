/** Migration 16: the groups identity providers' SCIM clients push. */
export const statements = [
  `CREATE TABLE scim_groups (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  display_name TEXT NOT NULL,
  display_name_key TEXT NOT NULL,
  external_id TEXT,
  members TEXT NOT NULL,
  version INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX scim_groups__unique__parent__display_name_key ON scim_groups (parent, display_name_key)`,
  `CREATE INDEX scim_groups__parent ON scim_groups (parent, uid)`
]
