/** Migration 3: secrets every process on the database shares (`Secrets.layerStore`), a row per secret. */
export const statements = [
  `CREATE TABLE secrets (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  value text COLLATE "C" NOT NULL,
  CONSTRAINT secrets__pkey PRIMARY KEY (uid)
)`
]
