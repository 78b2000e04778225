import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Advisories, Arbor, Principal } from "../src/index.js"
import type { Progress } from "../src/registry/Import.js"
import * as AdvisoryDocument from "../src/registry/internal/advisoryDocument.js"
import * as Refusal from "../src/testing/Refusal.js"
import { organization, principalWith } from "./fixtures.js"

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

const fieldsOf = (e: unknown) =>
  (e as { violations?: ReadonlyArray<{ field: string }> }).violations?.map((v) => v.field)

/** Hand-written documents: every schema version and every event type and detection type. */
const documents = [
  {
    source: "advisories/tool.advisories.yaml",
    text: `schema-version: 2.0.2

package:
  name: tool

advisories:
  - id: CGA-2222-3333-4444
    aliases:
      - CVE-2024-0001
      - GHSA-cfgh-jmpq-rvwx
    events:
      - timestamp: 2024-01-01T00:00:00Z
        type: detection
        data:
          type: scan/v1
          data:
            subpackageName: tool
            componentID: 1a2b
            componentName: golang.org/x/net
            componentVersion: v0.1.0
            componentType: go-module
            componentLocation: /usr/bin/tool
            scanner: grype
      - timestamp: 2024-01-02T00:00:00Z
        type: fixed
        data:
          fixed-version: 1.2.3-r1
  - id: CGA-5555-6666-7777
    aliases:
      - GHSA-2345-6789-cfgh
    events:
      - timestamp: 2024-02-01T00:00:00Z
        type: detection
        data:
          type: nvdapi
          data:
            cpeSearched: cpe:2.3:a:*:tool:*:*:*:*:*:*:*:*
            cpeFound: cpe:2.3:a:acme:tool:*:*:*:*:*:*:*:*
      - timestamp: 2024-02-02T00:00:00Z
        type: true-positive-determination
      - timestamp: 2024-02-03T00:00:00Z
        type: pending-upstream-fix
        data:
          note: waiting on upstream
`
  },
  {
    source: "advisories/lib.advisories.yaml",
    text: `schema-version: "2"
package:
  name: lib
advisories:
  - id: CGA-8888-9999-cccc
    aliases: [CVE-2024-0002]
    events:
      - timestamp: 2024-03-01T00:00:00Z
        type: detection
        data: {type: manual}
      - timestamp: 2024-03-02T00:00:00Z
        type: false-positive-determination
        data:
          type: vulnerable-code-not-in-execution-path
          note: never called
  - id: CGA-ffff-gggg-hhhh
    aliases: [CVE-2024-0001]
    events:
      - timestamp: 2024-04-01T00:00:00Z
        type: analysis-not-planned
        data: {note: end of life}
`
  },
  {
    source: "advisories/old.advisories.yaml",
    text: `schema-version: 2.0.1
package:
  name: old
advisories:
  - id: CGA-jjjj-mmmm-pppp
    aliases: [CVE-2023-1234]
    events:
      - timestamp: 2023-05-01T00:00:00Z
        type: fix-not-planned
        data:
          note: not supported
`
  }
]

const importAll = (docs: ReadonlyArray<Advisories.SourceDocument>, progress?: Array<Progress>) =>
  Effect.gen(function*() {
    const org = yield* organization("acme")
    const report = yield* (yield* Advisories.Advisories).importDocuments(Principal.system, org.uid, docs, {
      onProgress: (p) => Effect.sync(() => progress?.push(p))
    })
    return { org, report }
  })

