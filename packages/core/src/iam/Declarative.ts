/**
 * IAM as code (issue 45): an organization as a document of names and paths (folders, custom roles, identities,
 * role bindings, identity providers with their group mappings, subscriptions, the decision vocabulary), read from the engine (`exportOrganization`), compared with it (`plan`) and made true (`apply`),
 * every change through the engine's own services as the caller, so each rule of the API holds for each change as if
 * it were made by hand, and all of them in one transaction or none. The document is the test kit's fixture grown
 * (`@arbor/core/testing/Fixture`): YAML or JSON, e.g.
 *
 * ```yaml
 * organizations:
 *   acme:
 *     folders: { prod: { folders: { web: {} } }, staging: {} }
 *     roles: { deployer: [repo.create, repo.update, repo.list] }
 *     identities:
 *       prod/ci: { issuer: https://token.actions.githubusercontent.com, subject: "repo:acme/app:ref:refs/heads/main" }
 *     bindings:
 *       - { identity: prod/ci, role: deployer, group: prod }
 * ```
 *
 * An identity is keyed by its path below the organization (`prod/ci`), or by its name with its folder in `group`
 * (the fixture's spelling). Without `prune`, what the document leaves out is left alone.
 *
 * Here the service and its apply (one transaction, one apply of an organization at a time); in `declarative/` what a
 * plan reads and exports (`read`), the steps it plans (`plan`), the document as read (`document`), and the model of
 * both (`model`).
 */
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import * as Errors from "../engine/Errors.js"
import { operation } from "../engine/internal/tracing.js"
import { orInternal } from "../engine/Repository.js"
import * as Store from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import type { Document } from "./OrganizationDocument.js"
import type { Principal } from "./Principal.js"

import { decodeDocument } from "./declarative/document.js"
import {
  type Batched,
  byKey,
  type FolderCreate,
  type Options,
  type Plan,
  type Planned,
  runsOf,
  services,
  ValidatedOnly
} from "./declarative/model.js"
import { planner } from "./declarative/plan.js"
import { reader } from "./declarative/read.js"

export type { Change, Options, Plan } from "./declarative/model.js"

