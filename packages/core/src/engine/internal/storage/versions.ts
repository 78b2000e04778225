/**
 * Version rows: for a set of tables, a value that every write to them replaces in the same transaction, so that
 * a cache of what those tables hold tells whether it is current with one read of one row, in this process or in
 * any other on the same store. The value is random, never a counter: two writers that raced cannot leave the value a
 * reader already saw.
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type { StoreError, StoreService, Table } from "../../Store.js"
import { Store } from "../../Store.js"

/** The version rows: one per name, its uid the name. */
export const table: Table = {
  name: "versions",
  columns: { value: { type: "text" } },
  unique: [],
  indexes: []
}

/** The version of the tables that grants are read from: role bindings and roles. */
export const grants = "0000000000000000000000000000000000000001"

const fresh = () => globalThis.crypto.randomUUID()

/** The version rows of `store`: reading and replacing them there (no `Store` to provide on every call). */
export const of = (store: StoreService) => {
  /** Sets the row `name` to `value` (creating it the first time); `again` is the value if a racer made it first. */
  const write = (name: string, value: string, again: string): Effect.Effect<void, StoreError> => {
    const row = { uid: name, parent: null, value }
    return store.update(table, row).pipe(
      Effect.flatMap((updated) => updated ? Effect.void : store.insert(table, row)),
      // Two first writers raced to insert: write over the other's value.
      Effect.catchTag("UniqueViolation", () => store.update(table, { ...row, value: again })),
      // The table has no unique columns but its key, which an update keeps.
      Effect.catchTag("UniqueViolation", (e) => Effect.die(e)),
      Effect.asVoid
    )
  }
  /** The versions last read, each with the store's change marker read just before it. */
  const known = new Map<string, { readonly marker: unknown; readonly value: string }>()
  const read = (name: string): Effect.Effect<string, StoreError> =>
    Effect.map(store.get(table, name), Option.match({ onNone: () => "", onSome: (row) => String(row.value) }))
  return {
    /** Replaces the version `name` with a new value (creating its row the first time). */
    bump: (name: string): Effect.Effect<void, StoreError> => write(name, fresh(), fresh()),
    /** Sets the row `name` to `value`: a named value every process shares (not a version). */
    set: (name: string, value: string): Effect.Effect<void, StoreError> => write(name, value, value),
    /**
     * The current version `name`: its value, or "" before the first write. Read again only when the store's change
     * marker moved since the last read (or the store cannot tell): a version changes only by a write.
     */
    current: (name: string): Effect.Effect<string, StoreError> =>
      Effect.withFiberRuntime((fiber) => {
        const marker = store.changeMarker(fiber)
        const last = known.get(name)
        if (marker !== undefined && last !== undefined && last.marker === marker) return Effect.succeed(last.value)
        return Effect.map(read(name), (value) => {
          if (marker !== undefined) known.set(name, { marker, value })
          return value
        })
      }),
    /** The version `name` as last read, while the store's change marker for `fiber` says it cannot have changed. */
    unchanged: (name: string, fiber: Fiber.RuntimeFiber<unknown, unknown>): string | undefined => {
      const last = known.get(name)
      if (last === undefined) return undefined
      const marker = store.changeMarker(fiber)
      return marker !== undefined && last.marker === marker ? last.value : undefined
    }
  }
}

/** Replaces the version `name` with a new value (creating its row the first time). */
export const bump = (name: string): Effect.Effect<void, StoreError, Store> =>
  Effect.flatMap(Store, (store) => of(store).bump(name))

/** The current version `name`: its value, or "" before the first write. */
export const current = (name: string): Effect.Effect<string, StoreError, Store> =>
  Effect.flatMap(Store, (store) => of(store).current(name))
