/** Migration 19: just-in-time elevation (DECISIONS §21): eligibilities, elevations, and the binding each made. */
export const statements = [
  `ALTER TABLE role_bindings ADD COLUMN elevation_uid text COLLATE "C"`,
  `CREATE TABLE eligibilities (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  identity_uid text COLLATE "C" NOT NULL,
  role_uid text COLLATE "C" NOT NULL,
  max_duration_seconds bigint NOT NULL,
  approver_role_uid text COLLATE "C",
  granted_by text COLLATE "C",
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT eligibilities__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX eligibilities__unique__parent__identity_uid__role_uid ON eligibilities (parent, identity_uid, role_uid) NULLS NOT DISTINCT`,
  `CREATE INDEX eligibilities__parent ON eligibilities (parent, uid)`,
  `CREATE INDEX eligibilities__identity_uid ON eligibilities (identity_uid, uid)`,
  `CREATE INDEX eligibilities__create_time ON eligibilities (create_time, uid)`,
  `CREATE TABLE elevations (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  eligibility_uid text COLLATE "C" NOT NULL,
  identity_uid text COLLATE "C" NOT NULL,
  role_uid text COLLATE "C" NOT NULL,
  reason text COLLATE "C" NOT NULL,
  duration_seconds bigint NOT NULL,
  state text COLLATE "C" NOT NULL,
  approver_uid text COLLATE "C",
  binding_uid text COLLATE "C",
  expire_time bigint,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT elevations__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX elevations__parent ON elevations (parent, uid)`,
  `CREATE INDEX elevations__eligibility_uid ON elevations (eligibility_uid, uid)`,
  `CREATE INDEX elevations__identity_uid ON elevations (identity_uid, uid)`,
  `CREATE INDEX elevations__state ON elevations (state, uid)`,
  `CREATE INDEX elevations__create_time ON elevations (create_time, uid)`
]