/** Builds the Declarative service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const engine = yield* services
  const { bindings, groups, identities, store } = engine
  const read = reader(engine)
  const { exportOrganization, stateOf } = read
  const { stepsOf } = planner(engine, read)

  /** The steps of every organization of the document, each beside the uids of what exists. */
  const stepsOfDocument = (principal: Principal, document: Document, options: Options) =>
    Effect.gen(function*() {
      const steps: Array<Planned> = []
      for (const [name, organization] of byKey(document.organizations)) {
        steps.push(yield* stepsOf(principal, name, organization, options))
      }
      return steps
    })

  const planOf = (steps: ReadonlyArray<Planned>): Plan => ({
    changes: steps.flatMap((organization) => organization.steps.map((step) => step.change)),
    etag: createHash("sha256").update(steps.map((organization) => organization.etag).join(",")).digest("hex")
      .slice(0, 32)
  })

  /** The refusal of an apply to `organization` while another is changing it, to retry once it ends. */
  const inProgress = (organization: string) =>
    new Errors.Aborted({
      description: `a document is being applied to the organization ${organization}: retry once it is done`,
      reason: "APPLY_IN_PROGRESS",
      retryAfterSeconds: 1
    })
  /** The organizations an apply of this process is changing now. */
  const applying = new Set<string>()
  /**
   * `effect`, while no other apply changes one of `organizations`; else `Aborted`, to retry once it ends: two applies
   * of one organization would each plan from what the other is about to change (and, on a store whose transactions
   * run concurrently, one would fail at commit having done all its work). Another apply of this process is seen
   * before `effect` starts its transaction; another server's, by `claims`, inside it.
   */
  const alone = <A, E, R>(organizations: ReadonlyArray<string>, effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.suspend(() => {
        const busy = organizations.find((name) => applying.has(name))
        if (busy !== undefined) return Effect.fail(inProgress(busy))
        organizations.forEach((name) => applying.add(name))
        return Effect.void
      }),
      () => effect,
      () => Effect.sync(() => organizations.forEach((name) => applying.delete(name)))
    )
  /** Inside the apply's transaction: each of `organizations` claimed for it, or `Aborted` (`alone`). */
  const claims = (organizations: ReadonlyArray<string>) =>
    Effect.forEach(
      organizations,
      (name) =>
        Effect.flatMap(store.claim(`arbor.apply:${name}`), (claimed) =>
          claimed ? Effect.void : Effect.fail(inProgress(name))),
      { discard: true }
    )

  /** Makes a batch of creates of one kind (`runsOf`). */
  const createBatch = (principal: Principal, uids: Map<string, Uid.Uid>, batch: ReadonlyArray<Batched>) => {
    const folders = batch.flatMap((created) => created._tag === "folder" ? [created] : [])
    const named = batch.flatMap((created) => created._tag === "identity" ? [created] : [])
    const bound = batch.flatMap((created) => created._tag === "binding" ? [created] : [])
    return Effect.all([
      createFolders(principal, uids, folders),
      named.length === 0 ? Effect.void : Effect.flatMap(
        Effect.forEach(named, (identity) => identity.resolve(uids)),
        (creations) =>
          Effect.map(
            identities.createMany(principal, creations),
            (created) => named.forEach((identity, i) => uids.set(`identity:${identity.path}`, created[i]!.uid))
          )
      ),
      bound.length === 0 ? Effect.void : Effect.flatMap(
        Effect.forEach(bound, (binding) => binding.resolve(uids)),
        (creations) => bindings.createMany(principal, creations)
      )
    ], { discard: true })
  }

  /**
   * Creates `folders` (parents first, as the plan lists them) a level at a time, each level in one write, and notes
   * each one's uid by its path.
   */
  const createFolders = (principal: Principal, uids: Map<string, Uid.Uid>, folders: ReadonlyArray<FolderCreate>) => {
    const levels = new Map<number, Array<FolderCreate>>()
    for (const folder of folders) {
      const depth = folder.path.split("/").length
      const level = levels.get(depth)
      if (level === undefined) levels.set(depth, [folder])
      else level.push(folder)
    }
    return Effect.forEach([...levels].sort(([a], [b]) => a - b), ([, level]) =>
      Effect.gen(function*() {
        const creations: Array<{ readonly parentUid: string; readonly input: FolderCreate["input"] }> = []
        for (const folder of level) {
          const parentUid = uids.get(folder.parent)
          if (parentUid === undefined) return yield* Errors.internal(`the plan made no ${folder.parent}`, "PLAN")
          creations.push({ parentUid, input: folder.input })
        }
        const created = yield* groups.createMany(principal, creations)
        level.forEach((folder, i) => uids.set(folder.path, created[i]!.uid))
      }), { discard: true })
  }

  const apply = (principal: Principal, input: unknown, options: Options = {}) =>
    operation("Declarative.apply")(Effect.flatMap(decodeDocument(input), (document) =>
      alone(
        Object.keys(document.organizations),
        orInternal(store.transaction(Effect.gen(function*() {
          yield* claims(Object.keys(document.organizations))
          const steps = yield* stepsOfDocument(principal, document, options)
          const plan = planOf(steps)
          if (options.etag !== undefined && options.etag !== plan.etag) {
            return yield* new Errors.Aborted({
              description: "the organization changed since the plan was made; plan again",
              reason: "ETAG_MISMATCH"
            })
          }
          // All or nothing: a step that fails fails the apply, so no step needs a savepoint of its own.
          yield* Store.asOneWhole(Effect.forEach(steps, (organization) => {
            const uids = new Map(organization.existing)
            return Effect.forEach(runsOf(organization.steps), (run) =>
              Array.isArray(run)
                ? createBatch(principal, uids, run)
                : run.run(uids).pipe(
                  Effect.catchTag("InvalidArgument", (e) => Effect.fail(run.at === undefined ? e : e.within(run.at)))
                ), { discard: true })
          }, { discard: true }))
          // validateOnly: every change made, as the caller, and undone, so each is refused as it would be.
          if (options.validateOnly === true) return yield* new ValidatedOnly({ plan })
          return plan
        }))).pipe(Effect.catchTag("ValidatedOnly", ({ plan }) => Effect.succeed(plan)))
      )))

  /** The organization of uid `uid`, as `principal` may get it; INVALID_ARGUMENT for a folder's uid. */
  const organizationAt = (principal: Principal, uid: string) =>
    Effect.flatMap(groups.get(principal, uid), (group) =>
      Uid.parentOrNull(group.uid) === null
        ? Effect.succeed(group)
        : Effect.fail(Errors.InvalidArgument.field("uid", "is a folder's: a document is applied to an organization")))

  const service: DeclarativeService = {
    exportAt: (principal: Principal, uid: string) =>
      Effect.flatMap(organizationAt(principal, uid), (org) => exportOrganization(principal, org.name)),

    applyAt: (principal: Principal, uid: string, document: unknown, options: Options = {}) =>
      Effect.gen(function*() {
        const org = yield* organizationAt(principal, uid)
        const named = typeof document === "object" && document !== null && "organizations" in document &&
            typeof document.organizations === "object" && document.organizations !== null
          ? Object.keys(document.organizations)
          : undefined
        if (named !== undefined && (named.length !== 1 || named[0] !== org.name)) {
          return yield* Errors.InvalidArgument.field("organizations", `must name this organization only: ${org.name}`)
        }
        return yield* apply(principal, document, options)
      }),

    uidsOf: (principal: Principal, name: string) =>
      Effect.map(stateOf(principal, name), (state) => ({
        groups: new Map<string, Uid.Uid>([
          ...(state.org === undefined ? [] : [["", state.org.uid] as const]),
          ...[...state.folders].map(([path, group]) => [path, group.uid] as const)
        ]),
        identities: new Map([...state.identities].map(([path, identity]) => [path, identity.uid] as const))
      })),

    exportOrganization: (principal: Principal, name: string) =>
      operation("Declarative.export")(exportOrganization(principal, name)),

    plan: (principal: Principal, document: unknown, options: Options = {}) =>
      operation("Declarative.plan")(
        Effect.map(
          Effect.flatMap(decodeDocument(document), (decoded) => stepsOfDocument(principal, decoded, options)),
          planOf
        )
      ),

    apply
  }
  return service
})

