/**
 * The caller of an operation: the engine itself (bootstrap, admin commands, embedders acting with full authority)
 * or an identity whose role bindings decide what it may do.
 */
import * as Data from "effect/Data"
import type { Act } from "./ChangeLog.js"
import type { Uid } from "./Uid.js"

/** Who is calling. */
export type Principal = Data.TaggedEnum<{
  /** Full authority, for in-process and bootstrap use; never derived from a token. */
  System: {}
  /**
   * An identity, authorized by its current role bindings; with how it signed in when its token says (the upstream
   * token it was exchanged for, a person's verified email), which the change log records of its writes.
   */
  Identity: { readonly uid: Uid; readonly act?: Act | undefined; readonly email?: string | undefined }
}>

const { Identity, System } = Data.taggedEnum<Principal>()

/** The system principal. */
export const system: Principal = System()

/** The principal of an identity, with how it signed in when known. */
export const identity = (
  uid: Uid,
  signedIn: { readonly act?: Act | undefined; readonly email?: string | undefined } = {}
): Principal => Identity({ uid, ...signedIn })
