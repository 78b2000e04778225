/** Migration 6: version rows (`Versions`), which writes to role bindings and roles replace. */
export const statements = [
  `CREATE TABLE versions (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  value text COLLATE "C" NOT NULL,
  CONSTRAINT versions__pkey PRIMARY KEY (uid)
)`
]
