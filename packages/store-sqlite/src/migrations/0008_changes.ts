/**
 * Migration 8: webhook subscriptions and the change log (docs/api.md §12). An entry's position is its place in the
 * order of commits (SQLite has one writer at a time): `seq` never repeats, also once old entries are pruned.
 */
export const statements = [
  `CREATE TABLE subscription_deliveries (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  delivered TEXT NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  retry_at INTEGER NOT NULL,
  failing_since INTEGER
) STRICT`,
  `CREATE TABLE subscriptions (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  sink TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX subscriptions__parent ON subscriptions (parent, uid)`,
  `CREATE INDEX subscriptions__create_time ON subscriptions (create_time, uid)`,
  `CREATE INDEX subscriptions__update_time ON subscriptions (update_time, uid)`,
  `CREATE TABLE changes (
  uid TEXT NOT NULL,
  parent TEXT,
  id TEXT NOT NULL,
  position TEXT NOT NULL GENERATED ALWAYS AS (printf('%040d', seq)) VIRTUAL,
  type TEXT NOT NULL,
  kind TEXT NOT NULL,
  subject TEXT NOT NULL,
  time INTEGER NOT NULL,
  actor_subject TEXT NOT NULL,
  actor TEXT NOT NULL,
  request_id TEXT,
  body TEXT NOT NULL,
  seq INTEGER PRIMARY KEY AUTOINCREMENT
) STRICT`,
  `CREATE UNIQUE INDEX changes__pkey ON changes (uid)`,
  `CREATE UNIQUE INDEX changes__unique__position ON changes (position)`,
  `CREATE INDEX changes__time ON changes (time, uid)`,
  `CREATE INDEX changes__subject ON changes (subject, uid)`
]
