/**
 * Advisory documents in the Wolfi YAML format (schema versions `2`, `2.0.1` and `2.0.2`): one package's advisories,
 * each a list of events. Parsing either yields the whole document or says exactly where and why it is malformed.
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import { parse } from "yaml"
import type { Event } from "../Advisory.js"
import { advisoryIdPattern, eventTypes } from "../Advisory.js"

/** One advisory of a document. */
export interface DocumentAdvisory {
  readonly advisoryId: string
  readonly aliases: ReadonlyArray<string>
  readonly events: ReadonlyArray<Event>
}

/** A parsed advisory document. */
export interface Document {
  readonly packageName: string
  readonly advisories: ReadonlyArray<DocumentAdvisory>
}

/** The schema versions read. */
export const schemaVersions = ["2", "2.0.1", "2.0.2"] as const

/** The false-positive determination types. */
export const falsePositiveTypes = [
  "vulnerable-code-not-included-in-package",
  "vulnerable-code-version-not-used",
  "vulnerability-record-analysis-contested",
  "component-vulnerability-mismatch",
  "vulnerable-code-cannot-be-controlled-by-adversary",
  "vulnerable-code-not-in-execution-path",
  "inline-mitigations-exist"
] as const

/** The largest document read. */
export const maxBytes = 4 * 1024 * 1024

class Malformed {
  constructor(readonly path: string, readonly reason: string) {}
}

const fail = (path: string, reason: string): never => {
  throw new Malformed(path, reason)
}

type Mapping = Readonly<Record<string, unknown>>

const isMapping = (x: unknown): x is Mapping => typeof x === "object" && x !== null && !Array.isArray(x)

const mapping = (x: unknown, path: string): Mapping => isMapping(x) ? x : fail(path, "must be a mapping")

const text = (x: unknown, path: string): string =>
  typeof x === "string" && x !== "" ? x : fail(path, "must be a non-empty string")

const optionalText = (x: unknown, path: string): string | undefined =>
  x === undefined || x === null ? undefined : text(x, path)

const list = (x: unknown, path: string): ReadonlyArray<unknown> => Array.isArray(x) ? x : fail(path, "must be a list")

