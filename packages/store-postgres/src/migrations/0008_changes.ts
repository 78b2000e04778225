/**
 * Migration 8: webhook subscriptions and the change log (docs/api.md §12). An entry's position is the writing
 * transaction's id, then a sequence number, each 20 digits: writers commit concurrently, and a reader takes only
 * positions below the oldest transaction still running (`settledPosition`), so an entry that commits late is never
 * passed over.
 */
export const statements = [
  `CREATE TABLE subscription_deliveries (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  delivered text COLLATE "C" NOT NULL,
  lease_owner text COLLATE "C",
  lease_until bigint NOT NULL,
  attempts bigint NOT NULL,
  retry_at bigint NOT NULL,
  failing_since bigint,
  CONSTRAINT subscription_deliveries__pkey PRIMARY KEY (uid)
)`,
  `CREATE TABLE subscriptions (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  sink text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT subscriptions__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX subscriptions__parent ON subscriptions (parent, uid)`,
  `CREATE INDEX subscriptions__create_time ON subscriptions (create_time, uid)`,
  `CREATE INDEX subscriptions__update_time ON subscriptions (update_time, uid)`,
  `CREATE SEQUENCE changes__position_seq`,
  `CREATE TABLE changes (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  id text COLLATE "C" NOT NULL,
  position text COLLATE "C" NOT NULL
    DEFAULT (lpad(pg_current_xact_id()::text, 20, '0') || lpad(nextval('changes__position_seq')::text, 20, '0')),
  type text COLLATE "C" NOT NULL,
  kind text COLLATE "C" NOT NULL,
  subject text COLLATE "C" NOT NULL,
  time bigint NOT NULL,
  actor_subject text COLLATE "C" NOT NULL,
  actor jsonb NOT NULL,
  request_id text COLLATE "C",
  body jsonb NOT NULL,
  CONSTRAINT changes__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX changes__unique__position ON changes (position)`,
  `CREATE INDEX changes__time ON changes (time, uid)`,
  `CREATE INDEX changes__subject ON changes (subject, uid)`
]
