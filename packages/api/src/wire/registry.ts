/**
 * The registry's resources on the wire (`Wire`): repos, tags, READMEs and advisories.
 */
import { Advisory as CoreAdvisory, eventOf, EventType } from "@arbor/core/Advisory"
import { CatalogTier, Repo as CoreRepo } from "@arbor/core/Repo"
import { RepoReadme as CoreRepoReadme } from "@arbor/core/RepoReadme"
import { Tag as CoreTag } from "@arbor/core/Tag"
import * as Schema from "effect/Schema"

import { resource, shape, Strings, Time, times, Uid } from "./shapes.js"

export const Repo = resource(
  "Repo",
  Schema.typeSchema(CoreRepo),
  {
    uid: Uid,
    name: Schema.String,
    description: Schema.String,
    catalogTier: CatalogTier,
    bundles: Strings,
    aliases: Strings,
    activeTags: Strings,
    ...times
  },
  (repo) => new CoreRepo(repo, true),
  (repo) => repo
)

export const Tag = resource(
  "Tag",
  Schema.typeSchema(CoreTag),
  { uid: Uid, name: Schema.String, digest: Schema.String, deprecated: Schema.Boolean, ...times },
  (tag) => new CoreTag(tag, true),
  (tag) => tag
)

/** A repo's README: Markdown. */
export const RepoReadme = shape(
  "RepoReadme",
  Schema.typeSchema(CoreRepoReadme),
  Schema.Struct({
    uid: Uid.annotations({ description: "the repo's uid" }),
    content: Schema.String.annotations({ description: "Markdown; empty when the repo has no README" })
  }),
  (readme) => new CoreRepoReadme(readme, true),
  (readme) => readme
)

/** An advisory event: its type, its time, and the data of its type under the type's camelCase name. */
const Event = eventOf(Time)

export const Advisory = resource(
  "Advisory",
  Schema.typeSchema(CoreAdvisory),
  {
    uid: Uid,
    advisoryId: Schema.String,
    packageName: Schema.String,
    aliases: Strings,
    events: Schema.Array(Event),
    latestEventType: EventType,
    ...times
  },
  (advisory) => new CoreAdvisory(advisory, true),
  (advisory) => advisory
)
