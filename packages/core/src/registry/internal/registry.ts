import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { conflict, trusted } from "../../engine/internal/operations.js"
import type { Repository } from "../../engine/Repository.js"
import * as Uid from "../../engine/Uid.js"
import * as Repo from "../Repo.js"
import * as Tag from "../Tag.js"

/**
 * The digest given to a tag whose digest is unknown (imports of tag lists without digests): derived from the repo
 * and tag names, so it is the same on every import. It names no real content.
 */
export const syntheticDigest = (repoName: string, tagName: string): string =>
  `sha256:${createHash("sha256").update(`arbor synthetic digest\0${repoName}\0${tagName}`).digest("hex")}`

/** What an upsert did. */
export type Outcome = "created" | "updated" | "unchanged"

const byName = (parent: string, name: string) => ({
  conditions: [{ _tag: "Equals", column: "parent", value: parent }, {
    _tag: "Equals",
    column: "name",
    value: name
  }] as const,
  order: [{ column: "uid", direction: "asc" }] as const,
  limit: 1
})

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * Creates the repo named in `fields` in `group`, or updates the existing one, within the caller's transaction;
 * touches nothing when nothing changes. `createTime` sets a new repo's creation time (imports).
 */
export const upsertRepo = (
  repos: Repository<Repo.Repo>,
  group: Uid.Uid,
  fields: typeof Repo.CreateRepo.Type,
  now: DateTime.Utc,
  createTime: DateTime.Utc = now
) =>
  Effect.gen(function*() {
    const [existing] = yield* repos.find(byName(group, fields.name))
    const duplicate = conflict("repo", `a repo named '${fields.name}' already exists in ${group}`)
    if (existing === undefined) {
      const repo = new Repo.Repo({ uid: Uid.makeChild(group), ...fields, createTime, updateTime: now }, trusted)
      yield* repos.insert(repo).pipe(duplicate)
      return [repo, "created" as Outcome] as const
    }
    const { createTime: _c, uid: _u, updateTime: _t, ...current } = existing
    if (same(current, { ...current, ...fields })) return [existing, "unchanged" as Outcome] as const
    const repo = new Repo.Repo({ ...existing, ...fields, updateTime: now }, trusted)
    yield* repos.update(repo).pipe(duplicate)
    return [repo, "updated" as Outcome] as const
  })

/**
 * Creates the tag named in `fields` in `repo`, or updates the existing one, within the caller's transaction;
 * touches nothing when nothing changes. A tag without a digest gets the synthetic one.
 */
export const upsertTag = (
  tags: Repository<Tag.Tag>,
  repo: Repo.Repo,
  fields: typeof Tag.CreateTag.Type,
  now: DateTime.Utc
) =>
  Effect.gen(function*() {
    const digest = fields.digest ?? syntheticDigest(repo.name, fields.name)
    const [existing] = yield* tags.find(byName(repo.uid, fields.name))
    const duplicate = conflict("tag", `a tag named '${fields.name}' already exists in ${repo.uid}`)
    if (existing === undefined) {
      const tag = new Tag.Tag({
        uid: Uid.makeChild(repo.uid),
        name: fields.name,
        digest,
        deprecated: fields.deprecated,
        createTime: now,
        updateTime: now
      }, trusted)
      yield* tags.insert(tag).pipe(duplicate)
      return [tag, "created" as Outcome] as const
    }
    if (existing.digest === digest && existing.deprecated === fields.deprecated) {
      return [existing, "unchanged" as Outcome] as const
    }
    const tag = new Tag.Tag({ ...existing, digest, deprecated: fields.deprecated, updateTime: now }, trusted)
    yield* tags.update(tag).pipe(duplicate)
    return [tag, "updated" as Outcome] as const
  })