const note = (data: unknown, path: string): { note?: string } => {
  if (data === undefined || data === null) return {}
  const n = optionalText(mapping(data, path).note, `${path}.note`)
  return n === undefined ? {} : { note: n }
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/

const timestamp = (x: unknown, path: string): DateTime.Utc => {
  const s = x instanceof Date ? x.toISOString() : x
  if (typeof s !== "string" || !rfc3339.test(s)) return fail(path, "must be an RFC 3339 timestamp")
  const t = DateTime.make(s)
  return t._tag === "Some" ? DateTime.toUtc(t.value) : fail(path, "must be an RFC 3339 timestamp")
}

const detection = (data: unknown, path: string): Extract<Event, { type: "detection" }>["detection"] => {
  const d = mapping(data, path)
  const type = d.type
  const inner = `${path}.data`
  switch (type) {
    case "manual":
      return { type }
    case "nvdapi": {
      const n = mapping(d.data, inner)
      return {
        type,
        nvdapi: {
          cpeSearched: text(n.cpeSearched, `${inner}.cpeSearched`),
          cpeFound: text(n.cpeFound, `${inner}.cpeFound`)
        }
      }
    }
    case "scan/v1": {
      const s = mapping(d.data, inner)
      const field = (key: string) => optionalText(s[key], `${inner}.${key}`)
      const scan = Object.fromEntries(
        ([
          ["subpackageName", field("subpackageName")],
          ["componentId", field("componentID")],
          ["componentName", field("componentName")],
          ["componentVersion", field("componentVersion")],
          ["componentType", field("componentType")],
          ["componentLocation", field("componentLocation")],
          ["scanner", field("scanner")]
        ] as const).filter(([, v]) => v !== undefined)
      )
      return { type, scan }
    }
    default:
      return fail(`${path}.type`, `unknown detection type ${JSON.stringify(type)}`)
  }
}

const event = (x: unknown, path: string): Event => {
  const e = mapping(x, path)
  const time = timestamp(e.timestamp, `${path}.timestamp`)
  const data = `${path}.data`
  switch (e.type) {
    case "detection":
      return { type: e.type, time, detection: detection(e.data, data) }
    case "true-positive-determination":
      return { type: e.type, time, truePositiveDetermination: note(e.data, data) }
    case "fixed":
      return {
        type: e.type,
        time,
        fixed: { fixedVersion: text(mapping(e.data, data)["fixed-version"], `${data}.fixed-version`) }
      }
    case "false-positive-determination": {
      const d = mapping(e.data, data)
      const type = text(d.type, `${data}.type`)
      if (!(falsePositiveTypes as ReadonlyArray<string>).includes(type)) {
        fail(`${data}.type`, `unknown false-positive determination type ${JSON.stringify(type)}`)
      }
      return { type: e.type, time, falsePositiveDetermination: { type, ...note(d, data) } }
    }
    case "analysis-not-planned":
      return { type: e.type, time, analysisNotPlanned: note(e.data, data) }
    case "fix-not-planned":
      return { type: e.type, time, fixNotPlanned: note(e.data, data) }
    case "pending-upstream-fix":
      return { type: e.type, time, pendingUpstreamFix: note(e.data, data) }
    default:
      return fail(
        `${path}.type`,
        `unknown event type ${JSON.stringify(e.type)}; expected one of ${eventTypes.join(", ")}`
      )
  }
}

/**
 * Parses the advisory document `content` read from `source` (a file name; when it ends in `.advisories.yaml`, its
 * prefix must be the document's package name). Either the whole document, or why it is malformed.
 */
export const parseDocument = (source: string, content: string): Either.Either<Document, string> => {
  try {
    if (content.length > maxBytes) return fail("", `is larger than ${maxBytes} bytes`)
    let root: unknown
    try {
      root = parse(content, { uniqueKeys: true, maxAliasCount: 100 })
    } catch (e) {
      return fail("", `is not valid YAML: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`)
    }
    const doc = mapping(root, "document")
    const version = String(doc["schema-version"])
    if (!(schemaVersions as ReadonlyArray<string>).includes(version)) {
      fail(
        "schema-version",
        `unsupported version ${JSON.stringify(doc["schema-version"])}; expected one of ${schemaVersions.join(", ")}`
      )
    }
    const packageName = text(mapping(doc.package, "package").name, "package.name")
    if (!/^[a-zA-Z0-9][a-zA-Z0-9._+-]{0,127}$/.test(packageName)) fail("package.name", "is not a package name")
    const base = source.split(/[\\/]/).pop() ?? source
    if (base.endsWith(".advisories.yaml") && base.slice(0, -".advisories.yaml".length) !== packageName) {
      fail("package.name", `'${packageName}' does not match the file name ${base}`)
    }
    const seen = new Set<string>()
    const advisories = list(doc.advisories ?? [], "advisories").map((x, i): DocumentAdvisory => {
      const path = `advisories[${i}]`
      const a = mapping(x, path)
      const advisoryId = text(a.id, `${path}.id`)
      if (!advisoryIdPattern.test(advisoryId)) {
        fail(`${path}.id`, `'${advisoryId}' is not an advisory id (CGA-xxxx-xxxx-xxxx)`)
      }
      if (seen.has(advisoryId)) fail(`${path}.id`, `'${advisoryId}' appears twice`)
      seen.add(advisoryId)
      const aliases = list(a.aliases ?? [], `${path}.aliases`).map((alias, j) => text(alias, `${path}.aliases[${j}]`))
      const events = list(a.events, `${path}.events`).map((e, j) => event(e, `${path}.events[${j}]`))
      if (events.length === 0) fail(`${path}.events`, "must hold at least one event")
      return { advisoryId, aliases, events }
    })
    return Either.right({ packageName, advisories })
  } catch (e) {
    if (e instanceof Malformed) return Either.left(e.path === "" ? e.reason : `${e.path}: ${e.reason}`)
    throw e
  }
}
