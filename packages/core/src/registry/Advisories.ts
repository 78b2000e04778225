/**
 * The Advisories service: list and get advisories, and import advisory documents into a group.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Errors from "../engine/Errors.js"
import { commit, operations, orNotFound, trusted, unexpectedConflict } from "../engine/internal/operations.js"
import * as Resources from "../engine/internal/resources.js"
import { operation } from "../engine/internal/tracing.js"
import * as Lists from "../engine/Lists.js"
import * as Repository from "../engine/Repository.js"
import type * as ResourceService from "../engine/ResourceService.js"
import type { Condition } from "../engine/Store.js"
import * as Uid from "../engine/Uid.js"
import * as Group from "../iam/Group.js"
import type { Principal } from "../iam/Principal.js"
import * as Advisory from "./Advisory.js"
import * as Import from "./Import.js"
import * as AdvisoryDocument from "./internal/advisoryDocument.js"

/** The list parameters of advisories: the common ones and the advisory filters, all combined with AND. */
export interface AdvisoryListOptions extends Lists.ListOptions {
  readonly advisoryIds?: ReadonlyArray<string> | undefined
  readonly packageNames?: ReadonlyArray<string> | undefined
  /** Advisories with any of these aliases. */
  readonly aliases?: ReadonlyArray<string> | undefined
  /** Advisories with an event of any of these types. */
  readonly eventTypes?: ReadonlyArray<string> | undefined
  readonly latestEventType?: string | undefined
  /** A case-insensitive substring of the package name, the advisory id or an alias. */
  readonly query?: string | undefined
}

/** One document to import: where it came from (a file name) and its text. */
export interface SourceDocument {
  readonly source: string
  readonly text: string
}

/** What an advisory import did. */
export interface DocumentsReport {
  readonly documents: number
  readonly advisories: Import.Counts
  readonly failures: ReadonlyArray<Import.Failure>
}

const isEventType = (s: string): s is Advisory.EventType => (Advisory.eventTypes as ReadonlyArray<string>).includes(s)

/** Advisory filters as store conditions. */
export const filters = (options: AdvisoryListOptions): Lists.Filters => {
  const conditions: Array<Condition> = []
  const violations: Array<Errors.FieldViolation> = []
  const checkTypes = (field: string, values: ReadonlyArray<string>) => {
    const bad = values.find((v) => !isEventType(v))
    if (bad !== undefined) {
      violations.push(
        new Errors.FieldViolation({
          field,
          description: `unknown event type '${bad}'; expected one of ${Advisory.eventTypes.join(", ")}`
        })
      )
    }
  }
  if (options.advisoryIds !== undefined) {
    conditions.push({ _tag: "In", column: "advisoryId", values: options.advisoryIds })
  }
  if (options.packageNames !== undefined) {
    conditions.push({ _tag: "In", column: "packageName", values: options.packageNames })
  }
  if (options.aliases !== undefined) conditions.push({ _tag: "Overlaps", column: "aliases", values: options.aliases })
  if (options.eventTypes !== undefined) {
    checkTypes("event_types", options.eventTypes)
    conditions.push({ _tag: "Overlaps", column: "eventTypes", values: options.eventTypes })
  }
  if (options.latestEventType !== undefined) {
    checkTypes("latest_event_type", [options.latestEventType])
    conditions.push({ _tag: "Equals", column: "latestEventType", value: options.latestEventType })
  }
  const query = options.query?.trim().toLowerCase()
  if (query !== undefined && query !== "") conditions.push({ _tag: "Contains", column: "search", value: query })
  return {
    conditions,
    violations,
    digest: [
      options.advisoryIds,
      options.packageNames,
      options.aliases,
      options.eventTypes,
      options.latestEventType,
      query
    ]
  }
}

/** The advisory as returned, without its search columns. */
const present = ({ eventTypes: _e, search: _s, ...record }: Advisory.Record) => new Advisory.Advisory(record, trusted)

const encodeEvents = Schema.encodeSync(Schema.Array(Advisory.Event))

/** An advisory record from a document's advisory. */
const toRecord = (
  uid: Uid.Uid,
  packageName: string,
  advisory: AdvisoryDocument.DocumentAdvisory,
  createTime: DateTime.Utc,
  updateTime: DateTime.Utc
): Advisory.Record => {
  const latest = advisory.events.reduce((a, b) => DateTime.lessThan(b.time, a.time) ? a : b)
  return {
    uid,
    advisoryId: advisory.advisoryId,
    packageName,
    aliases: advisory.aliases,
    events: advisory.events,
    latestEventType: latest.type,
    eventTypes: Advisory.eventTypes.filter((t) => advisory.events.some((e) => e.type === t)),
    search: Advisory.searchText({ ...advisory, packageName }),
    createTime,
    updateTime
  }
}

/** True when two advisories say the same thing. */
const same = (a: Advisory.Record, b: Advisory.Record) =>
  a.packageName === b.packageName && JSON.stringify(a.aliases) === JSON.stringify(b.aliases) &&
  JSON.stringify(encodeEvents(a.events)) === JSON.stringify(encodeEvents(b.events))

