/** Migration 12: what a sign-in's client asked to have back beside its tokens (its `state`). */
export const statements = [`ALTER TABLE login_transactions ADD COLUMN client_state text COLLATE "C"`]
