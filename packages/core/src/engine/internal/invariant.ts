/** The shape of an invariant (DECISIONS §20): what each rule every write keeps says of itself (`invariants`). */
import type * as Effect from "effect/Effect"
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
