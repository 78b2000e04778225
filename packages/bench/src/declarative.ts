/**
 * IAM as code at size (issue 45): a document of 1,000 folders, 200 identities and 2,000 bindings applied by
 * `Declarative.apply` to an empty SQLite store (one transaction), then planned again with nothing to change, and
 * exported (the reads a plan makes). The targets are absolute: apply < 10 s, re-plan < 1 s.
 */
import { Arbor, Declarative, Principal, Secrets } from "@arbor/core"
import { SqliteStore } from "@arbor/store-sqlite"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Figure } from "./Harness.js"
import { section } from "./Harness.js"

/** The document: 10 teams of 100 folders (`team-3/app-42`), an identity per 5 folders, 2,000 bindings. */
const documentOf = (scale: number) => {
  const teams = Math.max(1, Math.round(10 * scale))
  const folders: Record<string, { folders: Record<string, object> }> = {}
  const identities: Record<string, { issuer: string; subject: string }> = {}
  const bindings: Array<{ identity: string; role: string; group: string }> = []
  for (let t = 0; t < teams; t++) {
    const apps: Record<string, object> = {}
    for (let a = 0; a < 100; a++) apps[`app-${a}`] = {}
    folders[`team-${t}`] = { folders: apps }
    for (let i = 0; i < 20; i++) {
      const path = `team-${t}/app-${i * 5}/ci`
      identities[path] = {
        issuer: "https://token.actions.githubusercontent.com",
        subject: `repo:acme/t${t}-a${i}:ref:refs/heads/main`
      }
      for (let b = 0; b < 10; b++) {
        bindings.push({
          identity: path,
          role: b % 2 === 0 ? "viewer" : "editor",
          group: `team-${t}/app-${(i * 5 + b) % 100}`
        })
      }
    }
  }
  return { organizations: { acme: { folders, identities, bindings } } }
}

/** Runs the suite; returns its report section. */
export const run = async (scale: number): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "arbor-bench-declarative-"))
  const runtime = ManagedRuntime.make(
    Arbor.layer.pipe(
      Layer.provideMerge(SqliteStore.layer({ filename: join(dir, "declarative.db") })),
      Layer.provide(Secrets.layerEphemeral)
    )
  )
  try {
    const document = documentOf(scale)
    const declarative = await runtime.runPromise(Declarative.Declarative)
    const timed = async <A>(effect: Effect.Effect<A, unknown, never>) => {
      const started = performance.now()
      const result = await runtime.runPromise(effect)
      return { result, seconds: (performance.now() - started) / 1000 }
    }
    const applied = await timed(declarative.apply(Principal.system, document))
    const replanned = await timed(declarative.plan(Principal.system, document))
    const exported = await timed(declarative.exportOrganization(Principal.system, "acme"))
    if (replanned.result.changes.length !== 0) throw new Error("a re-plan found changes")
    const changes = applied.result.changes.length
    console.log(`apply ${changes} changes: ${applied.seconds.toFixed(2)} s; re-plan ${replanned.seconds.toFixed(2)} s`)
    const figures: Array<Figure> = [
      {
        name: `apply to an empty store (${changes} changes, one transaction)`,
        value: `${applied.seconds.toFixed(2)} s`,
        target: "< 10 s",
        met: applied.seconds < 10
      },
      {
        name: "plan again, nothing to change",
        value: `${replanned.seconds.toFixed(2)} s`,
        target: "< 1 s",
        met: replanned.seconds < 1
      },
      { name: "export", value: `${exported.seconds.toFixed(2)} s` }
    ]
    return section(
      "IAM as code (SQLite)",
      [
        "`Declarative.apply` of a document of 1,000 folders (10 teams of 100), 200 identities and 2,000 bindings to an",
        "empty SQLite store as the system, in one transaction; then `Declarative.plan` of the same document (nothing",
        "to change) and an export. Each change goes through the engine's services, as the API makes it."
      ],
      [],
      figures
    )
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
