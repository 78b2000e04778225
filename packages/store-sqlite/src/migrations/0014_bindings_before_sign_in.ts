/**
 * Migration 14: a role binding may name a person who has not signed in yet (LookupIdentity gives their uid before
 * there is an identity), so its identity is no reference the database holds it to; the engine checks the rest.
 * SQLite drops a foreign key only with its table: the table is made anew, its rows and indexes with it.
 */
export const statements = [
  `CREATE TABLE role_bindings_next (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_uid TEXT NOT NULL,
  role_uid TEXT NOT NULL REFERENCES roles (uid),
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  `INSERT INTO role_bindings_next (uid, parent, identity_uid, role_uid, create_time, update_time)
  SELECT uid, parent, identity_uid, role_uid, create_time, update_time FROM role_bindings`,
  `DROP TABLE role_bindings`,
  `ALTER TABLE role_bindings_next RENAME TO role_bindings`,
  `CREATE UNIQUE INDEX role_bindings__unique__parent__identity_uid__role_uid ON role_bindings (parent, identity_uid, role_uid)`,
  `CREATE INDEX role_bindings__parent ON role_bindings (parent, uid)`,
  `CREATE INDEX role_bindings__identity_uid ON role_bindings (identity_uid, uid)`,
  `CREATE INDEX role_bindings__role_uid ON role_bindings (role_uid, uid)`,
  `CREATE INDEX role_bindings__create_time ON role_bindings (create_time, uid)`,
  `CREATE INDEX role_bindings__update_time ON role_bindings (update_time, uid)`
]
