/**
 * How results are printed (`-o`): an aligned `table` (the default), `wide` (every column), `json` (the API's v2
 * JSON), `id` (one uid a line), `csv`, and `tree` (the group hierarchy, drawn by uid).
 */
import * as Schema from "effect/Schema"

/** The output formats. */
export const formats = ["table", "wide", "json", "id", "csv", "tree"] as const
export type Format = typeof formats[number]

/**
 * A column of a table: its heading, its value for a row, and whether only `wide` shows it, or a table only when a
 * row has a value in it (`whenSet`: a binding's end, which most have not).
 */
export interface Column<A> {
  readonly heading: string
  readonly value: (row: A) => string
  readonly wide?: boolean
  readonly whenSet?: boolean
}

/** How one kind of resource is printed. */
export interface Shape<A> {
  /** The API's JSON of a row. */
  readonly json: Schema.Schema<A, any>
  readonly columns: ReadonlyArray<Column<A>>
  /** For `tree`: the label of a row. */
  readonly label?: (row: A) => string
}

/** Columns narrower than this are never shortened to fit a terminal. */
const narrowest = 8

/**
 * The widths of a table's columns within `width` characters (a terminal's), from the widest column down: each
 * shortened no further than its heading or `narrowest`. Without a width (into a pipe), every cell whole.
 */
const fit = (widths: ReadonlyArray<number>, headings: ReadonlyArray<string>, width: number | undefined) => {
  const fitted = [...widths]
  if (width === undefined) return fitted
  const total = () => fitted.reduce((sum, w) => sum + w, 0) + 2 * (fitted.length - 1)
  while (total() > width) {
    const floor = (i: number) => Math.max(narrowest, headings[i]!.length)
    const widest = fitted.reduce((best, w, i) => w - floor(i) > fitted[best]! - floor(best) ? i : best, 0)
    if (fitted[widest]! <= floor(widest)) break
    fitted[widest] = Math.max(floor(widest), fitted[widest]! - (total() - width))
  }
  return fitted
}

/** `cell` within `width` characters: cut, ending with an ellipsis. */
const within = (cell: string, width: number) => cell.length <= width ? cell : `${cell.slice(0, width - 1)}…`

const table = <A>(rows: ReadonlyArray<A>, columns: ReadonlyArray<Column<A>>, width: number | undefined) => {
  const cells = [columns.map((c) => c.heading), ...rows.map((row) => columns.map((c) => c.value(row)))]
  const widths = fit(
    columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length))),
    columns.map((c) => c.heading),
    width
  )
  return cells.map((line) =>
    line.map((cell, i) => {
      const shown = within(cell, widths[i]!)
      return i === line.length - 1 ? shown : shown.padEnd(widths[i]!)
    }).join("  ").trimEnd()
  )
    .join("\n")
}

const csvCell = (cell: string) => /[",\n]/.test(cell) ? `"${cell.replace(/"/g, "\"\"")}"` : cell

/** Draws rows as a tree by their uids: a row's parent is the row whose uid its own extends by one segment. */
const tree = <A extends { readonly uid: string }>(rows: ReadonlyArray<A>, label: (row: A) => string) => {
  const uids = new Set(rows.map((r) => r.uid))
  const parentOf = (uid: string) => {
    for (let i = uid.lastIndexOf("/"); i > 0; i = uid.lastIndexOf("/", i - 1)) {
      if (uids.has(uid.slice(0, i))) return uid.slice(0, i)
    }
    return undefined
  }
  const children = new Map<string | undefined, Array<A>>()
  for (const row of rows) {
    const parent = parentOf(row.uid)
    children.set(parent, [...(children.get(parent) ?? []), row])
  }
  const lines: Array<string> = []
  const draw = (row: A, prefix: string, last: boolean, root: boolean) => {
    lines.push(root ? label(row) : `${prefix}${last ? "└── " : "├── "}${label(row)}`)
    const below = children.get(row.uid) ?? []
    below.forEach((child, i) =>
      draw(child, root ? "" : `${prefix}${last ? "    " : "│   "}`, i === below.length - 1, false)
    )
  }
  for (const root of children.get(undefined) ?? []) draw(root, "", true, true)
  return lines.join("\n")
}

/** What `id` prints of a row: a resource's uid, or the id of what has no uid (a change-log entry). */
type Identified = { readonly uid: string } | { readonly id: string }
const idOf = (row: Identified): string => "uid" in row ? row.uid : row.id

/** One row as a person reads one resource: a line per column, `HEADING:` then its value, every value whole. */
export const renderFields = <A>(row: A, shape: Shape<A>): string => {
  const width = Math.max(...shape.columns.map((c) => c.heading.length)) + 1
  return shape.columns.map((c) => `${`${c.heading}:`.padEnd(width)}  ${c.value(row)}`.trimEnd()).join("\n")
}

/** The JSON of one row, an object. */
export const renderObject = <A>(row: A, shape: Shape<A>): string =>
  JSON.stringify(Schema.encodeSync(shape.json)(row), null, 2)

/**
 * The text of `rows` in `format`; a table within `width` characters when given (a terminal's: its widest cells cut
 * short), else every cell whole.
 */
export const render = <A extends Identified>(
  rows: ReadonlyArray<A>,
  shape: Shape<A>,
  format: Format,
  width?: number
): string => {
  switch (format) {
    case "json":
      return JSON.stringify(rows.map((row) => Schema.encodeSync(shape.json)(row)), null, 2)
    case "id":
      return rows.map(idOf).join("\n")
    case "csv": {
      const columns = shape.columns
      return [columns.map((c) => c.heading), ...rows.map((row) => columns.map((c) => c.value(row)))]
        .map((line) => line.map(csvCell).join(",")).join("\n")
    }
    case "tree":
      return tree(rows.map((row) => ({ row, uid: idOf(row) })), ({ row, uid }) => shape.label?.(row) ?? uid)
    case "wide":
      return table(rows, shape.columns, width)
    case "table":
      return table(
        rows,
        shape.columns.filter((c) => c.wide !== true && (c.whenSet !== true || rows.some((row) => c.value(row) !== ""))),
        width
      )
  }
}
