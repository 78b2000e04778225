/**
 * The engine's invariants (DECISIONS §20): rules every write keeps, whatever surface or service made it, checked by
 * the repositories in the write's own transaction (`Repository`), so that no path can break one.
 */
import { keepsAnOwner } from "../../iam/internal/ownership.js"
import type { Invariant } from "./invariant.js"

/** Every invariant of the engine. */
const invariants: ReadonlyArray<Invariant> = [keepsAnOwner]

/** The invariants a write of `table` may break. */
export const invariantsOf = (table: string): ReadonlyArray<Invariant> =>
  invariants.filter((invariant) => invariant.tables.includes(table))