describe("Advisories", () => {
  it.effect("imports every schema version and event type; a second import changes nothing", () =>
    withArbor(Effect.gen(function*() {
      const progress: Array<Progress> = []
      const { org, report } = yield* importAll(documents, progress)
      assert.deepStrictEqual(report.failures, [])
      assert.deepStrictEqual(report.advisories, { created: 5, updated: 0, unchanged: 0, deleted: 0 })
      assert.deepStrictEqual(progress.map((p) => [p.done, p.total]), [[1, 3], [2, 3], [3, 3]])
      const advisories = yield* Advisories.Advisories
      const again = yield* advisories.importDocuments(Principal.system, org.uid, documents)
      assert.deepStrictEqual(again.advisories, { created: 0, updated: 0, unchanged: 5, deleted: 0 })

      const [tool] = (yield* advisories.list(Principal.system, { advisoryIds: ["CGA-2222-3333-4444"] })).items
      assert.strictEqual(tool!.packageName, "tool")
      assert.deepStrictEqual(tool!.aliases, ["CVE-2024-0001", "GHSA-cfgh-jmpq-rvwx"])
      assert.strictEqual(tool!.latestEventType, "fixed")
      assert.deepStrictEqual(tool!.events[0], {
        type: "detection",
        time: DateTime.unsafeMake("2024-01-01T00:00:00Z"),
        detection: {
          type: "scan/v1",
          scan: {
            subpackageName: "tool",
            componentId: "1a2b",
            componentName: "golang.org/x/net",
            componentVersion: "v0.1.0",
            componentType: "go-module",
            componentLocation: "/usr/bin/tool",
            scanner: "grype"
          }
        }
      })
      assert.deepStrictEqual(tool!.events[1], {
        type: "fixed",
        time: DateTime.unsafeMake("2024-01-02T00:00:00Z"),
        fixed: { fixedVersion: "1.2.3-r1" }
      })
      assert.deepStrictEqual(yield* advisories.get(Principal.system, tool!.uid), tool)
    })))

  it.effect("every filter, alone and combined", () =>
    withArbor(Effect.gen(function*() {
      yield* importAll(documents)
      const advisories = yield* Advisories.Advisories
      const ids = (options: Advisories.AdvisoryListOptions) =>
        Effect.map(advisories.list(Principal.system, { orderBy: "uid", ...options }), (p) =>
          p.items.map((a) => a.advisoryId).sort())
      assert.deepStrictEqual(yield* ids({ packageNames: ["lib", "old"] }), [
        "CGA-8888-9999-cccc",
        "CGA-ffff-gggg-hhhh",
        "CGA-jjjj-mmmm-pppp"
      ])
      assert.deepStrictEqual(yield* ids({ aliases: ["CVE-2024-0001"] }), ["CGA-2222-3333-4444", "CGA-ffff-gggg-hhhh"])
      assert.deepStrictEqual(yield* ids({ eventTypes: ["detection"] }), [
        "CGA-2222-3333-4444",
        "CGA-5555-6666-7777",
        "CGA-8888-9999-cccc"
      ])
      assert.deepStrictEqual(yield* ids({ latestEventType: "pending-upstream-fix" }), ["CGA-5555-6666-7777"])
      assert.deepStrictEqual(yield* ids({ query: "GHSA-CFGH" }), ["CGA-2222-3333-4444"])
      assert.deepStrictEqual(yield* ids({ query: "cga-jjjj" }), ["CGA-jjjj-mmmm-pppp"])
      assert.deepStrictEqual(yield* ids({ query: "li" }), ["CGA-8888-9999-cccc", "CGA-ffff-gggg-hhhh"])
      assert.deepStrictEqual(yield* ids({ query: "%" }), [])
      assert.deepStrictEqual(
        yield* ids({ eventTypes: ["detection"], packageNames: ["lib"], aliases: ["CVE-2024-0002"] }),
        [
          "CGA-8888-9999-cccc"
        ]
      )
      const bad = yield* Refusal.of(
        advisories.list(Principal.system, { eventTypes: ["exploded"], latestEventType: "x", pageSize: -1 })
      )
      assert.deepStrictEqual(fieldsOf(bad), ["page_size", "event_types", "latest_event_type"])
    })))

  it.effect("a malformed document is reported with its file and reason, and nothing of it is imported", () =>
    withArbor(Effect.gen(function*() {
      const broken = [
        { source: "bad/yaml.advisories.yaml", text: "schema-version: 2.0.2\npackage: [unclosed" },
        { source: "bad/version.advisories.yaml", text: "schema-version: 3\npackage: {name: version}\nadvisories: []" },
        {
          source: "bad/other.advisories.yaml",
          text: "schema-version: 2.0.2\npackage: {name: renamed}\nadvisories: []"
        },
        {
          source: "bad/event.advisories.yaml",
          text: documents[0]!.text.replace("package:\n  name: tool", "package:\n  name: event").replace(
            "type: fixed",
            "type: exploded"
          )
        },
        {
          source: "bad/dup.advisories.yaml",
          text: documents[2]!.text.replace("name: old", "name: dup") +
            "  - id: CGA-jjjj-mmmm-pppp\n    events:\n      - {timestamp: 2023-05-01T00:00:00Z, type: fixed, data: {fixed-version: 1-r0}}\n"
        },
        {
          source: "bad/time.advisories.yaml",
          text: documents[2]!.text.replace("name: old", "name: time").replace("2023-05-01T00:00:00Z", "May 1st")
        }
      ]
      const { org, report } = yield* importAll([...broken, documents[2]!])
      assert.deepStrictEqual(report.failures.map((f) => [f.source, f.reason.replace(/: .*/s, "")]), [
        ["bad/yaml.advisories.yaml", "is not valid YAML"],
        ["bad/version.advisories.yaml", "schema-version"],
        ["bad/other.advisories.yaml", "package.name"],
        ["bad/event.advisories.yaml", "advisories[0].events[1].type"],
        ["bad/dup.advisories.yaml", "advisories[1].id"],
        ["bad/time.advisories.yaml", "advisories[0].events[0].timestamp"]
      ])
      assert.strictEqual(report.advisories.created, 1, "the good document still imports")
      const all = yield* (yield* Advisories.Advisories).list(Principal.system, { descendantsOf: org.uid })
      assert.deepStrictEqual(all.items.map((a) => a.packageName), ["old"])
    })))

  it.effect("an updated document updates its advisories and drops those it no longer lists", () =>
    withArbor(Effect.gen(function*() {
      const { org } = yield* importAll(documents)
      const advisories = yield* Advisories.Advisories
      const updated = documents[1]!.text
        .replace("note: never called", "note: never called, verified")
        .replace(/ {2}- id: CGA-ffff-gggg-hhhh[\s\S]*$/, "")
      const report = yield* advisories.importDocuments(Principal.system, org.uid, [{
        source: "lib.advisories.yaml",
        text: updated
      }])
      assert.deepStrictEqual(report.advisories, { created: 0, updated: 1, unchanged: 0, deleted: 1 })
      const [lib] = (yield* advisories.list(Principal.system, { packageNames: ["lib"] })).items
      assert.deepStrictEqual(lib!.events[1], {
        type: "false-positive-determination",
        time: DateTime.unsafeMake("2024-03-02T00:00:00Z"),
        falsePositiveDetermination: { type: "vulnerable-code-not-in-execution-path", note: "never called, verified" }
      })
    })))

  it.effect("readers need advisories.list; only the system principal imports", () =>
    withArbor(Effect.gen(function*() {
      const { org } = yield* importAll(documents)
      const advisories = yield* Advisories.Advisories
      const viewer = yield* principalWith(org.uid, "viewer", "viewer")
      const puller = yield* principalWith(org.uid, "puller", "registry.pull")
      assert.strictEqual((yield* advisories.list(viewer)).totalCount, 5)
      assert.strictEqual((yield* advisories.list(puller)).totalCount, 0)
      const owner = yield* principalWith(org.uid, "owner", "owner")
      assert.strictEqual(
        (yield* Refusal.of(advisories.importDocuments(owner, org.uid, documents)))._tag,
        "PermissionDenied"
      )
    })))

  it("parses documents without touching a store", () => {
    const parsed = AdvisoryDocument.parseDocument("x.yaml", documents[0]!.text)
    assert.isTrue(Either.isRight(parsed))
    assert.strictEqual(Either.getOrThrow(parsed).advisories.length, 2)
  })
})