/**
 * IAM as code: an organization as a document (folders, roles, identities, bindings, providers, subscriptions, by
 * names and paths), exported, planned against what is, and applied in one transaction with every API rule.
 */
export interface DeclarativeService {
  /** The organization `name` as a document, as `principal` may list it. */
  readonly exportOrganization: (principal: Principal, name: string) => Effect.Effect<Document, Errors.ArborError>
  /** The organization of uid `uid` as a document (`exportOrganization`). */
  readonly exportAt: (principal: Principal, uid: string) => Effect.Effect<Document, Errors.ArborError>
  /** What applying `document` would change, as `principal`, without changing anything. */
  readonly plan: (principal: Principal, document: unknown, options?: Options) => Effect.Effect<Plan, Errors.ArborError>
  /**
   * Makes the document's organizations as it says, as `principal`: every change through the engine's services
   * (so each is refused as it would be made by hand), all in one transaction or none; answers the plan applied.
   */
  readonly apply: (principal: Principal, input: unknown, options?: Options) => Effect.Effect<Plan, Errors.ArborError>
  /**
   * `apply` of a document that names the organization of uid `uid` and no other (the API's
   * `POST /iam/v2beta1/groups/<uid>:apply`).
   */
  readonly applyAt: (
    principal: Principal,
    uid: string,
    document: unknown,
    options?: Options
  ) => Effect.Effect<Plan, Errors.ArborError>
  /**
   * The uids of organization `name`'s groups and identities by their paths below it (the organization's own
   * is ""), as `principal` may list them: what a document's names are, once applied.
   */
  readonly uidsOf: (principal: Principal, name: string) => Effect.Effect<{
    readonly groups: ReadonlyMap<string, Uid.Uid>
    readonly identities: ReadonlyMap<string, Uid.Uid>
  }, Errors.ArborError>
}

/** The Declarative service: export, plan and apply organizations as documents. */
export class Declarative extends Effect.Service<Declarative>()("@arbor/core/Declarative", { effect: make }) {}
