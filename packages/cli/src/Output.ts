/**
 * How results are printed (`-o`): an aligned `table` (the default), `wide` (every column), `json` (the API's v2
 * JSON), `id` (one uid a line), `csv`, and `tree` (the group hierarchy, drawn by uid).
 */
import * as Schema from "effect/Schema"

/** The output formats. */
export const formats = ["table", "wide", "json", "id", "csv", "tree"] as const
export type Format = typeof formats[number]

/** A column of a table: its heading, its value for a row, and whether only `wide` shows it. */
export interface Column<A> {
  readonly heading: string
  readonly value: (row: A) => string
  readonly wide?: boolean
}

/** How one kind of resource is printed. */
export interface Shape<A> {
  /** The API's JSON of a row. */
  readonly json: Schema.Schema<A, any>
  readonly columns: ReadonlyArray<Column<A>>
  /** For `tree`: the label of a row. */
  readonly label?: (row: A) => string
}

const table = <A>(rows: ReadonlyArray<A>, columns: ReadonlyArray<Column<A>>) => {
  const cells = [columns.map((c) => c.heading), ...rows.map((row) => columns.map((c) => c.value(row)))]
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)))
  return cells.map((line) =>
    line.map((cell, i) => i === line.length - 1 ? cell : cell.padEnd(widths[i]!)).join("  ").trimEnd()
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

/** The text of `rows` in `format`. */
export const render = <A extends Identified>(
  rows: ReadonlyArray<A>,
  shape: Shape<A>,
  format: Format
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
      return table(rows, shape.columns)
    case "table":
      return table(rows, shape.columns.filter((c) => c.wide !== true))
  }
}
