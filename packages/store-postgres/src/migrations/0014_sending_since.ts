/** Migration 14: since when the delivery in flight has waited for its sink (a subscription's health says it). */
export const statements = [`ALTER TABLE subscription_deliveries ADD COLUMN sending_since bigint`]
