/** Migration 18: a role binding's condition (DECISIONS §21). */
export const statements = [`ALTER TABLE role_bindings ADD COLUMN condition jsonb`]
