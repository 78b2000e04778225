/**
 * The SQLite schema, as versioned migrations. A migration is frozen once released: later changes come as new
 * migrations, never as edits.
 */
import { Migrations } from "@arbor/store-sql"

/**
 * Migration 1: every table of the engine, with the indexes its lists and lookups use. Unique keys over a parent
 * that may be null (root groups, built-in roles) are expression indexes on `ifnull(parent, '')`, so roots are
 * siblings; those tables also get a plain `(parent, name, uid)` index that queries can use.
 */
const initial = [
  `CREATE TABLE groups (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  verified INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  `CREATE UNIQUE INDEX groups__unique__parent__name ON groups (ifnull(parent, ''), name)`,
  `CREATE INDEX groups__parent__name ON groups (parent, name, uid)`,
  `CREATE INDEX groups__parent ON groups (parent, uid)`,
  `CREATE INDEX groups__name ON groups (name, uid)`,
  `CREATE INDEX groups__create_time ON groups (create_time, uid)`,
  `CREATE INDEX groups__update_time ON groups (update_time, uid)`,
  `CREATE TABLE identities (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  claim_match TEXT,
  static_keys TEXT,
  last_seen_time INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX identities__unique__parent__name ON identities (parent, name)`,
  `CREATE INDEX identities__parent ON identities (parent, uid)`,
  `CREATE INDEX identities__name ON identities (name, uid)`,
  `CREATE INDEX identities__create_time ON identities (create_time, uid)`,
  `CREATE INDEX identities__update_time ON identities (update_time, uid)`,
  `CREATE TABLE roles (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  capabilities TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX roles__unique__parent__name ON roles (ifnull(parent, ''), name)`,
  `CREATE INDEX roles__parent__name ON roles (parent, name, uid)`,
  `CREATE INDEX roles__parent ON roles (parent, uid)`,
  `CREATE INDEX roles__name ON roles (name, uid)`,
  `CREATE INDEX roles__create_time ON roles (create_time, uid)`,
  `CREATE INDEX roles__update_time ON roles (update_time, uid)`,
  `CREATE TABLE role_bindings (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_uid TEXT NOT NULL REFERENCES identities (uid),
  role_uid TEXT NOT NULL REFERENCES roles (uid),
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  `CREATE UNIQUE INDEX role_bindings__unique__parent__identity_uid__role_uid ON role_bindings (parent, identity_uid, role_uid)`,
  `CREATE INDEX role_bindings__parent ON role_bindings (parent, uid)`,
  `CREATE INDEX role_bindings__identity_uid ON role_bindings (identity_uid, uid)`,
  `CREATE INDEX role_bindings__role_uid ON role_bindings (role_uid, uid)`,
  `CREATE INDEX role_bindings__create_time ON role_bindings (create_time, uid)`,
  `CREATE INDEX role_bindings__update_time ON role_bindings (update_time, uid)`,
  `CREATE TABLE identity_providers (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  default_role TEXT NOT NULL,
  oidc TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX identity_providers__unique__parent__name ON identity_providers (parent, name)`,
  `CREATE INDEX identity_providers__parent ON identity_providers (parent, uid)`,
  `CREATE INDEX identity_providers__name ON identity_providers (name, uid)`,
  `CREATE INDEX identity_providers__default_role ON identity_providers (default_role, uid)`,
  `CREATE INDEX identity_providers__create_time ON identity_providers (create_time, uid)`,
  `CREATE INDEX identity_providers__update_time ON identity_providers (update_time, uid)`,
  `CREATE TABLE account_associations (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  amazon TEXT,
  google TEXT,
  azure TEXT,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX account_associations__parent ON account_associations (parent, uid)`,
  `CREATE INDEX account_associations__name ON account_associations (name, uid)`,
  `CREATE INDEX account_associations__create_time ON account_associations (create_time, uid)`,
  `CREATE INDEX account_associations__update_time ON account_associations (update_time, uid)`,
  `CREATE TABLE group_invites (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  role_uid TEXT NOT NULL,
  email TEXT,
  expiration_time INTEGER NOT NULL,
  single_use INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  redeemed INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX group_invites__unique__key_id ON group_invites (key_id)`,
  `CREATE INDEX group_invites__parent ON group_invites (parent, uid)`,
  `CREATE INDEX group_invites__role_uid ON group_invites (role_uid, uid)`,
  `CREATE INDEX group_invites__create_time ON group_invites (create_time, uid)`,
  `CREATE INDEX group_invites__update_time ON group_invites (update_time, uid)`,
  `CREATE TABLE repos (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  catalog_tier TEXT NOT NULL,
  bundles TEXT NOT NULL,
  aliases TEXT NOT NULL,
  active_tags TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX repos__unique__parent__name ON repos (parent, name)`,
  `CREATE INDEX repos__parent ON repos (parent, uid)`,
  `CREATE INDEX repos__name ON repos (name, uid)`,
  `CREATE INDEX repos__create_time ON repos (create_time, uid)`,
  `CREATE INDEX repos__update_time ON repos (update_time, uid)`,
  `CREATE TABLE tags (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  name TEXT NOT NULL,
  digest TEXT NOT NULL,
  deprecated INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  `CREATE UNIQUE INDEX tags__unique__parent__name ON tags (parent, name)`,
  `CREATE INDEX tags__parent ON tags (parent, uid)`,
  `CREATE INDEX tags__name ON tags (name, uid)`,
  `CREATE INDEX tags__digest ON tags (digest, uid)`,
  `CREATE INDEX tags__create_time ON tags (create_time, uid)`,
  `CREATE INDEX tags__update_time ON tags (update_time, uid)`,
  `CREATE TABLE advisories (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  advisory_id TEXT NOT NULL,
  package_name TEXT NOT NULL,
  aliases TEXT NOT NULL,
  events TEXT NOT NULL,
  latest_event_type TEXT NOT NULL,
  event_types TEXT NOT NULL,
  search TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX advisories__unique__parent__advisory_id ON advisories (parent, advisory_id)`,
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
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  private_jwk TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  retired_at INTEGER
) STRICT`
]

/** Migration 3: secrets every process on the database shares (`Secrets.layerStore`), a row per secret. */
const secrets = [
  `CREATE TABLE secrets (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  value TEXT NOT NULL
) STRICT`
]

/** Migration 4: people's refresh tokens (`RefreshTokens`), hashed, a row per token. */
const refreshTokens = [
  `CREATE TABLE refresh_tokens (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  hash TEXT NOT NULL,
  family TEXT NOT NULL,
  audience TEXT NOT NULL,
  expire_time INTEGER NOT NULL,
  rotated_time INTEGER,
  revoked INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX refresh_tokens__unique__hash ON refresh_tokens (hash)`,
  `CREATE INDEX refresh_tokens__parent ON refresh_tokens (parent, uid)`,
  `CREATE INDEX refresh_tokens__family ON refresh_tokens (family, uid)`
]

/**
 * Migration 5: people. Identities gain their email; root identities' names are unique among themselves, as root
 * groups' are; `people` keeps a person unique per (issuer, subject); login transactions and device authorizations
 * hold sign-ins in progress.
 */
const signIn = [
  `ALTER TABLE identities ADD COLUMN email TEXT`,
  `ALTER TABLE identities ADD COLUMN email_unverified TEXT`,
  `DROP INDEX identities__unique__parent__name`,
  `CREATE UNIQUE INDEX identities__unique__parent__name ON identities (ifnull(parent, ''), name)`,
  `CREATE INDEX identities__parent__name ON identities (parent, name, uid)`,
  `CREATE TABLE people (
  uid TEXT PRIMARY KEY NOT NULL REFERENCES identities (uid),
  parent TEXT,
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  `CREATE UNIQUE INDEX people__unique__issuer__subject ON people (issuer, subject)`,
  `CREATE TABLE login_transactions (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  state TEXT NOT NULL,
  nonce TEXT NOT NULL,
  verifier TEXT NOT NULL,
  provider TEXT NOT NULL,
  callback TEXT,
  audience TEXT NOT NULL,
  invite TEXT,
  refresh INTEGER NOT NULL,
  device TEXT,
  expire_time INTEGER NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX login_transactions__expire_time ON login_transactions (expire_time, uid)`,
  `CREATE TABLE device_authorizations (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  device_code_hash TEXT NOT NULL,
  user_code TEXT NOT NULL,
  provider TEXT NOT NULL,
  audience TEXT NOT NULL,
  invite TEXT,
  refresh INTEGER NOT NULL,
  status TEXT NOT NULL,
  identity TEXT,
  interval INTEGER NOT NULL,
  last_poll_time INTEGER,
  expire_time INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX device_authorizations__unique__device_code_hash ON device_authorizations (device_code_hash)`,
  `CREATE UNIQUE INDEX device_authorizations__unique__user_code ON device_authorizations (user_code)`,
  `CREATE INDEX device_authorizations__expire_time ON device_authorizations (expire_time, uid)`
]

/** Migration 6: version rows (`Versions`), which writes to role bindings and roles replace. */
const versions = [
  `CREATE TABLE versions (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  value TEXT NOT NULL
) STRICT`
]

/**
 * Migration 7: whose authority an invite and a provider's default role rest on (docs/api.md §7); null, the system,
 * for rows made before.
 */
const grantedBy = [
  `ALTER TABLE group_invites ADD COLUMN granted_by TEXT`,
  `ALTER TABLE identity_providers ADD COLUMN granted_by TEXT`
]

/**
 * Migration 8: webhook subscriptions and the change log (docs/api.md §12). An entry's position is its place in the
 * order of commits (SQLite has one writer at a time): `seq` never repeats, also once old entries are pruned.
 */
const changes = [
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

/**
 * Migration 9: the legal documents each group has accepted, identities' own metadata, repos' READMEs, requests for
 * access to verified organizations and identity providers' group mappings, which a device sign-in keeps until its
 * poll (docs/api.md §13).
 */
const migration9 = [
  `CREATE TABLE terms_acceptances (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  doc_id TEXT NOT NULL,
  accepted_by TEXT NOT NULL,
  org_uid TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX terms_acceptances__unique__parent__doc_id ON terms_acceptances (parent, doc_id)`,
  `CREATE INDEX terms_acceptances__parent ON terms_acceptances (parent, uid)`,
  `CREATE INDEX terms_acceptances__create_time ON terms_acceptances (create_time, uid)`,
  `CREATE TABLE identity_metadata (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  fields TEXT NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE TABLE repo_readmes (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  content TEXT NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE TABLE group_access_requests (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  requester TEXT NOT NULL,
  email TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX group_access_requests__parent ON group_access_requests (parent, uid)`,
  `CREATE INDEX group_access_requests__requester ON group_access_requests (requester, uid)`,
  `CREATE INDEX group_access_requests__create_time ON group_access_requests (create_time, uid)`,
  `CREATE TABLE external_group_role_mappings (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_provider_uid TEXT NOT NULL,
  external_group_id TEXT NOT NULL,
  role_uid TEXT NOT NULL,
  scope TEXT NOT NULL,
  granted_by TEXT,
  key TEXT NOT NULL,
  create_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX external_group_role_mappings__unique__parent__key ON external_group_role_mappings (parent, key)`,
  `CREATE INDEX external_group_role_mappings__parent ON external_group_role_mappings (parent, uid)`,
  `CREATE INDEX external_group_role_mappings__create_time ON external_group_role_mappings (create_time, uid)`,
  `ALTER TABLE device_authorizations ADD COLUMN mappings TEXT`
]

/**
 * Migration 10: SCIM provisioning (docs/api.md §13): each identity provider's credential and switch, the users its
 * client provisions, and the provider a refresh token's sign-in came through.
 */
const scim = [
  `CREATE TABLE scim_credentials (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  enabled INTEGER NOT NULL,
  token_digest TEXT,
  token_expire_time INTEGER,
  previous_token_digest TEXT,
  previous_token_expire_time INTEGER,
  revoke_time INTEGER,
  version INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX scim_credentials__parent ON scim_credentials (parent, uid)`,
  `CREATE TABLE scim_users (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_uid TEXT NOT NULL,
  external_id TEXT NOT NULL,
  user_name TEXT NOT NULL,
  user_name_key TEXT NOT NULL,
  active INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  attributes TEXT NOT NULL,
  version INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__external_id ON scim_users (parent, external_id)`,
  `CREATE UNIQUE INDEX scim_users__unique__parent__user_name_key ON scim_users (parent, user_name_key)`,
  `CREATE INDEX scim_users__parent ON scim_users (parent, uid)`,
  `CREATE INDEX scim_users__identity_uid ON scim_users (identity_uid, uid)`,
  `ALTER TABLE refresh_tokens ADD COLUMN provider TEXT`
]

/**
 * Migration 11: subscriptions answer for themselves (docs/api.md §12): who created each, and how its deliveries stand
 * (the last delivery, the last error, why they stopped).
 */
const subscriptionHealth = [
  `ALTER TABLE subscriptions ADD COLUMN created_by TEXT`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_delivered INTEGER`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_error TEXT`,
  `ALTER TABLE subscription_deliveries ADD COLUMN stopped TEXT`
]

/** Migration 12: what a sign-in's client asked to have back beside its tokens (its `state`). */
const clientState = [`ALTER TABLE login_transactions ADD COLUMN client_state TEXT`]

/**
 * Migration 13: the indexes in a unique key's order that PostgreSQL had and SQLite lacked (providers, repos, tags and
 * advisories by name under their parent): the first migration written from the descriptors' rendering (`SqliteDdl`).
 */
const rendered = [
  `CREATE INDEX identity_providers__parent__name ON identity_providers (parent, name, uid)`,
  `CREATE INDEX repos__parent__name ON repos (parent, name, uid)`,
  `CREATE INDEX tags__parent__name ON tags (parent, name, uid)`,
  `CREATE INDEX advisories__parent__advisory_id ON advisories (parent, advisory_id, uid)`
]

/**
 * Migration 14: a role binding may name a person who has not signed in yet (LookupIdentity gives their uid before
 * there is an identity), so its identity is no reference the database holds it to; the engine checks the rest.
 * SQLite drops a foreign key only with its table: the table is made anew, its rows and indexes with it.
 */
const bindingsBeforeSignIn = [
  `CREATE TABLE role_bindings_next (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_uid TEXT NOT NULL,
  role_uid TEXT NOT NULL REFERENCES roles (uid),
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT, WITHOUT ROWID`,
  `INSERT INTO role_bindings_next (uid, parent, identity_uid, role_uid, create_time, update_time)
  SELECT uid, parent, identity_uid, role_uid, create_time, update_time FROM role_bindings`,
  `DROP TABLE role_bindings`,
  `ALTER TABLE role_bindings_next RENAME TO role_bindings`,
  `CREATE UNIQUE INDEX role_bindings__unique__parent__identity_uid__role_uid ON role_bindings (parent, identity_uid, role_uid)`,
  `CREATE INDEX role_bindings__parent ON role_bindings (parent, uid)`,
  `CREATE INDEX role_bindings__identity_uid ON role_bindings (identity_uid, uid)`,
  `CREATE INDEX role_bindings__role_uid ON role_bindings (role_uid, uid)`,
  `CREATE INDEX role_bindings__create_time ON role_bindings (create_time, uid)`,
  `CREATE INDEX role_bindings__update_time ON role_bindings (update_time, uid)`
]

/** Migration 15: since when the delivery in flight has waited for its sink (a subscription's health says it). */
const sendingSince = [`ALTER TABLE subscription_deliveries ADD COLUMN sending_since INTEGER`]

/** Migration 16: the groups identity providers' SCIM clients push. */
const scimGroups = [
  `CREATE TABLE scim_groups (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  display_name TEXT NOT NULL,
  display_name_key TEXT NOT NULL,
  external_id TEXT,
  members TEXT NOT NULL,
  version INTEGER NOT NULL,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX scim_groups__unique__parent__display_name_key ON scim_groups (parent, display_name_key)`,
  `CREATE INDEX scim_groups__parent ON scim_groups (parent, uid)`
]

/** Migration 17: each organization's decision vocabulary. */
const decisionVocabularies = [
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

/** Migration 18: a role binding's window (DECISIONS §21) and when its end was logged, its expiry indexed for the sweep. */
const bindingWindows = [
  `ALTER TABLE role_bindings ADD COLUMN start_time INTEGER`,
  `ALTER TABLE role_bindings ADD COLUMN expire_time INTEGER`,
  `ALTER TABLE role_bindings ADD COLUMN ended_time INTEGER`,
  `CREATE INDEX role_bindings__expire_time ON role_bindings (expire_time, uid)`
]

/** Migration 19: a role binding's condition (DECISIONS §21). */
const bindingConditions = [`ALTER TABLE role_bindings ADD COLUMN condition TEXT`]

/** Migration 20: just-in-time elevation (DECISIONS §21): eligibilities, elevations, and the binding each made. */
const elevations = [
  `ALTER TABLE role_bindings ADD COLUMN elevation_uid TEXT`,
  `CREATE TABLE eligibilities (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  identity_uid TEXT NOT NULL,
  role_uid TEXT NOT NULL,
  max_duration_seconds INTEGER NOT NULL,
  approver_role_uid TEXT,
  granted_by TEXT,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE UNIQUE INDEX eligibilities__unique__parent__identity_uid__role_uid ON eligibilities (parent, identity_uid, role_uid)`,
  `CREATE INDEX eligibilities__parent ON eligibilities (parent, uid)`,
  `CREATE INDEX eligibilities__identity_uid ON eligibilities (identity_uid, uid)`,
  `CREATE INDEX eligibilities__create_time ON eligibilities (create_time, uid)`,
  `CREATE TABLE elevations (
  uid TEXT PRIMARY KEY NOT NULL,
  parent TEXT,
  eligibility_uid TEXT NOT NULL,
  identity_uid TEXT NOT NULL,
  role_uid TEXT NOT NULL,
  reason TEXT NOT NULL,
  duration_seconds INTEGER NOT NULL,
  state TEXT NOT NULL,
  approver_uid TEXT,
  binding_uid TEXT,
  expire_time INTEGER,
  create_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL
) STRICT`,
  `CREATE INDEX elevations__parent ON elevations (parent, uid)`,
  `CREATE INDEX elevations__eligibility_uid ON elevations (eligibility_uid, uid)`,
  `CREATE INDEX elevations__identity_uid ON elevations (identity_uid, uid)`,
  `CREATE INDEX elevations__state ON elevations (state, uid)`,
  `CREATE INDEX elevations__create_time ON elevations (create_time, uid)`
]

/** Migration 21: an update's entry in the change log keeps the resource before it (what changed). */
const changesBefore = [`ALTER TABLE changes ADD COLUMN before TEXT`]

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
  "0013_rendered": Migrations.statements(rendered),
  "0014_bindings_before_sign_in": Migrations.statements(bindingsBeforeSignIn),
  "0015_sending_since": Migrations.statements(sendingSince),
  "0016_scim_groups": Migrations.statements(scimGroups),
  "0017_decision_vocabularies": Migrations.statements(decisionVocabularies),
  "0018_binding_windows": Migrations.statements(bindingWindows),
  "0019_binding_conditions": Migrations.statements(bindingConditions),
  "0020_elevations": Migrations.statements(elevations),
  "0021_changes_before": Migrations.statements(changesBefore)
}

/** The newest schema version this code knows. */
export const latestVersion = Migrations.latestVersion(migrations)
