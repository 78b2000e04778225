/** Migration 17: each organization's decision vocabulary. */
export const statements = [
  `CREATE TABLE decision_vocabularies (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  subjects TEXT NOT NULL,
  actions TEXT NOT NULL,
  resources TEXT NOT NULL,
  version INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`
]
