/**
 * Repo catalogs: JSON lists of repos with their tags, in the shape of `repos.json` (name, tags, firstSeen, tier,
 * aliases, shortDescription; other fields are ignored), as read by `Repos.importCatalog`.
 */
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Repo from "../Repo.js"

/** One catalog entry. */
export const Entry = Schema.Struct({
  name: Schema.String,
  tags: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  firstSeen: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  tier: Schema.optional(Schema.String),
  aliases: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  shortDescription: Schema.optionalWith(Schema.String, { default: () => "" })
})
export type Entry = typeof Entry.Type

/** A description that fits the rules: white space folded to single spaces, at most 512 characters. */
export const description = (text: string): string => {
  const folded = text.replace(/\s+/g, " ").trim()
  return folded.length <= 512 ? folded : `${folded.slice(0, 511)}…`
}

/** The repo fields an entry describes; an unknown tier is UNSPECIFIED. */
export const repoFields = (entry: Entry): Repo.CreateRepo => ({
  name: entry.name,
  description: description(entry.shortDescription),
  catalogTier: (Repo.catalogTiers as ReadonlyArray<string>).includes(entry.tier ?? "")
    ? entry.tier as Repo.CatalogTier
    : "UNSPECIFIED",
  aliases: entry.aliases
})

/** When the repo was first seen, if the entry says and it is a valid time. */
export const firstSeen = (entry: Entry): DateTime.Utc | undefined =>
  entry.firstSeen === null
    ? undefined
    : Option.getOrUndefined(Option.map(DateTime.make(entry.firstSeen), DateTime.toUtc))
