/**
 * Migration 11: subscriptions answer for themselves (docs/api.md §12): who created each, and how its deliveries stand
 * (the last delivery, the last error, why they stopped).
 */
export const statements = [
  `ALTER TABLE subscriptions ADD COLUMN created_by text COLLATE "C"`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_delivered bigint`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_error text COLLATE "C"`,
  `ALTER TABLE subscription_deliveries ADD COLUMN stopped text COLLATE "C"`
]
