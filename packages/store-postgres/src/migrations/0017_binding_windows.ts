/** Migration 17: a role binding's window (DECISIONS §21) and when its end was logged, its expiry indexed for the sweep. */
export const statements = [
  `ALTER TABLE role_bindings ADD COLUMN start_time bigint`,
  `ALTER TABLE role_bindings ADD COLUMN expire_time bigint`,
  `ALTER TABLE role_bindings ADD COLUMN ended_time bigint`,
  `CREATE INDEX role_bindings__expire_time ON role_bindings (expire_time, uid)`
]
