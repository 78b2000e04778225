/**
 * Migration 11: subscriptions answer for themselves (docs/api.md §12): who created each, and how its deliveries stand
 * (the last delivery, the last error, why they stopped).
 */
export const statements = [
  `ALTER TABLE subscriptions ADD COLUMN created_by TEXT`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_delivered INTEGER`,
  `ALTER TABLE subscription_deliveries ADD COLUMN last_error TEXT`,
  `ALTER TABLE subscription_deliveries ADD COLUMN stopped TEXT`
]