/** Builds the Advisories service from the services in its context; `Arbor.layer` builds it with the others. */
export const make = Effect.gen(function*() {
  const ops = yield* operations
  const advisories = yield* Repository.make(Advisory.table, Advisory.Record)
  const groups = yield* Repository.make(Group.table, Group.Group)
  const kind: Resources.Kind<Advisory.Record> = {
    resourceType: "advisory",
    repository: advisories,
    permissions: Advisory.permissions,
    groupOf: Resources.parentGroup
  }
  const spec: Lists.ListSpec<Advisory.Advisory, Advisory.Record> = {
    target: (uid) => Resources.targetOf(kind, uid),
    repository: advisories,
    capability: Advisory.permissions.list,
    visibleAt: "parent",
    load: (records) => Effect.succeed(records.map(present))
  }

  /** Writes one document's advisories into `group` and removes the package's advisories it no longer has. */
  const apply = (group: Uid.Uid, doc: AdvisoryDocument.Document) =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const counts = Import.counts()
      for (const advisory of doc.advisories) {
        const [existing] = yield* advisories.find({
          conditions: [{ _tag: "Equals", column: "parent", value: group }, {
            _tag: "Equals",
            column: "advisoryId",
            value: advisory.advisoryId
          }],
          order: [{ column: "uid", direction: "asc" }],
          limit: 1
        })
        if (existing === undefined) {
          const record = toRecord(Uid.makeChild(group), doc.packageName, advisory, now, now)
          yield* advisories.insert(record).pipe(unexpectedConflict)
          counts.created++
          continue
        }
        const record = toRecord(existing.uid, doc.packageName, advisory, existing.createTime, now)
        if (same(existing, record)) {
          counts.unchanged++
          continue
        }
        yield* advisories.update(record).pipe(unexpectedConflict)
        counts.updated++
      }
      const kept = new Set(doc.advisories.map((a) => a.advisoryId))
      const previous = yield* advisories.find({
        conditions: [{ _tag: "Equals", column: "parent", value: group }, {
          _tag: "Equals",
          column: "packageName",
          value: doc.packageName
        }],
        order: [{ column: "uid", direction: "asc" }]
      })
      const dropped = previous.filter((a) => !kept.has(a.advisoryId))
      if (dropped.length > 0) {
        yield* advisories.delete({ conditions: [{ _tag: "In", column: "uid", values: dropped.map((a) => a.uid) }] })
        counts.deleted += dropped.length
      }
      return counts
    })

  const service: AdvisoriesService = {
    list: (principal: Principal, options: AdvisoryListOptions = {}) =>
      operation("Advisories.list")(Lists.list(ops, spec, principal, options, filters(options))),

    get: (principal: Principal, uid: string) =>
      operation("Advisories.get")(Effect.map(Resources.get(ops, kind, principal, uid), present)),

    importDocuments: Effect.fnUntraced(function*(
      principal: Principal,
      groupUid: string,
      documents: ReadonlyArray<SourceDocument>,
      options: Import.Options = {}
    ) {
      const group = yield* Uid.parse(groupUid, "parent")
      if (principal._tag !== "System") {
        return yield* new Errors.PermissionDenied({ capability: "advisories.import", resource: group })
      }
      yield* orNotFound(groups.get(group), "group", group)
      const report = {
        documents: documents.length,
        advisories: Import.counts(),
        failures: [] as Array<Import.Failure>
      }
      for (const [index, document] of documents.entries()) {
        const parsed = AdvisoryDocument.parseDocument(document.source, document.text)
        if (Either.isLeft(parsed)) {
          report.failures.push({ source: document.source, reason: parsed.left })
        } else {
          const counts = yield* commit(ops, principal, apply(group, parsed.right))
          for (const key of ["created", "updated", "unchanged", "deleted"] as const) {
            report.advisories[key] += counts[key]
          }
        }
        if (options.onProgress !== undefined) {
          yield* options.onProgress({ done: index + 1, total: documents.length, source: document.source })
        }
      }
      return report as DocumentsReport
    }, operation("Advisories.importDocuments"))
  }
  return service
})

/** The Advisories service: read-only over the API, with the advisory filters; written by importing documents. */
export interface AdvisoriesService extends ResourceService.Readable<Advisory.Advisory, AdvisoryListOptions> {
  /**
   * Imports advisory documents into `groupUid`, each in one transaction: its advisories are created or updated
   * (matched by advisory id), and advisories of its package that it no longer lists are deleted, so importing
   * the same documents again changes nothing. A malformed document is reported with its reason and nothing of
   * it is imported. Only the system principal imports.
   */
  readonly importDocuments: (
    principal: Principal,
    groupUid: string,
    documents: ReadonlyArray<SourceDocument>,
    options?: Import.Options
  ) => Effect.Effect<DocumentsReport, Errors.WriteFailure>
}

/** Vulnerability advisories. */
export class Advisories extends Effect.Service<Advisories>()("@arbor/core/Advisories", { effect: make }) {}
