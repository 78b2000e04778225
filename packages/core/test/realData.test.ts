/**
 * The real public data sets (Wolfi advisories, the image catalog), read from `ARBOR_TEST_DATA`. Expectations are
 * computed here from the files themselves, independently of the importers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import { Advisories, Arbor, Principal, Repos, Tags } from "../src/index.js"
import type { Progress } from "../src/registry/Import.js"
import { organization } from "./fixtures.js"

const dataDir = process.env.ARBOR_TEST_DATA
const available = dataDir !== undefined && existsSync(join(dataDir, "advisories")) &&
  existsSync(join(dataDir, "repos.json"))

interface RawEvent {
  readonly timestamp: string
  readonly type: string
}
interface RawAdvisory {
  readonly id: string
  readonly aliases?: ReadonlyArray<string>
  readonly events: ReadonlyArray<RawEvent>
}
interface RawDocument {
  readonly package: { readonly name: string }
  readonly advisories: ReadonlyArray<RawAdvisory>
}
interface RawRepo {
  readonly name: string
  readonly tags: ReadonlyArray<string>
  readonly firstSeen: string | null
  readonly tier?: string
  readonly aliases?: ReadonlyArray<string>
}

const withArbor = <A, E>(effect: Effect.Effect<A, E, Arbor.Services>) => Effect.provide(effect, Arbor.layerMemory)

describe.runIf(available)("real data (ARBOR_TEST_DATA)", () => {
  const files = available ? readdirSync(join(dataDir!, "advisories")).filter((f) => f.endsWith(".yaml")).sort() : []
  const documents = files.map((f) => ({ source: f, text: readFileSync(join(dataDir!, "advisories", f), "utf8") }))
  const raw = documents.map((d) => ({ source: d.source, doc: parse(d.text) as RawDocument }))
  const rawAdvisories = raw.flatMap(({ doc }) => doc.advisories.map((a) => ({ ...a, packageName: doc.package.name })))

  it.live(
    "imports all 884 advisories of 217 files; values, every filter, and a second import that changes nothing",
    () =>
      withArbor(Effect.gen(function*() {
        const advisories = yield* Advisories.Advisories
        const org = yield* organization("wolfi")
        const progress: Array<Progress> = []
        const report = yield* advisories.importDocuments(Principal.system, org.uid, documents, {
          onProgress: (p) => Effect.sync(() => progress.push(p))
        })
        assert.deepStrictEqual(report.failures, [])
        assert.strictEqual(files.length, 217)
        assert.strictEqual(rawAdvisories.length, 884)
        assert.deepStrictEqual(report.advisories, { created: 884, updated: 0, unchanged: 0, deleted: 0 })
        assert.strictEqual(progress.length, 217)
        assert.deepStrictEqual(progress[216], { done: 217, total: 217, source: files[216]! })

        /** Every advisory matching `options`, sorted by id. */
        const ids = (options: Advisories.AdvisoryListOptions) =>
          Effect.gen(function*() {
            const out: Array<string> = []
            let pageToken: string | undefined
            do {
              const page = yield* advisories.list(Principal.system, { ...options, pageSize: 200, pageToken })
              out.push(...page.items.map((a) => a.advisoryId))
              pageToken = page.nextPageToken
            } while (pageToken !== undefined)
            return out.sort()
          })
        const expect = (f: (a: typeof rawAdvisories[number]) => boolean) =>
          rawAdvisories.filter(f).map((a) => a.id).sort()

        const everything = yield* advisories.list(Principal.system, { descendantsOf: org.uid, pageSize: 1 })
        assert.strictEqual(everything.totalCount, 884)
        const events = rawAdvisories.flatMap((a) => a.events)
        assert.strictEqual(events.length, 1348)

        // A sample of field values against the files: every advisory of three packages, event by event.
        for (const name of ["cups", "gcc-6", "mariadb-11.7", "grype"]) {
          const expected = raw.find((r) => r.doc.package.name === name)!.doc.advisories
          const page = yield* advisories.list(Principal.system, { packageNames: [name], pageSize: 200 })
          assert.strictEqual(page.totalCount, expected.length, name)
          for (const e of expected) {
            const a = page.items.find((x) => x.advisoryId === e.id)!
            assert.deepStrictEqual(a.aliases, e.aliases ?? [], e.id)
            assert.deepStrictEqual(a.events.map((x) => x.type), e.events.map((x) => x.type), e.id)
            assert.deepStrictEqual(
              a.events.map((x) => DateTime.formatIso(x.time).replace(".000Z", "Z")),
              e.events.map((x) => x.timestamp),
              e.id
            )
            assert.strictEqual(a.latestEventType, e.events[e.events.length - 1]!.type, e.id)
          }
        }

        // Every filter, against the files.
        const sample = rawAdvisories[123]!
        assert.deepStrictEqual(yield* ids({ advisoryIds: [sample.id] }), [sample.id])
        assert.deepStrictEqual(
          yield* ids({ packageNames: ["curl", "git"] }),
          expect((a) => a.packageName === "curl" || a.packageName === "git")
        )
        assert.deepStrictEqual(
          yield* ids({ aliases: ["CVE-2023-44487"] }),
          expect((a) => (a.aliases ?? []).includes("CVE-2023-44487"))
        )
        assert.isAtLeast((yield* ids({ aliases: ["CVE-2023-44487"] })).length, 3)
        for (
          const type of [
            "detection",
            "fixed",
            "false-positive-determination",
            "pending-upstream-fix",
            "true-positive-determination",
            "fix-not-planned"
          ]
        ) {
          assert.deepStrictEqual(
            yield* ids({ eventTypes: [type] }),
            expect((a) => a.events.some((e) => e.type === type)),
            type
          )
          assert.deepStrictEqual(
            yield* ids({ latestEventType: type }),
            expect((a) => a.events[a.events.length - 1]!.type === type),
            `latest ${type}`
          )
        }
        assert.deepStrictEqual(
          yield* ids({ query: "Cve-2024-3" }),
          expect((a) => [a.packageName, a.id, ...(a.aliases ?? [])].some((s) => s.toLowerCase().includes("cve-2024-3")))
        )
        assert.deepStrictEqual(yield* ids({ query: "nginx" }), expect((a) => a.packageName.includes("nginx")))

        const again = yield* advisories.importDocuments(Principal.system, org.uid, documents)
        assert.deepStrictEqual(again.advisories, { created: 0, updated: 0, unchanged: 884, deleted: 0 })
      })),
    { timeout: 300_000 }
  )

  it.live(
    "imports all 545 repos with their 37,097 tags; values, and a second import that changes nothing",
    () =>
      withArbor(Effect.gen(function*() {
        const catalog = JSON.parse(readFileSync(join(dataDir!, "repos.json"), "utf8")) as ReadonlyArray<RawRepo>
        const repos = yield* Repos.Repos
        const tags = yield* Tags.Tags
        const org = yield* organization("images")
        const progress: Array<Progress> = []
        const report = yield* repos.importCatalog(Principal.system, org.uid, catalog, {
          onProgress: (p) => Effect.sync(() => progress.push(p))
        })
        assert.deepStrictEqual(report.failures, [])
        assert.deepStrictEqual(report.repos, { created: 545, updated: 0, unchanged: 0, deleted: 0 })
        assert.deepStrictEqual(report.tags, { created: 37_097, updated: 0, unchanged: 0, deleted: 0 })
        assert.strictEqual(progress.length, 545)
        assert.strictEqual((yield* repos.list(Principal.system, { descendantsOf: org.uid })).totalCount, 545)
        assert.strictEqual((yield* tags.list(Principal.system, { descendantsOf: org.uid })).totalCount, 37_097)

        for (const name of ["nginx", "git", "airflow", "dotnet-sdk"]) {
          const expected = catalog.find((r) => r.name === name)!
          const [repo] = (yield* repos.list(Principal.system, { name })).items
          assert.strictEqual(repo!.catalogTier, expected.tier ?? "UNSPECIFIED", name)
          assert.deepStrictEqual(repo!.aliases, expected.aliases ?? [], name)
          if (expected.firstSeen !== null) {
            assert.strictEqual(DateTime.formatIso(repo!.createTime).replace(".000Z", "Z"), expected.firstSeen, name)
          }
          const listed = yield* tags.list(Principal.system, { childrenOf: repo!.uid, pageSize: 1, orderBy: "name" })
          assert.strictEqual(listed.totalCount, expected.tags.length, name)
          assert.strictEqual(listed.items[0]?.name, [...expected.tags].sort()[0], name)
          assert.strictEqual(listed.items[0]?.digest, Tags.syntheticDigest(name, listed.items[0]!.name), name)
        }

        const again = yield* repos.importCatalog(Principal.system, org.uid, catalog)
        assert.deepStrictEqual(again.repos, { created: 0, updated: 0, unchanged: 545, deleted: 0 })
        assert.deepStrictEqual(again.tags, { created: 0, updated: 0, unchanged: 37_097, deleted: 0 })
      })),
    { timeout: 300_000 }
  )
})
