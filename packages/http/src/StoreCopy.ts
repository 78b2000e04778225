/**
 * Moving a deployment to another store (SQLite to PostgreSQL): every row of every resource table, page by page in uid
 * order, and the change log in its own order (the target gives each entry its position anew, in the same order), then
 * the data directory's keys into the target's own tables, verified by counting each table on both sides.
 */
import type { Import } from "@arbor/core"
import { Arbor, ChangeLog, IdentityProvider, Sealing, Secrets, Store, TokenIssuer } from "@arbor/core"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"

const pageSize = 500

/** The tables copied, and the order each is read in (the last key the uid). */
const copied: ReadonlyArray<readonly [Store.Table, ReadonlyArray<string>]> = [
  ...Arbor.resourceTables.map((table) => [table, ["uid"]] as const),
  [ChangeLog.table, ["position", "uid"]]
]

/** The target holds a row already: copying into it would mix two deployments. */
export class TargetNotEmpty extends Error {}

/** Rows per table, as counted on both stores after the copy. */
export type Counts = ReadonlyArray<{ readonly table: string; readonly source: number; readonly target: number }>

/** The keys secrets were sealed under in the source, and those the target seals under. */
export interface Resealing {
  readonly from: Sealing.Keys
  readonly to: Sealing.Keys
}

/**
 * A row as the target keeps it: an identity provider's client secret opened with the source's keys and sealed again
 * under the target's.
 */
const resealed = (
  table: Store.Table,
  row: Store.Row,
  sealing: Resealing
) => {
  if (table.name !== IdentityProvider.table.name) return Effect.succeed(row)
  const oidc = row.oidc as { readonly clientSecret: string }
  return Effect.map(
    Sealing.open(sealing.from, oidc.clientSecret),
    (plain) => ({ ...row, oidc: { ...oidc, clientSecret: Sealing.seal(sealing.to, plain) } })
  )
}

/**
 * Copies every row from `source` to `target` (which must be empty), then the signing keys and the page-token key;
 * secrets sealed in rows are sealed again under the target's key (`sealing.to`); `progress` hears of each page.
 * Fails when a table's counts differ afterwards.
 */
export const copy = (options: {
  readonly source: Store.StoreService
  readonly target: Store.StoreService
  readonly signingKeys: TokenIssuer.SigningKeysService
  readonly secrets: Secrets.SecretsService
  readonly sealing: Resealing
  readonly progress: (table: string) => (progress: Import.Progress) => Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const { source, target } = options
    for (const table of Arbor.tables) {
      if ((yield* target.count(table, {})) > 0) {
        return yield* Effect.fail(
          new TargetNotEmpty(`the target already holds ${table.name}: copy into an empty database`)
        )
      }
    }
    for (const [table, keys] of copied) {
      const total = yield* source.count(table, {})
      const report = options.progress(table.name)
      const order = keys.map((column) => ({ column, direction: "asc" as const }))
      let done = 0
      let after: ReadonlyArray<Store.Scalar> | undefined
      yield* report({ done, total, source: table.name })
      while (done < total) {
        const rows = yield* source.find(table, { order, ...(after === undefined ? {} : { after }), limit: pageSize })
        if (rows.length === 0) break
        yield* target.transaction(
          Effect.forEach(
            rows,
            (row) => Effect.flatMap(resealed(table, row, options.sealing), (copied) => target.insert(table, copied)),
            { discard: true }
          )
        )
        done += rows.length
        const last = rows[rows.length - 1]!
        after = keys.map((column) => last[column] as Store.Scalar)
        yield* report({ done, total, source: table.name })
      }
    }
    const keys = yield* options.signingKeys.load
    yield* Effect.flatMap(TokenIssuer.SigningKeys, (stored) => stored.save(keys)).pipe(
      Effect.provide(TokenIssuer.SigningKeys.layerStore),
      Effect.zipRight(Secrets.writeStore(Redacted.value(options.secrets.pageTokenKey))),
      Effect.provideService(Store.Store, target)
    )
    const counts: Counts = yield* Effect.forEach(copied, ([table]) =>
      Effect.all({
        table: Effect.succeed(table.name),
        source: source.count(table, {}),
        target: target.count(table, {})
      }))
    const differ = counts.filter((c) => c.source !== c.target)
    if (differ.length > 0) {
      return yield* Effect.fail(new Error(`counts differ after the copy: ${JSON.stringify(differ)}`))
    }
    return counts
  })
