/**
 * The caller of an operation: the engine itself (bootstrap, admin commands, embedders acting with full authority)
 * or an identity whose role bindings decide what it may do.
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import { isAncestorOrSelf, type Uid } from "../engine/Uid.js"
import type { Capability } from "./Capability.js"

/** The upstream token behind an exchanged token (its `act` claim), which its principal and its writes carry. */
export const Act = Schema.Struct({
  iss: Schema.String,
  sub: Schema.String,
  aud: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String)))
})
export type Act = typeof Act.Type

/**
 * What a token is narrowed to (the exchange's `cap` and `scopes`): only these capabilities, only in these groups and
 * below. Either may be absent (not narrowed that way); narrowing only ever takes away.
 */
export interface Narrowing {
  readonly capabilities?: ReadonlyArray<Capability> | undefined
  readonly scopes?: ReadonlyArray<Uid> | undefined
}

/** Who is calling. */
export type Principal = Data.TaggedEnum<{
  /** Full authority, for in-process and bootstrap use; never derived from a token. */
  System: {}
  /**
   * An identity, authorized by its current role bindings; with how it signed in when its token says (the upstream
   * token it was exchanged for, a person's verified email), which the change log records of its writes.
   */
  Identity: {
    readonly uid: Uid
    readonly act?: Act | undefined
    readonly email?: string | undefined
    /** When its token was narrowed: it may do only this much of what its bindings give. */
    readonly narrowed?: Narrowing | undefined
    /**
     * The external group role mappings its sign-in gave it (docs/api.md §13): their roles at their scopes, beside its
     * bindings, for this token only.
     */
    readonly mappings?: ReadonlyArray<Uid> | undefined
    /**
     * The organization's identity provider its sign-in came through: the token stops working once that provider's
     * SCIM client deprovisions the person (docs/api.md §13).
     */
    readonly provider?: Uid | undefined
  }
}>

const { Identity, System } = Data.taggedEnum<Principal>()

/** The system principal. */
export const system: Principal = System()

/** The principal of an identity, with how it signed in when known. */
export const identity = (
  uid: Uid,
  signedIn: {
    readonly act?: Act | undefined
    readonly email?: string | undefined
    readonly narrowed?: Narrowing | undefined
    readonly mappings?: ReadonlyArray<Uid> | undefined
    readonly provider?: Uid | undefined
  } = {}
): Principal => Identity({ uid, ...signedIn })

/**
 * True when `principal` is identity `uid` acting on itself with its whole authority: its own token, not a narrowed
 * one. DECISIONS §8: a narrowed token of a person never acts on their own identity (its metadata, its deletion, an
 * invite's redemption for it); every operation on one's own identity asks this one question.
 */
export const actsAsItself = (principal: Principal, uid: string): boolean =>
  principal._tag === "Identity" && principal.narrowed === undefined && principal.uid === uid

/**
 * True when `principal` is identity `uid` acting on its own standing at `group` (its own elevations and
 * eligibilities: reading them, asking for one) within what its token lets it do (DECISIONS §21, the one gate): its
 * own token, or one narrowed to a scope at or above `group` and to capabilities that include every one of
 * `capabilities`. A narrowing bounds every act of its token, these too.
 */
export const actsAsItselfAt = (
  principal: Principal,
  uid: string,
  group: Uid,
  capabilities: Iterable<Capability> = []
): boolean => {
  if (principal._tag !== "Identity" || principal.uid !== uid) return false
  const narrowed = principal.narrowed
  if (narrowed === undefined) return true
  if (narrowed.scopes !== undefined && !narrowed.scopes.some((scope) => isAncestorOrSelf(scope, group))) return false
  if (narrowed.capabilities === undefined) return true
  const kept = new Set(narrowed.capabilities)
  for (const capability of capabilities) if (!kept.has(capability)) return false
  return true
}
