/**
 * Identities: workload or user identities that live in a group and are assumed by presenting a token whose claims
 * match (`claimMatch`), or one signed by an offline issuer's keys (`staticKeys`). Exactly one of the two is set.
 * People who sign in are root-level identities (no parent group) with their provider's claim match and email.
 */
import * as Schema from "effect/Schema"
import { OptionalDescription, RequiredName, Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "./Capability.js"
import { ClaimMatch, ClaimMatchInput, StaticKeys, StaticKeysInput } from "./ClaimMatch.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("identity")

/** An identity. */
export class Identity extends Schema.Class<Identity>("@arbor/core/Identity")({
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  claimMatch: Schema.optionalWith(ClaimMatch, { nullable: true, exact: true }),
  staticKeys: Schema.optionalWith(StaticKeys, { nullable: true, exact: true }),
  /** A person's email, as their provider verified it (output only). */
  email: Schema.optionalWith(Schema.String, { nullable: true, exact: true }),
  /** A person's email, as their provider gave it without verifying it (output only). */
  emailUnverified: Schema.optionalWith(Schema.String, { nullable: true, exact: true }),
  lastSeenTime: Timestamp,
  createTime: Timestamp,
  updateTime: Timestamp
}) {
  /** The issuer a token must come from, when it is a literal (empty for a pattern). */
  get issuer(): string {
    return this.claimMatch?.issuer ?? this.staticKeys?.issuer ?? ""
  }

  /** The subject a token must carry, when it is a literal (empty for a pattern). */
  get subject(): string {
    return this.claimMatch?.subject ?? this.staticKeys?.subject ?? ""
  }
}

/** How an identity is assumed (its claim match or static keys), as one comparable string. */
export const assumption = (identity: {
  readonly claimMatch?: ClaimMatch | undefined
  readonly staticKeys?: StaticKeys | undefined
}): string =>
  canonicalJson({
    claimMatch: identity.claimMatch ?? null,
    staticKeys: identity.staticKeys === undefined
      ? null
      : { ...identity.staticKeys, expirationTime: identity.staticKeys.expirationTime.epochMillis }
  })

const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_, v) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined).sort(([a], [b]) => a < b ? -1 : 1))
      : v)

/** What a caller gives to create an identity. */
export const CreateIdentity = Schema.Struct({
  name: RequiredName,
  description: OptionalDescription,
  claimMatch: Schema.optional(ClaimMatchInput),
  staticKeys: Schema.optional(StaticKeysInput)
}).pipe(
  Schema.filter((i) => {
    if (i.claimMatch !== undefined && i.staticKeys !== undefined) {
      return { path: ["staticKeys"], message: "set either claimMatch or staticKeys, not both" }
    }
    if (i.claimMatch === undefined && i.staticKeys === undefined) {
      return { path: ["claimMatch"], message: "is required (or staticKeys)" }
    }
    return true
  })
)
export type CreateIdentity = typeof CreateIdentity.Encoded

/** Fields an update may change; `claimMatch` and `staticKeys` are one choice, so setting one clears the other. */
export const fields = {
  mutable: ["name", "description", "claimMatch", "staticKeys"],
  immutable: [],
  outputOnly: ["uid", "email", "emailUnverified", "lastSeenTime", "createTime", "updateTime"]
} as const

/** How identities are stored. */
export const table: Table = {
  name: "identities",
  events: ChangeLog.logged("identity", "dev.chainguard.api.iam.identity"),
  columns: {
    name: { type: "text" },
    description: { type: "text" },
    claimMatch: { type: "json", nullable: true },
    staticKeys: { type: "json", nullable: true },
    lastSeenTime: { type: "integer" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" },
    email: { type: "text", nullable: true },
    emailUnverified: { type: "text", nullable: true }
  },
  roots: true,
  unique: [["parent", "name"]],
  indexes: [["parent", "name"], ["parent"], ["name"], ["createTime"], ["updateTime"]]
}
