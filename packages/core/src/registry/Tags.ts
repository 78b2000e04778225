/**
 * The Tags service: list and get tags for readers, and the in-process write API (upsert by name, update, delete)
 * gated by the `tag.*` capabilities at the repo's group.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import { commit, operations, orNotFound, trusted } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import type { Condition } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import type { Principal } from "../iam/Principal.js"
import { syntheticDigest, upsertTag } from "./internal/registry.js"
import * as Repo from "./Repo.js"
import * as Tag from "./Tag.js"

export { syntheticDigest }

/** The list parameters of tags: the common ones, `digest`, and `updated_since` (RFC 3339). */
export interface TagListOptions extends Lists.ListOptions {
  readonly digest?: string | undefined
  readonly updatedSince?: string | undefined
}

/** The group whose capabilities govern a tag: its repo's group. */
const groupOfTag = (uid: Uid.Uid) => Resources.parentGroup(Resources.parentGroup(uid))

/** Tag filters as store conditions. */
export const filters = (options: TagListOptions): Lists.Filters => {
  const conditions: Array<Condition> = []
  const violations: Array<Errors.FieldViolation> = []
  if (options.digest !== undefined) conditions.push({ _tag: "Equals", column: "digest", value: options.digest })
  const since = Lists.timeFilter(violations, "updated_since", options.updatedSince)
  if (since !== undefined) conditions.push({ _tag: "AtLeast", column: "updateTime", value: since })
  return { conditions, violations, digest: [options.digest, options.updatedSince] }
}

/** Builds the Tags service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const tags = yield* Repository.make(Tag.table, Tag.Tag)
  const repos = yield* Repository.make(Repo.table, Repo.Repo)
  const authorization = ops.authorization
  const kind: Resources.Kind<Tag.Tag> = {
    resourceType: "tag",
    repository: tags,
    permissions: Tag.permissions,
    groupOf: groupOfTag
  }
  const spec: Lists.ListSpec<Tag.Tag> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: tags,
    capability: Tag.permissions.list,
    visibleAt: "parent",
    load: Lists.asIs
  }

  const service = {
    list: (principal: Principal, options: TagListOptions = {}) =>
      operation("Tags.list")(Lists.list(ops, spec, principal, options, filters(options))),

    get: (principal: Principal, uid: string) => operation("Tags.get")(Resources.get(ops, kind, principal, uid)),

    upsert: Effect.fnUntraced(function*(principal: Principal, repoUid: string, input: unknown) {
      const repoId = yield* Uid.parse(repoUid, "parent")
      const group = Resources.parentGroup(repoId)
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, Tag.permissions.create, { group, uid: repoId, kind: "repo" }, grants)
      const fields = yield* Validation.decodeRequest(Tag.CreateTag, Tag.fields)(input)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          const repo = yield* orNotFound(repos.get(repoId), "repo", repoId)
          const [tag, outcome] = yield* upsertTag(tags, repo, fields, yield* DateTime.now)
          if (outcome === "updated") {
            yield* authorization.check(principal, Tag.permissions.update, Resources.targetOf(kind, tag.uid), grants)
          }
          return tag
        })
      )
    }, operation("Tags.upsert")),

    update: (
      principal: Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("Tags.update")(Resources.update(ops, kind, principal, uid, {
        patch,
        updateMask,
        fields: Tag.fields,
        apply: (current, request) =>
          Effect.gen(function*() {
            const fields = yield* Validation.decode(Tag.CreateTag)(
              FieldMask.apply(
                { name: current.name, digest: current.digest, deprecated: current.deprecated },
                request.body,
                request.mask,
                Tag.fields
              )
            )
            const repo = yield* orNotFound(repos.get(Resources.parentGroup(current.uid)), "repo", current.uid)
            return new Tag.Tag({
              ...current,
              ...fields,
              digest: fields.digest ?? syntheticDigest(repo.name, fields.name),
              updateTime: request.updateTime
            }, trusted)
          }),
        duplicate: (next) => `a tag named '${next.name}' already exists beside ${next.uid}`
      })),

    delete: (principal: Principal, uid: string) =>
      operation("Tags.delete")(Resources.remove<Tag.Tag, never, never>(ops, kind, principal, uid))
  }
  // A registry create is an upsert by name (docs/api.md §2): v1 and gRPC write repos and tags through it.
  const registry: TagsService = { ...service, create: service.upsert }
  return registry
})

/** The Tags service. Lists take `digest` and `updated_since`. */
export interface TagsService extends ResourceService.Writable<Tag.Tag, TagListOptions> {
  /** Creates the tag named in `input` in repo `repoUid`, or updates the existing one. */
  readonly upsert: (
    principal: Principal,
    repoUid: string,
    input: unknown
  ) => Effect.Effect<Tag.Tag, Errors.WriteFailure>
}

/** Tags: the tags of repos. */
export class Tags extends Effect.Service<Tags>()("@arbor/core/Tags", { effect: make }) {}
