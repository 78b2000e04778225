/**
 * The engine's invariants (DECISIONS §20): rules every write keeps, whatever surface or service made it, checked by
 * the repositories in the write's own transaction (`Repository`), so that no path can break one.
 */
import type * as Effect from "effect/Effect"
import { keepsAnOwner } from "../../iam/internal/ownership.js"
import type { FailedPrecondition } from "../Errors.js"
import type { Row, StoreError, StoreService } from "../Store.js"

/** A rule over the store that a write of one of `tables` may break. */
export interface Invariant {
  /** The tables whose writes may break it. */
  readonly tables: ReadonlyArray<string>
  /**
   * What a write of `rows` of `table` (each as it was before the write, and as it is after it) may break it for:
   * keys such as organizations' uids, none for writes that cannot.
   */
  readonly affected: (table: string, rows: ReadonlyArray<Row>) => ReadonlyArray<string>
  /** Whether it holds for `key` now, read in the current transaction. */
  readonly holds: (store: StoreService, key: string) => Effect.Effect<boolean, StoreError>
  /** The refusal of a write that would break it for `key`, which held before. */
  readonly broken: (key: string) => FailedPrecondition
}

/** Every invariant of the engine. */
const invariants: ReadonlyArray<Invariant> = [keepsAnOwner]

/** The invariants a write of `table` may break. */
export const invariantsOf = (table: string): ReadonlyArray<Invariant> =>
  invariants.filter((invariant) => invariant.tables.includes(table))
