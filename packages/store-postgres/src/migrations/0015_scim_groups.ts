/** Migration 15: the groups identity providers' SCIM clients push. */
export const statements = [
  `CREATE TABLE scim_groups (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  display_name text COLLATE "C" NOT NULL,
  display_name_key text COLLATE "C" NOT NULL,
  external_id text COLLATE "C",
  members jsonb NOT NULL,
  version bigint NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT scim_groups__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX scim_groups__unique__parent__display_name_key ON scim_groups (parent, display_name_key) NULLS NOT DISTINCT`,
  `CREATE INDEX scim_groups__parent ON scim_groups (parent, uid)`
]
