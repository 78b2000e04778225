/**
 * SQLite's DDL of the core's table descriptors (`@arbor/store-sql`'s `Ddl`), and its catalog. Tables are `STRICT`;
 * booleans are integers and json is text. A unique key over `parent` of a table with roots (`Store.Table.roots`) is an
 * expression index on `ifnull(parent, '')`, so that null parents are equal, as on the other stores. A `position` column is generated from an
 * autoincrementing `seq`, which is then the table's primary key (`uid` stays unique): SQLite has one writer at a time,
 * so `seq` follows the order of commits.
 */
import type { Store } from "@arbor/core"
import type { Ddl } from "@arbor/store-sql"
import { Dialect } from "@arbor/store-sql"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

const types: Readonly<Record<Store.ColumnType, string>> = {
  text: "TEXT",
  integer: "INTEGER",
  boolean: "INTEGER",
  json: "TEXT",
  position: "TEXT"
}

const hasPosition = (table: Store.Table) => Object.values(table.columns).some((column) => column.type === "position")

const column = (name: string, { nullable, type }: Store.Column) =>
  type === "position"
    ? `${Dialect.snake(name)} TEXT NOT NULL GENERATED ALWAYS AS (printf('%040d', seq)) VIRTUAL`
    : `${Dialect.snake(name)} ${types[type]}${nullable === true ? "" : " NOT NULL"}`

const keyColumns = (table: Store.Table, columns: ReadonlyArray<string>) =>
  columns.map((name) => name === "parent" && table.roots === true ? "ifnull(parent, '')" : Dialect.snake(name))
    .join(", ")

/** SQLite's rendering of a descriptor. */
export const renderer: Ddl.Renderer = {
  createTable: (table) => {
    const sequenced = hasPosition(table)
    const columns = [
      sequenced ? "uid TEXT NOT NULL" : "uid TEXT PRIMARY KEY NOT NULL",
      "parent TEXT",
      ...Object.entries(table.columns).map(([name, declared]) => column(name, declared)),
      ...(sequenced ? ["seq INTEGER PRIMARY KEY AUTOINCREMENT"] : [])
    ]
    return [
      `CREATE TABLE ${table.name} (\n  ${columns.join(",\n  ")}\n) STRICT`,
      ...(sequenced
        ? [`CREATE UNIQUE INDEX ${Dialect.constraintName(table.name, ["uid"])} ON ${table.name} (uid)`]
        : [])
    ]
  },
  addColumn: (table, name) => `ALTER TABLE ${table.name} ADD COLUMN ${column(name, table.columns[name]!)}`,
  createUnique: (table, columns) =>
    `CREATE UNIQUE INDEX ${Dialect.constraintName(table.name, columns)} ON ${table.name} (${
      keyColumns(table, columns)
    })`,
  createIndex: (table, columns) =>
    `CREATE INDEX ${table.name}__${columns.map(Dialect.snake).join("__")} ON ${table.name} (${
      [...columns.map(Dialect.snake), "uid"].join(", ")
    })`,
  ownColumns: (table) => hasPosition(table) ? ["seq"] : []
}

/** What the database holds: each table's columns (type, constraints, generated) and its indexes' definitions. */
export const catalog: Effect.Effect<Ddl.Catalog, unknown, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`
    SELECT name FROM sqlite_schema
    WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'arbor_migrations' ORDER BY name`
  const entries = yield* Effect.forEach(tables, ({ name }) =>
    Effect.gen(function*() {
      const columns = yield* sql<{ name: string; type: string; notnull: number; pk: number; hidden: number }>`
        SELECT name, type, "notnull", pk, hidden FROM pragma_table_xinfo(${name}) ORDER BY cid`
      const indexes = yield* sql<{ name: string; sql: string | null }>`
        SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ${name} ORDER BY name`
      const described: Ddl.CatalogTable = {
        columns: columns.map((c) => [
          c.name,
          [c.type, c.notnull === 1 ? "NOT NULL" : "", c.pk > 0 ? "PRIMARY KEY" : "", c.hidden > 0 ? "GENERATED" : ""]
            .filter((part) => part !== "").join(" ")
        ]),
        // An index SQLite makes for a key of the table's own (`sqlite_autoindex_…`) has no statement.
        indexes: Object.fromEntries(
          indexes.flatMap((index) => index.sql === null ? [] : [[index.name, index.sql.replace(/\s+/g, " ")]])
        )
      }
      return [name, described] as const
    }))
  return Object.fromEntries(entries)
})
