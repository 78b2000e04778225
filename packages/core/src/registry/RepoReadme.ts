/**
 * A repo's README (the protos' `RepoReadme`, docs/api.md §13): Markdown, refused when the HTML it renders to holds
 * anything a sanitizer would take out (scripts, styles, frames, event handlers, `javascript:` links; the check is
 * `internal/readme`), so that what a README shows wherever it is rendered is what its author wrote. One per
 * repo, its uid the repo's, deleted with it.
 */
import * as Schema from "effect/Schema"
import { Timestamp } from "../engine/internal/fields.js"
import type { Table } from "../engine/Store.js"
import { Uid } from "../engine/Uid.js"
import * as ChangeLog from "../events/ChangeLog.js"

/** A README. */
export class RepoReadme extends Schema.Class<RepoReadme>("@arbor/core/RepoReadme")({
  /** The repo's uid. */
  uid: Uid,
  /** Markdown; empty when the repo has none. */
  content: Schema.String
}) {}

/** A README as stored. */
export class Stored extends Schema.Class<Stored>("@arbor/core/RepoReadme/Stored")({
  uid: Uid,
  content: Schema.String,
  updateTime: Timestamp
}) {}

/** The longest README accepted, in UTF-16 code units (characters, nearly). */
export const maxLength = 256 * 1024

/** Which fields an update may name. */
export const fields = { mutable: ["content"], immutable: [], outputOnly: ["uid"] } as const

/** A README's write is an update of its repo (UpdateRepoReadme's type); its removal, with the repo, is ours. */
const updatedType = "dev.chainguard.api.platform.registry.repo.updated.v1"

/** How READMEs are stored: beside their repos, the uid a repo's. */
export const table: Table = {
  name: "repo_readmes",
  events: {
    kind: "repo_readme",
    types: {
      created: updatedType,
      updated: updatedType,
      deleted: "dev.chainguard.api.platform.registry.repo.readme.deleted.v1"
    },
    body: ChangeLog.eachRow((row) => ({ uid: row.uid, content: row.content }))
  } satisfies ChangeLog.Logged,
  columns: {
    content: { type: "text" },
    updateTime: { type: "integer" }
  },
  unique: [],
  indexes: []
}
