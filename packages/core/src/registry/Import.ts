/**
 * What the importers report: counts of what changed, one failure per rejected source (a file, a catalog entry)
 * with its reason, and progress as they go.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import type { InvalidArgument } from "../engine/Errors.js"

/** Progress after each source. */
export interface Progress {
  readonly done: number
  readonly total: number
  /** The source just handled: a file name, a repo name. */
  readonly source: string
}

/** Options every importer takes. */
export interface Options {
  /** Called after each source, for progress bars. */
  readonly onProgress?: (progress: Progress) => Effect.Effect<void>
}

/** One source the importer rejected, and why; nothing from it was imported. */
export interface Failure {
  readonly source: string
  readonly reason: string
}

/** Counts of what an import did to one kind of resource. */
export interface Counts {
  created: number
  updated: number
  unchanged: number
  deleted: number
}

/** A fresh set of counts. */
export const counts = (): Counts => ({ created: 0, updated: 0, unchanged: 0, deleted: 0 })

/** Runs an import step, turning a rejection of its input (not a failure of the store) into a Left. */
export const rejectedAsLeft = <A, E extends { readonly _tag: string; readonly message: string }, R>(
  effect: Effect.Effect<A, E, R>
) =>
  Effect.either(effect).pipe(
    Effect.flatMap((result) =>
      Either.isLeft(result) && result.left._tag !== "ParseError" && result.left._tag !== "InvalidArgument"
        ? Effect.fail(result.left as Exclude<E, ParseResult.ParseError | InvalidArgument>)
        : Effect.succeed(result)
    )
  )
