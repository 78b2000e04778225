/** Migration 20: an update's entry in the change log keeps the resource before it (what changed). */
export const statements = [`ALTER TABLE changes ADD COLUMN before jsonb`]
