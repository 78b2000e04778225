/**
 * The PostgreSQL schema, as versioned migrations. A migration is frozen once released: later changes come as new
 * migrations, never as edits. Text columns order by bytes (`COLLATE "C"`, the order every store shares); unique
 * keys over a parent treat null parents as equal (`NULLS NOT DISTINCT`), and each has a twin index ending in `uid`
 * that lists in that key's order read without sorting; constraints are named as
 * `Dialect.constraintName` names them. `test/schema.test.ts` checks the schema against the core's table descriptors.
 */
import { Migrations } from "@arbor/store-sql"

/** Migration 1: every table of the engine, with the indexes its lists and lookups use. */
const initial = [
  `CREATE TABLE groups (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  name text COLLATE "C" NOT NULL,
  description text COLLATE "C" NOT NULL,
  verified boolean NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT groups__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX groups__unique__parent__name ON groups (parent, name) NULLS NOT DISTINCT`,
  `CREATE INDEX groups__parent__name ON groups (parent, name, uid)`,
  `CREATE INDEX groups__parent ON groups (parent, uid)`,
  `CREATE INDEX groups__name ON groups (name, uid)`,
  `CREATE INDEX groups__create_time ON groups (create_time, uid)`,
  `CREATE INDEX groups__update_time ON groups (update_time, uid)`,
  `CREATE TABLE identities (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  name text COLLATE "C" NOT NULL,
  description text COLLATE "C" NOT NULL,
  claim_match jsonb,
  static_keys jsonb,
  last_seen_time bigint NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT identities__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX identities__unique__parent__name ON identities (parent, name) NULLS NOT DISTINCT`,
  `CREATE INDEX identities__parent__name ON identities (parent, name, uid)`,
  `CREATE INDEX identities__parent ON identities (parent, uid)`,
  `CREATE INDEX identities__name ON identities (name, uid)`,
  `CREATE INDEX identities__create_time ON identities (create_time, uid)`,
  `CREATE INDEX identities__update_time ON identities (update_time, uid)`,
  `CREATE TABLE roles (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  name text COLLATE "C" NOT NULL,
  description text COLLATE "C" NOT NULL,
  capabilities jsonb NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT roles__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX roles__unique__parent__name ON roles (parent, name) NULLS NOT DISTINCT`,
  `CREATE INDEX roles__parent__name ON roles (parent, name, uid)`,
  `CREATE INDEX roles__parent ON roles (parent, uid)`,
  `CREATE INDEX roles__name ON roles (name, uid)`,
  `CREATE INDEX roles__create_time ON roles (create_time, uid)`,
  `CREATE INDEX roles__update_time ON roles (update_time, uid)`,
  `CREATE TABLE role_bindings (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  identity_uid text COLLATE "C" NOT NULL REFERENCES identities (uid),
  role_uid text COLLATE "C" NOT NULL REFERENCES roles (uid),
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT role_bindings__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX role_bindings__unique__parent__identity_uid__role_uid ON role_bindings (parent, identity_uid, role_uid) NULLS NOT DISTINCT`,
  `CREATE INDEX role_bindings__parent ON role_bindings (parent, uid)`,
  `CREATE INDEX role_bindings__identity_uid ON role_bindings (identity_uid, uid)`,
  `CREATE INDEX role_bindings__role_uid ON role_bindings (role_uid, uid)`,
  `CREATE INDEX role_bindings__create_time ON role_bindings (create_time, uid)`,
  `CREATE INDEX role_bindings__update_time ON role_bindings (update_time, uid)`,
  `CREATE TABLE identity_providers (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  name text COLLATE "C" NOT NULL,
  description text COLLATE "C" NOT NULL,
  default_role text COLLATE "C" NOT NULL,
  oidc jsonb NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT identity_providers__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX identity_providers__unique__parent__name ON identity_providers (parent, name) NULLS NOT DISTINCT`,
  `CREATE INDEX identity_providers__parent__name ON identity_providers (parent, name, uid)`,
  `CREATE INDEX identity_providers__parent ON identity_providers (parent, uid)`,
  `CREATE INDEX identity_providers__name ON identity_providers (name, uid)`,
  `CREATE INDEX identity_providers__default_role ON identity_providers (default_role, uid)`,
  `CREATE INDEX identity_providers__create_time ON identity_providers (create_time, uid)`,
  `CREATE INDEX identity_providers__update_time ON identity_providers (update_time, uid)`,
  `CREATE TABLE account_associations (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  name text COLLATE "C" NOT NULL,
  description text COLLATE "C" NOT NULL,
  amazon jsonb,
  google jsonb,
  azure jsonb,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT account_associations__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX account_associations__parent ON account_associations (parent, uid)`,
  `CREATE INDEX account_associations__name ON account_associations (name, uid)`,
  `CREATE INDEX account_associations__create_time ON account_associations (create_time, uid)`,
  `CREATE INDEX account_associations__update_time ON account_associations (update_time, uid)`,
  `CREATE TABLE group_invites (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  role_uid text COLLATE "C" NOT NULL,
  email text COLLATE "C",
  expiration_time bigint NOT NULL,
  single_use boolean NOT NULL,
  key_id text COLLATE "C" NOT NULL,
  code_hash text COLLATE "C" NOT NULL,
  redeemed boolean NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT group_invites__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX group_invites__unique__key_id ON group_invites (key_id)`,
  `CREATE INDEX group_invites__parent ON group_invites (parent, uid)`,
  `CREATE INDEX group_invites__role_uid ON group_invites (role_uid, uid)`,
  `CREATE INDEX group_invites__create_time ON group_invites (create_time, uid)`,
  `CREATE INDEX group_invites__update_time ON group_invites (update_time, uid)`,
  `CREATE TABLE repos (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  name text COLLATE "C" NOT NULL,
  description text COLLATE "C" NOT NULL,
  catalog_tier text COLLATE "C" NOT NULL,
  bundles jsonb NOT NULL,
  aliases jsonb NOT NULL,
  active_tags jsonb NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT repos__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX repos__unique__parent__name ON repos (parent, name) NULLS NOT DISTINCT`,
  `CREATE INDEX repos__parent__name ON repos (parent, name, uid)`,
  `CREATE INDEX repos__parent ON repos (parent, uid)`,
  `CREATE INDEX repos__name ON repos (name, uid)`,
  `CREATE INDEX repos__create_time ON repos (create_time, uid)`,
  `CREATE INDEX repos__update_time ON repos (update_time, uid)`,
  `CREATE TABLE tags (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  name text COLLATE "C" NOT NULL,
  digest text COLLATE "C" NOT NULL,
  deprecated boolean NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT tags__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX tags__unique__parent__name ON tags (parent, name) NULLS NOT DISTINCT`,
  `CREATE INDEX tags__parent__name ON tags (parent, name, uid)`,
  `CREATE INDEX tags__parent ON tags (parent, uid)`,
  `CREATE INDEX tags__name ON tags (name, uid)`,
  `CREATE INDEX tags__digest ON tags (digest, uid)`,
  `CREATE INDEX tags__create_time ON tags (create_time, uid)`,
  `CREATE INDEX tags__update_time ON tags (update_time, uid)`,
  `CREATE TABLE advisories (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  advisory_id text COLLATE "C" NOT NULL,
  package_name text COLLATE "C" NOT NULL,
  aliases jsonb NOT NULL,
  events jsonb NOT NULL,
  latest_event_type text COLLATE "C" NOT NULL,
  event_types jsonb NOT NULL,
  search text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT advisories__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX advisories__unique__parent__advisory_id ON advisories (parent, advisory_id) NULLS NOT DISTINCT`,
  `CREATE INDEX advisories__parent__advisory_id ON advisories (parent, advisory_id, uid)`,
  `CREATE INDEX advisories__parent ON advisories (parent, uid)`,
  `CREATE INDEX advisories__advisory_id ON advisories (advisory_id, uid)`,
  `CREATE INDEX advisories__package_name ON advisories (package_name, uid)`,
  `CREATE INDEX advisories__latest_event_type ON advisories (latest_event_type, uid)`,
  `CREATE INDEX advisories__create_time ON advisories (create_time, uid)`,
  `CREATE INDEX advisories__update_time ON advisories (update_time, uid)`
]

