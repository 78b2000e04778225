/**
 * Migration 7: whose authority an invite and a provider's default role rest on (docs/api.md §7); null, the system,
 * for rows made before.
 */
export const statements = [
  `ALTER TABLE group_invites ADD COLUMN granted_by text COLLATE "C"`,
  `ALTER TABLE identity_providers ADD COLUMN granted_by text COLLATE "C"`
]
