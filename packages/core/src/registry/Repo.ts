/**
 * Repos: the read model of registry repositories, children of a group. Written in-process (and through v1 and the
 * import command), read through the API.
 */
import * as Schema from "effect/Schema"
import { OptionalDescription, Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"
import * as Capability from "../iam/Capability.js"

/** The capability each operation needs (docs/api.md §7). */
export const permissions = Capability.operations("repo")

/** A repo name: `^[a-z0-9][a-z0-9._/-]{0,127}$`. */
export const RepoName = Schema.String.pipe(
  Schema.filter((s) => /^[a-z0-9][a-z0-9._/-]{0,127}$/.test(s), {
    message: () => "must match the pattern ^[a-z0-9][a-z0-9._/-]{0,127}$",
    identifier: "RepoName"
  })
)

/** Catalog tiers. */
export const catalogTiers = ["UNSPECIFIED", "APPLICATION", "BASE", "FIPS", "AI", "DEVTOOLS"] as const
export const CatalogTier = Schema.Literal(...catalogTiers)
export type CatalogTier = typeof CatalogTier.Type

/** A repo. */
export class Repo extends Schema.Class<Repo>("@arbor/core/Repo")({
  uid: Uid,
  name: Schema.String,
  description: Schema.String,
  catalogTier: CatalogTier,
  bundles: Schema.Array(Schema.String),
  aliases: Schema.Array(Schema.String),
  activeTags: Schema.Array(Schema.String),
  createTime: Timestamp,
  updateTime: Timestamp
}) {}

const Strings = (what: string, max: number) =>
  Schema.Array(
    Schema.String.pipe(
      Schema.filter((s) => s.length > 0 && s.length <= 256, { message: () => `must be 1 to 256 characters` })
    )
  ).pipe(Schema.filter((a) => a.length <= max || `may hold at most ${max} ${what}`))

/** What a caller gives to create (or upsert) a repo. */
export const CreateRepo = Schema.Struct({
  name: RepoName,
  description: OptionalDescription,
  catalogTier: Schema.optionalWith(CatalogTier, { default: () => "UNSPECIFIED" as const }),
  bundles: Schema.optionalWith(Strings("bundles", 64), { default: () => [] }),
  aliases: Schema.optionalWith(Strings("aliases", 64), { default: () => [] }),
  activeTags: Schema.optionalWith(Strings("tags", 1024), { default: () => [] })
})
export type CreateRepo = typeof CreateRepo.Encoded

/** Fields an update may change. */
export const fields = {
  mutable: ["name", "description", "catalogTier", "bundles", "aliases", "activeTags"],
  immutable: [],
  outputOnly: ["uid", "createTime", "updateTime"]
} as const

/** How repos are stored. */
export const table: Table = {
  name: "repos",
  events: ChangeLog.logged("repo", "dev.chainguard.api.platform.registry.repo"),
  columns: {
    name: { type: "text" },
    description: { type: "text" },
    catalogTier: { type: "text" },
    bundles: { type: "json" },
    aliases: { type: "json" },
    activeTags: { type: "json" },
    createTime: { type: "integer" },
    updateTime: { type: "integer" }
  },
  unique: [["parent", "name"]],
  indexes: [["parent", "name"], ["parent"], ["name"], ["createTime"], ["updateTime"]]
}
