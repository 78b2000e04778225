/**
 * The Repos service: list and get repos for readers; the in-process write API (upsert by name, update, delete with
 * its tags) gated by the `repo.*` capabilities; and the catalog importer.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Errors from "../engine/Errors.js"
import * as FieldMask from "../engine/internal/lists/fieldMask.js"
import { commit, operations, orNotFound, trusted, unexpectedConflict } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import * as Uid from "../engine/Uid.js"
import * as Validation from "../engine/Validation.js"
import { atGroup } from "../iam/Authorization.js"
import * as Group from "../iam/Group.js"
import type { Principal } from "../iam/Principal.js"
import * as Import from "./Import.js"
import * as Readme from "./internal/readme.js"
import { upsertRepo, upsertTag } from "./internal/registry.js"
import * as RepoCatalog from "./internal/repoCatalog.js"
import * as Repo from "./Repo.js"
import * as RepoReadme from "./RepoReadme.js"
import * as Tag from "./Tag.js"

/** What a catalog import did. */
export interface CatalogReport {
  readonly repos: Import.Counts
  readonly tags: Import.Counts
  readonly failures: ReadonlyArray<Import.Failure>
}

/** Builds the Repos service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const repos = yield* Repository.make(Repo.table, Repo.Repo)
  const tags = yield* Repository.make(Tag.table, Tag.Tag)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const readmes = yield* Repository.make(RepoReadme.table, RepoReadme.Stored)
  const authorization = ops.authorization
  const kind: Resources.Kind<Repo.Repo> = {
    resourceType: "repo",
    repository: repos,
    permissions: Repo.permissions,
    groupOf: Resources.parentGroup
  }
  const spec: Lists.ListSpec<Repo.Repo> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: repos,
    capability: Repo.permissions.list,
    visibleAt: "parent",
    load: Lists.asIs
  }

  /** Deletes a repo's tags and its README. */
  const deleteContents = (repo: Repo.Repo) =>
    Effect.zipRight(
      tags.delete({ ranges: [Uid.descendants(repo.uid)] }),
      readmes.delete({ ranges: [Uid.only(repo.uid)] })
    )

  const service = {
    list: (principal: Principal, options: Lists.ListOptions = {}) =>
      operation("Repos.list")(Lists.list(ops, spec, principal, options)),

    get: (principal: Principal, uid: string) => operation("Repos.get")(Resources.get(ops, kind, principal, uid)),

    upsert: Effect.fnUntraced(function*(principal: Principal, groupUid: string, input: unknown) {
      const group = yield* Uid.parse(groupUid, "parent")
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, Repo.permissions.create, atGroup(group), grants)
      const fields = yield* Validation.decodeRequest(Repo.CreateRepo, Repo.fields)(input)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          yield* orNotFound(groups.get(group), "group", group)
          const [repo, outcome] = yield* upsertRepo(repos, group, fields, yield* DateTime.now)
          if (outcome === "updated") {
            yield* authorization.check(principal, Repo.permissions.update, Resources.targetOf(kind, repo.uid), grants)
          }
          return repo
        })
      )
    }, operation("Repos.upsert")),

    update: (
      principal: Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) =>
      operation("Repos.update")(Resources.update(ops, kind, principal, uid, {
        patch,
        updateMask,
        fields: Repo.fields,
        apply: (current, request) => {
          const { createTime: _c, uid: _u, updateTime: _t, ...input } = current
          return Validation.decodeRequest(Repo.CreateRepo, Repo.fields)(
            FieldMask.apply(input, request.body, request.mask, Repo.fields)
          )
            .pipe(
              Effect.map((fields) => new Repo.Repo({ ...current, ...fields, updateTime: request.updateTime }, trusted))
            )
        },
        duplicate: (next) => `a repo named '${next.name}' already exists beside ${next.uid}`
      })),

    delete: (principal: Principal, uid: string) =>
      operation("Repos.delete")(Resources.remove(ops, kind, principal, uid, { before: deleteContents })),

    readme: (principal: Principal, uid: string) =>
      operation("Repos.readme")(
        Effect.flatMap(Resources.get(ops, kind, principal, uid), (repo) =>
          Effect.map(readmes.get(repo.uid), (stored) =>
            new RepoReadme.RepoReadme({
              uid: repo.uid,
              content: stored._tag === "Some" ? stored.value.content : ""
            }, trusted)))
      ),

    updateReadme: Effect.fnUntraced(function*(
      principal: Principal,
      uid: string,
      patch: unknown,
      updateMask?: string
    ) {
      const repoUid = yield* Uid.parse(uid, "uid")
      const grants = yield* authorization.grants(principal)
      yield* authorization.check(principal, Repo.permissions.list, Resources.targetOf(kind, repoUid), grants)
      yield* authorization.check(principal, Repo.permissions.update, Resources.targetOf(kind, repoUid), grants)
      const body = yield* Validation.decodeRequest(
        Schema.Struct({ content: Schema.optional(Schema.String) }),
        RepoReadme.fields
      )(patch)
      const mask = yield* FieldMask.parse(updateMask, RepoReadme.fields)
      if (body.content !== undefined) yield* Readme.check(body.content)
      return yield* commit(
        ops,
        principal,
        Effect.gen(function*() {
          const repo = yield* orNotFound(repos.get(repoUid), "repo", repoUid)
          const current = yield* readmes.get(repo.uid)
          const before = current._tag === "Some" ? current.value.content : ""
          const next = FieldMask.apply({ content: before }, body, mask, RepoReadme.fields).content
          const content = typeof next === "string" ? next : ""
          if (current._tag === "None" ? content !== "" : before !== content) {
            const stored = new RepoReadme.Stored({ uid: repo.uid, content, updateTime: yield* DateTime.now }, trusted)
            yield* (current._tag === "None" ? readmes.insert(stored) : readmes.update(stored)).pipe(
              unexpectedConflict
            )
          }
          return new RepoReadme.RepoReadme({ uid: repo.uid, content }, trusted)
        })
      )
    }, operation("Repos.updateReadme")),

    importCatalog: Effect.fnUntraced(
      function*(principal: Principal, groupUid: string, catalog: unknown, options: Import.Options = {}) {
        const group = yield* Uid.parse(groupUid, "parent")
        const grants = yield* authorization.grants(principal)
        for (
          const capability of [
            Repo.permissions.create,
            Repo.permissions.update,
            Tag.permissions.create,
            Tag.permissions.update
          ] as const
        ) {
          yield* authorization.check(principal, capability, atGroup(group), grants)
        }
        if (!Array.isArray(catalog)) {
          return yield* Errors.InvalidArgument.field("catalog", "must be a JSON array of repos")
        }
        yield* orNotFound(groups.get(group), "group", group)
        const report = { repos: Import.counts(), tags: Import.counts(), failures: [] as Array<Import.Failure> }
        for (const [index, raw] of catalog.entries()) {
          const source = typeof raw?.name === "string" ? raw.name : `#${index}`
          const outcome = yield* Import.rejectedAsLeft(Effect.gen(function*() {
            const entry = yield* Schema.decodeUnknown(RepoCatalog.Entry)(raw)
            const fields = yield* Validation.decode(Repo.CreateRepo)(RepoCatalog.repoFields(entry))
            const tagFields = yield* Effect.forEach(entry.tags, (name) => Validation.decode(Tag.CreateTag)({ name }))
            return yield* commit(
              ops,
              principal,
              Effect.gen(function*() {
                const now = yield* DateTime.now
                const [repo, repoOutcome] = yield* upsertRepo(
                  repos,
                  group,
                  fields,
                  now,
                  RepoCatalog.firstSeen(entry)
                )
                const tagOutcomes = yield* Effect.forEach(tagFields, (t) => upsertTag(tags, repo, t, now))
                return [repoOutcome, tagOutcomes.map(([, o]) => o)] as const
              })
            )
          }))
          if (outcome._tag === "Left") {
            report.failures.push({ source, reason: outcome.left.message })
          } else {
            const [repoOutcome, tagOutcomes] = outcome.right
            report.repos[repoOutcome]++
            for (const o of tagOutcomes) report.tags[o]++
          }
          if (options.onProgress !== undefined) {
            yield* options.onProgress({ done: index + 1, total: catalog.length, source })
          }
        }
        return report as CatalogReport
      },
      operation("Repos.importCatalog")
    )
  }
  // A registry create is an upsert by name (docs/api.md §2): v1 and gRPC write repos and tags through it.
  const registry: ReposService = { ...service, create: service.upsert }
  return registry
})

