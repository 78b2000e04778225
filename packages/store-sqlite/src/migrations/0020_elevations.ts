/** Migration 20: just-in-time elevation (DECISIONS §21): eligibilities, elevations, and the binding each made. */
export const statements = [
  `ALTER TABLE role_bindings ADD COLUMN elevation_uid TEXT`,
  `CREATE TABLE eligibilities (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_uid TEXT NOT NULL,
  role_uid TEXT NOT NULL,
  max_duration_seconds INTEGER NOT NULL,
  approver_role_uid TEXT,
  granted_by TEXT,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX eligibilities__unique__parent__identity_uid__role_uid ON eligibilities (parent, identity_uid, role_uid)`,
  `CREATE INDEX eligibilities__parent ON eligibilities (parent, uid)`,
  `CREATE INDEX eligibilities__identity_uid ON eligibilities (identity_uid, uid)`,
  `CREATE INDEX eligibilities__create_time ON eligibilities (create_time, uid)`,
  `CREATE TABLE elevations (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  eligibility_uid TEXT NOT NULL,
  identity_uid TEXT NOT NULL,
  role_uid TEXT NOT NULL,
  reason TEXT NOT NULL,
  duration_seconds INTEGER NOT NULL,
  state TEXT NOT NULL,
  approver_uid TEXT,
  binding_uid TEXT,
  expire_time INTEGER,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX elevations__parent ON elevations (parent, uid)`,
  `CREATE INDEX elevations__eligibility_uid ON elevations (eligibility_uid, uid)`,
  `CREATE INDEX elevations__identity_uid ON elevations (identity_uid, uid)`,
  `CREATE INDEX elevations__state ON elevations (state, uid)`,
  `CREATE INDEX elevations__create_time ON elevations (create_time, uid)`
]
