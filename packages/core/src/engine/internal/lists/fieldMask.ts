/**
 * Update masks (AIP-134, docs/api.md §5): which fields an update changes. Without a mask, the fields present in the
 * request; with one, exactly the fields it lists (camelCase or snake_case); `*` replaces every mutable field.
 */
import * as Effect from "effect/Effect"
import { FieldViolation, InvalidArgument } from "../../Errors.js"

/** A resource's fields, as an update sees them. */
export interface Fields {
  readonly mutable: ReadonlyArray<string>
  /** Set on create, never changed: an error in a mask. */
  readonly immutable: ReadonlyArray<string>
  /** Computed by the engine: ignored in a mask and in a request. */
  readonly outputOnly: ReadonlyArray<string>
  /** Mutable fields that `*` leaves as they are: changed only where named (a group's `verified`). */
  readonly namedOnly?: ReadonlyArray<string>
}

/** The fields an update changes: those present in the request (no mask), or the listed ones. */
export type FieldMask =
  | { readonly _tag: "Present" }
  | { readonly _tag: "Listed"; readonly fields: ReadonlyArray<string> }

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/** Parses `updateMask` against a resource's fields. */
export const parse = (mask: string | undefined, fields: Fields): Effect.Effect<FieldMask, InvalidArgument> => {
  const names = (mask ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
  if (names.length === 0) return Effect.succeed({ _tag: "Present" })
  const listed = new Set<string>()
  for (const raw of names) {
    if (raw === "*") {
      for (const f of fields.mutable) if (fields.namedOnly?.includes(f) !== true) listed.add(f)
      continue
    }
    const name = camel(raw)
    if (fields.mutable.includes(name)) listed.add(name)
    else if (fields.immutable.includes(name)) {
      return Effect.fail(InvalidArgument.field("updateMask", `field '${raw}' cannot be changed`))
    } else if (!fields.outputOnly.includes(name)) {
      return Effect.fail(InvalidArgument.field("updateMask", `unknown field '${raw}'`))
    }
  }
  return Effect.succeed({ _tag: "Listed", fields: [...listed] })
}

/**
 * Refuses a request's fields that are none of the resource's (AIP-203: output-only ones are ignored), naming each:
 * an update never drops a field it does not know, as a create never does (`Validation.decodeRequest`).
 */
export const known = (
  body: Readonly<Record<string, unknown>>,
  fields: Fields
): Effect.Effect<void, InvalidArgument> => {
  const unknown = Object.keys(body).filter((name) =>
    !fields.mutable.includes(name) && !fields.immutable.includes(name) && !fields.outputOnly.includes(name)
  )
  const [first, ...rest] = unknown.map((field) =>
    new FieldViolation({ field, description: "is not a field of this request" })
  )
  return first === undefined ? Effect.void : Effect.fail(new InvalidArgument({ violations: [first, ...rest] }))
}

/** The fields an update changes, given the request. */
export const changed = (
  patch: Readonly<Record<string, unknown>>,
  mask: FieldMask,
  fields: Fields
): ReadonlyArray<string> => mask._tag === "Listed" ? mask.fields : fields.mutable.filter((f) => patch[f] !== undefined)

/**
 * The new value of a resource's mutable fields: `current` (the resource as a create request would give it) with
 * the masked fields taken from `patch`; a listed field absent from `patch` is cleared (removed, so the create
 * schema's default applies).
 */
export const apply = (
  current: Readonly<Record<string, unknown>>,
  patch: Readonly<Record<string, unknown>>,
  mask: FieldMask,
  fields: Fields
): Record<string, unknown> => {
  const next: Record<string, unknown> = { ...current }
  for (const f of changed(patch, mask, fields)) {
    if (patch[f] === undefined) delete next[f]
    else next[f] = patch[f]
  }
  return next
}
