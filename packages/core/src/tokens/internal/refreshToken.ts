/**
 * Refresh tokens (docs/api.md §8): opaque secrets of 256 bits that a person exchanges for a new API token, kept only
 * as a hash, bound to the person (their parent) and an audience, valid 30 days and rotated on every use. Tokens
 * rotated from one another form a family; presenting a rotated token again revokes the whole family.
 */
import * as Duration from "effect/Duration"
import type { Table } from "../../engine/Store.js"

/** How long a refresh token lives. */
export const lifetime = Duration.days(30)

/** How refresh tokens are stored: the parent is the person's identity. */
export const table: Table = {
  name: "refresh_tokens",
  columns: {
    hash: { type: "text" },
    family: { type: "text" },
    audience: { type: "text" },
    expireTime: { type: "integer" },
    rotatedTime: { type: "integer", nullable: true },
    revoked: { type: "boolean" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" },
    /** The organization's identity provider the sign-in came through, whose SCIM client may deprovision the person. */
    provider: { type: "text", nullable: true }
  },
  unique: [["hash"]],
  indexes: [["parent"], ["family"]]
}
