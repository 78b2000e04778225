/**
 * The caller of an operation: the engine itself (bootstrap, admin commands, embedders acting with full authority)
 * or an identity whose role bindings decide what it may do.
 */
import * as Data from "effect/Data"
import type { Uid } from "./Uid.js"

/** Who is calling. */
export type Principal = Data.TaggedEnum<{
  /** Full authority, for in-process and bootstrap use; never derived from a token. */
  System: {}
  /** An identity, authorized by its current role bindings. */
  Identity: { readonly uid: Uid }
}>

const { Identity, System } = Data.taggedEnum<Principal>()

/** The system principal. */
export const system: Principal = System()

/** The principal of an identity. */
export const identity = (uid: Uid): Principal => Identity({ uid })
