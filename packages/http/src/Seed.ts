/**
 * `ARBOR_SEED_FILE`: a document of organizations (docs/api.md §15, YAML or JSON) applied as the system at every
 * start, after the first start's bootstrap, through `Declarative.apply`: one transaction, each change as the API makes
 * it. Applied again unchanged it changes nothing, so every start (and every server of several) may apply it. A
 * document that cannot be applied stops the start, saying why.
 */
import { Declarative, Errors, OrganizationDocument, Principal } from "@arbor/core"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { parse } from "yaml"
import type { ServerConfig } from "./ServerConfig.js"

/** Applies the seed file, if the configuration names one. */
export const run = (config: ServerConfig) =>
  Effect.gen(function*() {
    const file = config.seedFile
    if (file === undefined) return
    const document = yield* Effect.try({
      try: () => parse(readFileSync(file, "utf8")) as unknown,
      catch: (cause) =>
        Errors.InvalidArgument.field("ARBOR_SEED_FILE", `cannot be read as YAML or JSON: ${String(cause)}`)
    })
    const plan = yield* (yield* Declarative.Declarative).apply(Principal.system, document, {
      // The operator's own file: its secrets come from the server's own environment and files.
      secretOf: OrganizationDocument.readSecret
    })
    yield* Effect.logInfo(`applied the seed file: ${plan.changes.length} change(s)`).pipe(
      Effect.annotateLogs({ file, changes: plan.changes.length })
    )
  })
