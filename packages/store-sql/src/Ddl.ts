/**
 * The schema written once: the core's table descriptors (`Store.Table`) are the schema, and each database renders
 * their DDL (`Renderer`). Released migrations are frozen text; a new table, column, unique key or index is declared in
 * its descriptor, and the statements of the next migration are the rendering of what the descriptors declare beyond
 * the migrated database (`plan`), which the stores' schema tests print when they differ. The same tests build one
 * database from the migrations and one from the rendering of every descriptor and require equal catalogs.
 */
import type { Store } from "@arbor/core"
import { constraintName, snake } from "./Dialect.js"

/** How a database writes the DDL of a descriptor. */
export interface Renderer {
  /** The statements creating `table` with its primary key and columns (no unique key or index). */
  readonly createTable: (table: Store.Table) => ReadonlyArray<string>
  /** The statement adding `column` (a key of the descriptor's columns) to `table`. */
  readonly addColumn: (table: Store.Table, column: string) => string
  /** The statement creating the unique key over `columns`, named as `Dialect.constraintName` names it. */
  readonly createUnique: (table: Store.Table, columns: ReadonlyArray<string>) => string
  /** The statement creating the index over `columns` (and `uid`), named `<table>__<columns>`. */
  readonly createIndex: (table: Store.Table, columns: ReadonlyArray<string>) => string
  /** Columns the rendering adds to `table` beyond its descriptor's (SQLite's `seq` behind a position). */
  readonly ownColumns: (table: Store.Table) => ReadonlyArray<string>
}

/** A table's columns in a database, in their order: name, then the database's own account of its type. */
export interface CatalogTable {
  readonly columns: ReadonlyArray<readonly [name: string, type: string]>
  /** Its unique keys and indexes by name, each as the database defines it. */
  readonly indexes: Readonly<Record<string, string>>
}

/** What a database holds, table by table (the migrations' own table left out). */
export type Catalog = Readonly<Record<string, CatalogTable>>

/** The name of the index over `columns` of `table`. */
export const indexName = (table: Store.Table, columns: ReadonlyArray<string>): string =>
  `${table.name}__${columns.map(snake).join("__")}`

/** Every statement that creates `table` as its descriptor declares it: the table, its unique keys, its indexes. */
export const create = (renderer: Renderer, table: Store.Table): ReadonlyArray<string> => [
  ...renderer.createTable(table),
  ...table.unique.map((columns) => renderer.createUnique(table, columns)),
  ...table.indexes.map((columns) => renderer.createIndex(table, columns))
]

/**
 * The statements that bring a database holding `catalog` to what `tables` declare: each table it lacks, each column,
 * unique key and index a table it has lacks. What the database has beyond the descriptors is not dropped: it is named
 * in `beyond`, for a migration to decide.
 */
export const plan = (
  renderer: Renderer,
  tables: ReadonlyArray<Store.Table>,
  catalog: Catalog
): { readonly statements: ReadonlyArray<string>; readonly beyond: ReadonlyArray<string> } => {
  const statements: Array<string> = []
  const beyond: Array<string> = []
  for (const table of tables) {
    const found = catalog[table.name]
    if (found === undefined) {
      statements.push(...create(renderer, table))
      continue
    }
    const columns = new Set(found.columns.map(([name]) => name))
    for (const column of Object.keys(table.columns)) {
      if (!columns.has(snake(column))) statements.push(renderer.addColumn(table, column))
    }
    const declared = new Set(["uid", "parent", ...Object.keys(table.columns).map(snake), ...renderer.ownColumns(table)])
    for (const [name] of found.columns) if (!declared.has(name)) beyond.push(`column ${table.name}.${name}`)
    const keys = [
      ...table.unique.map((columns) => [constraintName(table.name, columns), renderer.createUnique(table, columns)]),
      ...table.indexes.map((columns) => [indexName(table, columns), renderer.createIndex(table, columns)])
    ]
    for (const [name, statement] of keys) if (found.indexes[name!] === undefined) statements.push(statement!)
    const named = new Set([constraintName(table.name, ["uid"]), ...keys.map(([name]) => name)])
    for (const name of Object.keys(found.indexes)) if (!named.has(name)) beyond.push(`index ${name}`)
  }
  const known = new Set(tables.map((table) => table.name))
  for (const name of Object.keys(catalog)) if (!known.has(name)) beyond.push(`table ${name}`)
  return { statements, beyond }
}

/** The differences between two catalogs, one line each (empty when they are equal). */
export const differences = (expected: Catalog, actual: Catalog): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const name of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
    const [e, a] = [expected[name], actual[name]]
    if (e === undefined || a === undefined) {
      lines.push(`table ${name}: ${e === undefined ? "not expected" : "missing"}`)
      continue
    }
    // By name: a column added later stands after any the database keeps last (SQLite's `seq`), which reads the same.
    const byName = (columns: typeof e.columns) => JSON.stringify([...columns].sort(([x], [y]) => x < y ? -1 : 1))
    const [ec, ac] = [byName(e.columns), byName(a.columns)]
    if (ec !== ac) lines.push(`table ${name}: columns ${ac}, expected ${ec}`)
    for (const index of new Set([...Object.keys(e.indexes), ...Object.keys(a.indexes)])) {
      if (e.indexes[index] !== a.indexes[index]) {
        lines.push(`index ${index}: ${a.indexes[index] ?? "missing"}, expected ${e.indexes[index] ?? "none"}`)
      }
    }
  }
  return lines
}