/** Migration 2: the signing keys of API tokens (`TokenIssuer.SigningKeys.layerStore`), a row per key. */
const signingKeys = [
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

/** Migration 3: secrets every process on the database shares (`Secrets.layerStore`), a row per secret. */
const secrets = [
  `CREATE TABLE secrets (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  value text COLLATE "C" NOT NULL,
  CONSTRAINT secrets__pkey PRIMARY KEY (uid)
)`
]

/** Migration 4: people's refresh tokens (`RefreshTokens`), hashed, a row per token. */
const refreshTokens = [
  `CREATE TABLE refresh_tokens (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  hash text COLLATE "C" NOT NULL,
  family text COLLATE "C" NOT NULL,
  audience text COLLATE "C" NOT NULL,
  expire_time bigint NOT NULL,
  rotated_time bigint,
  revoked boolean NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT refresh_tokens__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX refresh_tokens__unique__hash ON refresh_tokens (hash)`,
  `CREATE INDEX refresh_tokens__parent ON refresh_tokens (parent, uid)`,
  `CREATE INDEX refresh_tokens__family ON refresh_tokens (family, uid)`
]

/**
 * Migration 5: people. Identities gain their email; `people` keeps a person unique per (issuer, subject); login
 * transactions and device authorizations hold sign-ins in progress.
 */
const signIn = [
  `ALTER TABLE identities ADD COLUMN email text COLLATE "C"`,
  `ALTER TABLE identities ADD COLUMN email_unverified text COLLATE "C"`,
  `CREATE TABLE people (
  uid text COLLATE "C" NOT NULL REFERENCES identities (uid),
  parent text COLLATE "C",
  issuer text COLLATE "C" NOT NULL,
  subject text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT people__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX people__unique__issuer__subject ON people (issuer, subject)`,
  `CREATE TABLE login_transactions (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  state text COLLATE "C" NOT NULL,
  nonce text COLLATE "C" NOT NULL,
  verifier text COLLATE "C" NOT NULL,
  provider text COLLATE "C" NOT NULL,
  callback text COLLATE "C",
  audience text COLLATE "C" NOT NULL,
  invite text COLLATE "C",
  refresh boolean NOT NULL,
  device text COLLATE "C",
  expire_time bigint NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT login_transactions__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX login_transactions__expire_time ON login_transactions (expire_time, uid)`,
  `CREATE TABLE device_authorizations (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  device_code_hash text COLLATE "C" NOT NULL,
  user_code text COLLATE "C" NOT NULL,
  provider text COLLATE "C" NOT NULL,
  audience text COLLATE "C" NOT NULL,
  invite text COLLATE "C",
  refresh boolean NOT NULL,
  status text COLLATE "C" NOT NULL,
  identity text COLLATE "C",
  interval bigint NOT NULL,
  last_poll_time bigint,
  expire_time bigint NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT device_authorizations__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX device_authorizations__unique__device_code_hash ON device_authorizations (device_code_hash)`,
  `CREATE UNIQUE INDEX device_authorizations__unique__user_code ON device_authorizations (user_code)`,
  `CREATE INDEX device_authorizations__expire_time ON device_authorizations (expire_time, uid)`
]

/** Migration 6: version rows (`Versions`), which writes to role bindings and roles replace. */
const versions = [
  `CREATE TABLE versions (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  value text COLLATE "C" NOT NULL,
  CONSTRAINT versions__pkey PRIMARY KEY (uid)
)`
]

/**
 * Migration 7: whose authority an invite and a provider's default role rest on (docs/api.md §7); null, the system,
 * for rows made before.
 */
const grantedBy = [
  `ALTER TABLE group_invites ADD COLUMN granted_by text COLLATE "C"`,
  `ALTER TABLE identity_providers ADD COLUMN granted_by text COLLATE "C"`
]

/**
 * Migration 8: webhook subscriptions and the change log (docs/api.md §12). An entry's position is the writing
 * transaction's id, then a sequence number, each 20 digits: writers commit concurrently, and a reader takes only
 * positions below the oldest transaction still running (`settledPosition`), so an entry that commits late is never
 * passed over.
 */
const changes = [
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

/**
 * Migration 9: the legal documents each group has accepted, identities' own metadata, repos' READMEs, requests for
 * access to verified organizations and identity providers' group mappings, which a device sign-in keeps until its
 * poll (docs/api.md §13).
 */
const migration9 = [
  `CREATE TABLE terms_acceptances (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  doc_id text COLLATE "C" NOT NULL,
  accepted_by text COLLATE "C" NOT NULL,
  org_uid text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT terms_acceptances__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX terms_acceptances__unique__parent__doc_id ON terms_acceptances (parent, doc_id) NULLS NOT DISTINCT`,
  `CREATE INDEX terms_acceptances__parent ON terms_acceptances (parent, uid)`,
  `CREATE INDEX terms_acceptances__create_time ON terms_acceptances (create_time, uid)`,
  `CREATE TABLE identity_metadata (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  fields jsonb NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT identity_metadata__pkey PRIMARY KEY (uid)
)`,
  `CREATE TABLE repo_readmes (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  content text COLLATE "C" NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT repo_readmes__pkey PRIMARY KEY (uid)
)`,
  `CREATE TABLE group_access_requests (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  requester text COLLATE "C" NOT NULL,
  email text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT group_access_requests__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX group_access_requests__parent ON group_access_requests (parent, uid)`,
  `CREATE INDEX group_access_requests__requester ON group_access_requests (requester, uid)`,
  `CREATE INDEX group_access_requests__create_time ON group_access_requests (create_time, uid)`,
  `CREATE TABLE external_group_role_mappings (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  identity_provider_uid text COLLATE "C" NOT NULL,
  external_group_id text COLLATE "C" NOT NULL,
  role_uid text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  granted_by text COLLATE "C",
  key text COLLATE "C" NOT NULL,
  create_time bigint NOT NULL,
  CONSTRAINT external_group_role_mappings__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX external_group_role_mappings__unique__parent__key ON external_group_role_mappings (parent, key) NULLS NOT DISTINCT`,
  `CREATE INDEX external_group_role_mappings__parent ON external_group_role_mappings (parent, uid)`,
  `CREATE INDEX external_group_role_mappings__create_time ON external_group_role_mappings (create_time, uid)`,
  `ALTER TABLE device_authorizations ADD COLUMN mappings jsonb`
]

/**
 * Migration 10: SCIM provisioning (docs/api.md §13): each identity provider's credential and switch, the users its
 * client provisions, and the provider a refresh token's sign-in came through.
 */
const scim = [
  `CREATE TABLE scim_credentials (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  enabled boolean NOT NULL,
  token_digest text COLLATE "C",
  token_expire_time bigint,
  previous_token_digest text COLLATE "C",
  previous_token_expire_time bigint,
  revoke_time bigint,
  version bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT scim_credentials__pkey PRIMARY KEY (uid)
)`,
  `CREATE INDEX scim_credentials__parent ON scim_credentials (parent, uid)`,
  `CREATE TABLE scim_users (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  identity_uid text COLLATE "C" NOT NULL,
  external_id text COLLATE "C" NOT NULL,
  user_name text COLLATE "C" NOT NULL,
  user_name_key text COLLATE "C" NOT NULL,
  active boolean NOT NULL,
  deleted boolean NOT NULL,
  attributes jsonb NOT NULL,
  version bigint NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT scim_users__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__external_id ON scim_users (parent, external_id) NULLS NOT DISTINCT`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__user_name_key ON scim_users (parent, user_name_key) NULLS NOT DISTINCT`,
  `CREATE INDEX scim_users__parent ON scim_users (parent, uid)`,
  `CREATE INDEX scim_users__identity_uid ON scim_users (identity_uid, uid)`,
  `ALTER TABLE refresh_tokens ADD COLUMN provider text COLLATE "C"`
]

/**
 * Migration 11: subscriptions answer for themselves (docs/api.md §12): who created each, and how its deliveries stand
 * (the last delivery, the last error, why they stopped).
 */
const subscriptionHealth = [
  `ALTER TABLE subscriptions ADD COLUMN created_by text COLLATE "C"`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_delivered bigint`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_error text COLLATE "C"`,
  `ALTER TABLE subscription_deliveries ADD COLUMN stopped text COLLATE "C"`
]

/** Migration 12: what a sign-in's client asked to have back beside its tokens (its `state`). */
const clientState = [`ALTER TABLE login_transactions ADD COLUMN client_state text COLLATE "C"`]

/**
 * Migration 13: a role binding may name a person who has not signed in yet (LookupIdentity gives their uid before
 * there is an identity), so its identity is no reference the database holds it to; the engine checks the rest.
 */
const bindingsBeforeSignIn = [`ALTER TABLE role_bindings DROP CONSTRAINT IF EXISTS role_bindings_identity_uid_fkey`]

/** Migration 14: since when the delivery in flight has waited for its sink (a subscription's health says it). */
const sendingSince = [`ALTER TABLE subscription_deliveries ADD COLUMN sending_since bigint`]

/** Migration 15: the groups identity providers' SCIM clients push. */
const scimGroups = [
  `CREATE TABLE scim_groups (
  uid text COLLATE "C" NOT NULL,
  parent text COLLATE "C",
  display_name text COLLATE "C" NOT NULL,
  display_name_key text COLLATE "C" NOT NULL,
  external_id text COLLATE "C",
  members jsonb NOT NULL,
  version bigint NOT NULL,
  create_time bigint NOT NULL,
  update_time bigint NOT NULL,
  CONSTRAINT scim_groups__pkey PRIMARY KEY (uid)
)`,
  `CREATE UNIQUE INDEX scim_groups__unique__parent__display_name_key ON scim_groups (parent, display_name_key) NULLS NOT DISTINCT`,
  `CREATE INDEX scim_groups__parent ON scim_groups (parent, uid)`
]

/** Migration 16: each organization's decision vocabulary. */
const decisionVocabularies = [
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

/** Migration 17: a role binding's window (DECISIONS §21) and when its end was logged, its expiry indexed for the sweep. */
const bindingWindows = [
  `ALTER TABLE role_bindings ADD COLUMN start_time bigint`,
  `ALTER TABLE role_bindings ADD COLUMN expire_time bigint`,
  `ALTER TABLE role_bindings ADD COLUMN ended_time bigint`,
  `CREATE INDEX role_bindings__expire_time ON role_bindings (expire_time, uid)`
]

/** Migration 18: a role binding's condition (DECISIONS §21). */
const bindingConditions = [`ALTER TABLE role_bindings ADD COLUMN condition jsonb`]

/** Migration 19: just-in-time elevation (DECISIONS §21): eligibilities, elevations, and the binding each made. */
const elevations = [
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

/** Migration 20: an update's entry in the change log keeps the resource before it (what changed). */
const changesBefore = [`ALTER TABLE changes ADD COLUMN before jsonb`]

/** The migrations, by `<id>_<name>`. */
export const migrations: Migrations.Migrations = {
  "0001_initial": Migrations.statements(initial),
  "0002_signing_keys": Migrations.statements(signingKeys),
  "0003_secrets": Migrations.statements(secrets),
  "0004_refresh_tokens": Migrations.statements(refreshTokens),
  "0005_sign_in": Migrations.statements(signIn),
  "0006_versions": Migrations.statements(versions),
  "0007_granted_by": Migrations.statements(grantedBy),
  "0008_changes": Migrations.statements(changes),
  "0009_iam_surface": Migrations.statements(migration9),
  "0010_scim": Migrations.statements(scim),
  "0011_subscription_health": Migrations.statements(subscriptionHealth),
  "0012_client_state": Migrations.statements(clientState),
  "0013_bindings_before_sign_in": Migrations.statements(bindingsBeforeSignIn),
  "0014_sending_since": Migrations.statements(sendingSince),
  "0015_scim_groups": Migrations.statements(scimGroups),
  "0016_decision_vocabularies": Migrations.statements(decisionVocabularies),
  "0017_binding_windows": Migrations.statements(bindingWindows),
  "0018_binding_conditions": Migrations.statements(bindingConditions),
  "0019_elevations": Migrations.statements(elevations),
  "0020_changes_before": Migrations.statements(changesBefore)
}

/** The newest schema version this code knows. */
export const latestVersion = Migrations.latestVersion(migrations)
