/** Migration 16: each organization's decision vocabulary. */
export const statements = [
  `CREATE TABLE decision_vocabularies (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  subjects jsonb NOT NULL,
  actions jsonb NOT NULL,
  resources jsonb NOT NULL,
  version bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT decision_vocabularies__pkey PRIMARY KEY (uid)
)`
]