/** The Repos service. A delete takes, atomically, the repo's tags and README. */
export interface ReposService extends ResourceService.Writable<Repo.Repo> {
  /** Creates the repo named in `input` in `groupUid`, or updates the existing one (`repo.update` then). */
  readonly upsert: (
    principal: Principal,
    groupUid: string,
    input: unknown
  ) => Effect.Effect<Repo.Repo, Errors.WriteFailure>
  /** The README of repo `uid` (`repo.list` at its group); empty when it has none. */
  readonly readme: (principal: Principal, uid: string) => Effect.Effect<RepoReadme.RepoReadme, Errors.ReadFailure>
  /**
   * Replaces the README of repo `uid` (`repo.update` at its group) with `patch.content` (`updateMask`: only
   * `content`, which a mask without it in the body clears). Refused, changing nothing, unless it is Markdown
   * whose HTML a sanitizer leaves as it is.
   */
  readonly updateReadme: (
    principal: Principal,
    uid: string,
    patch: unknown,
    updateMask?: string
  ) => Effect.Effect<RepoReadme.RepoReadme, Errors.WriteFailure>
  /**
   * Imports a catalog (a parsed JSON array like `repos.json`) into `groupUid`: each entry's repo and tags are
   * created or updated in one transaction, so a second import of the same catalog changes nothing. An entry
   * that does not validate is reported with its reason and nothing of it is imported. Tags are never deleted.
   */
  readonly importCatalog: (
    principal: Principal,
    groupUid: string,
    catalog: unknown,
    options?: Import.Options
  ) => Effect.Effect<CatalogReport, Errors.WriteFailure>
}

/** Repos: the registry's repositories. */
export class Repos extends Effect.Service<Repos>()("@arbor/core/Repos", { effect: make }) {}
