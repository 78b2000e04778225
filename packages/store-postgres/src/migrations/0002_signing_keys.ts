/** Migration 2: the signing keys of API tokens (`TokenIssuer.SigningKeys.layerStore`), a row per key. */
export const statements = [
  `CREATE TABLE signing_keys (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at bigint NOT NULL,
  retired_at bigint,
  CONSTRAINT signing_keys__pkey PRIMARY KEY (uid)
)`
]
