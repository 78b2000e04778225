/**
 * What an exchange asks to narrow its API token to (`cap` and `scopes`; docs/api.md §8), read and checked.
 */
import * as Effect from "effect/Effect"
import { FieldViolation, InvalidArgument } from "../../engine/Errors.js"
import * as Uid from "../../engine/Uid.js"
import { fromName, normalize } from "../../iam/Capability.js"
import type { Narrowing } from "../../iam/Principal.js"

/** The narrowing an exchange request names. */
export interface Request {
  /** Narrows the API token to these capabilities (either spelling; `cap`). */
  readonly capabilities?: ReadonlyArray<string> | undefined
  /** Narrows the API token to these groups and those below them (uids; `scopes`). */
  readonly scopes?: ReadonlyArray<string> | undefined
}

/** The narrowing `request` asks for (undefined: none), each unknown capability and malformed uid named. */
export const read = (request: Request): Effect.Effect<Narrowing | undefined, InvalidArgument> => {
  const names = request.capabilities ?? []
  const capabilities = names.flatMap((name) => fromName(name) ?? [])
  const scopes = (request.scopes ?? []).filter(Uid.isUid)
  const violations = [
    ...names.filter((c) => fromName(c) === undefined).map((c) =>
      new FieldViolation({ field: "cap", description: `unknown capability ${JSON.stringify(c)}` })
    ),
    ...(request.scopes ?? []).filter((s) => !Uid.isUid(s)).map((s) =>
      new FieldViolation({ field: "scopes", description: `'${s}' is not a valid uid` })
    )
  ]
  const [first, ...rest] = violations
  if (first !== undefined) return Effect.fail(new InvalidArgument({ violations: [first, ...rest] }))
  if (capabilities.length === 0 && scopes.length === 0) return Effect.succeed(undefined)
  return Effect.succeed({
    ...(capabilities.length === 0 ? {} : { capabilities: normalize(capabilities) }),
    ...(scopes.length === 0 ? {} : { scopes: [...new Set(scopes)] })
  })
}
