/**
 * Migration 13: a role binding may name a person who has not signed in yet (LookupIdentity gives their uid before
 * there is an identity), so its identity is no reference the database holds it to; the engine checks the rest.
 */
export const statements = [`ALTER TABLE role_bindings DROP CONSTRAINT IF EXISTS role_bindings_identity_uid_fkey`]
